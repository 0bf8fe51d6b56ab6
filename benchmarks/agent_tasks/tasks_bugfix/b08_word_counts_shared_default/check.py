"""Checker of b08_word_counts_shared_default."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "wordfreq.py")
    run_original_tests(workspace, Path(__file__).parent, expect=6)
    run_python(
        workspace,
        "from collections import Counter\n"
        "from wordfreq import count_words\n"
        "for _ in range(3):\n"
        "    c = count_words('ferry timetable ferry')\n"
        "    assert c == Counter({'ferry': 2, 'timetable': 1}), c\n"
        "assert count_words('') == Counter(), count_words('')\n"
        "assert count_words('x y', stop_words=()) == Counter({'x': 1, 'y': 1})\n"
        "total = Counter()\n"
        "assert count_words('a tram', total) is total and total == Counter({'tram': 1})\n",
    )
    return ok("each call without a running total starts from zero; tests and hidden cases pass")
