"""Checker of b02_log_level_case."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "logscan.py")
    run_original_tests(workspace, Path(__file__).parent, expect=7)
    run_python(
        workspace,
        "from logscan import at_least, normalise_level, parse_line, parse_log\n"
        "assert normalise_level('Warn') == 'WARNING', normalise_level('Warn')\n"
        "assert normalise_level(' critical ') == 'CRITICAL'\n"
        "e = parse_line('2024-06-01 08:00:00 Fatal [db] disk full')\n"
        "assert e is not None and e.level == 'CRITICAL', e\n"
        "log = ['2024-06-01 08:00:00 info [a] x', '2024-06-01 08:00:01 debug [a] y']\n"
        "assert [x.level for x in at_least(parse_log(log), 'info')] == ['INFO']\n",
    )
    return ok("levels are read in any case; the tests and the hidden cases pass")
