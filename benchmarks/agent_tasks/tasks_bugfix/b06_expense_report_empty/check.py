"""Checker of b06_expense_report_empty."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "src/expenses/report.py")
    run_original_tests(workspace, Path(__file__).parent, expect=7)
    run_python(
        workspace,
        "sys.path.insert(0, 'src')\n"
        "from decimal import Decimal as D\n"
        "from expenses.report import by_category, report, summarise\n"
        "assert by_category('date,category,amount\\n\\n') == {}\n"
        "assert report('').splitlines()[-1].split() == ['TOTAL', '0', '0.00', '0.00', '0.00']\n"
        "s = summarise([D('5'), D('2.5')])\n"
        "assert (s.count, s.total, s.average, s.largest) == (2, D('7.50'), D('3.75'), D('5.00'))\n"
        "z = summarise([])\n"
        "assert (z.count, z.total, z.average, z.largest) == (0, 0, 0, 0), z\n",
    )
    return ok("an empty export gives a report of zeros; the tests and hidden cases pass")
