"""Checker of b04_pagination_off_by_one."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "paginate.py")
    run_original_tests(workspace, Path(__file__).parent, expect=6)
    run_python(
        workspace,
        "from paginate import get_page, page_count\n"
        "assert [page_count(n, 25) for n in (0, 1, 25, 26, 100)] == [0, 1, 1, 2, 4]\n"
        "assert page_count(7, 1) == 7, page_count(7, 1)\n"
        "p = get_page(list(range(10)), 2, 5)\n"
        "assert list(p.items) == [5, 6, 7, 8, 9] and not p.has_next, p\n"
        "empty = get_page([], 1)\n"
        "assert list(empty.items) == [] and empty.total_pages == 0, empty\n"
        "try:\n"
        "    get_page(list(range(10)), 3, 5)\n"
        "except ValueError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('page 3 of 10 items at 5 a page exists')\n",
    )
    return ok("the page count is right on exact multiples; the tests and hidden cases pass")
