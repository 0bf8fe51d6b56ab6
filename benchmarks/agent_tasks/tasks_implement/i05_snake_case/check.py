"""Checker of i05_snake_case."""

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
    parse_python(workspace, "names.py")
    unchanged(workspace, Path(__file__).parent, "test_names.py")
    run_python(
        workspace,
        "from names import to_snake as s\n"
        "assert s('parseJSONData') == 'parse_json_data', s('parseJSONData')\n"
        "assert s('Version2Name') == 'version2_name', s('Version2Name')\n"
        "assert s('ID') == 'id', s('ID')\n",
    )
    run_pytest(workspace, "test_names.py", expect=3)
    return ok("the tests and the hidden cases pass")
