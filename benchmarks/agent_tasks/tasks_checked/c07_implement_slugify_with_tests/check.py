"""Checker of c07_implement_slugify_with_tests (hidden cases beyond the workspace's tests)."""

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
    parse_python(workspace, "text.py")
    unchanged(workspace, Path(__file__).parent, "tests/test_text.py")
    run_python(
        workspace,
        "from text import slugify\n"
        "cases = {'C++ & Python 3.12': 'c-python-3-12', '': '', '---': '',"
        " 'Already-a-slug': 'already-a-slug', 'Ünïcode café': 'n-code-caf',"
        " 'MiXeD 42 Case': 'mixed-42-case'}\n"
        "for given, want in cases.items():\n"
        "    assert slugify(given) == want, (given, slugify(given), want)\n",
    )
    run_pytest(workspace, "tests", expect=3)
    return ok("slugify passes the workspace's tests and the hidden cases")
