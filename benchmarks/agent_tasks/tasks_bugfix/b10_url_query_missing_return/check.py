"""Checker of b10_url_query_missing_return."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "urlbuild.py")
    run_original_tests(workspace, Path(__file__).parent, expect=6)
    run_python(
        workspace,
        "from datetime import date\n"
        "from urlbuild import build_url, query_value\n"
        "assert query_value((1, 2, 3)) == '1,2,3', query_value((1, 2, 3))\n"
        "assert query_value([date(2024, 1, 2), False]) == '2024-01-02,false'\n"
        "url = build_url('https://h/api', 'items', ids=(7, 9), tag=['a b'])\n"
        "assert url == 'https://h/api/items?ids=7,9&tag=a%20b', url\n",
    )
    return ok("list values are joined; the tests and the hidden cases pass")
