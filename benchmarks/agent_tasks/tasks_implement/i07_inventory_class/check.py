"""Checker of i07_inventory_class."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    Verdict,
    ok,
    parse_python,
    run_pytest,
    run_python,
    unchanged,
)


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "inventory.py")
    unchanged(workspace, Path(__file__).parent, "test_inventory.py")
    run_python(
        workspace,
        "from inventory import Inventory\n"
        "s = Inventory()\n"
        "s.add('a', 2)\n"
        "s.remove('a', 2)\n"
        "assert s.count('a') == 0 and 'a' not in s._counts, s._counts\n"
        "try:\n"
        "    s.add('b', 0)\n"
        "except ValueError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('add of 0 accepted')\n"
        "try:\n"
        "    s.remove('zzz')\n"
        "except ValueError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('remove of an unknown item accepted')\n",
    )
    run_pytest(workspace, "test_inventory.py", expect=3)
    return ok("the tests and the hidden cases pass")
