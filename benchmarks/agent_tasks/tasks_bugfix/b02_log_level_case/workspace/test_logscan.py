from datetime import datetime

import pytest

from logscan import at_least, count_by_level, normalise_level, parse_line, parse_log

LOG = """\
2024-05-02 14:03:11 INFO [web] GET /cart 200
2024-05-02 14:03:12 WARNING [billing] card declined
Traceback (most recent call last):
  File "billing.py", line 12, in charge
2024-05-02 14:03:13 ERROR [billing] charge failed
2024-05-02 14:03:20 DEBUG [web] cache miss
""".splitlines()


def test_parse_line_reads_every_field():
    entry = parse_line("2024-05-02 14:03:11 INFO [web] GET /cart 200")
    assert entry is not None
    assert entry.when == datetime(2024, 5, 2, 14, 3, 11)
    assert entry.level == "INFO"
    assert entry.source == "web"
    assert entry.message == "GET /cart 200"


def test_lines_that_are_not_entries_are_skipped():
    assert parse_line('  File "billing.py", line 12, in charge') is None
    assert len(parse_log(LOG)) == 4


def test_aliases_are_resolved():
    assert normalise_level("WARN") == "WARNING"
    assert normalise_level("FATAL") == "CRITICAL"


def test_levels_written_in_lower_case():
    entry = parse_line("2024-05-02 14:05:00 error [mailer] SMTP timeout")
    assert entry is not None
    assert entry.level == "ERROR"


def test_unknown_level_is_refused():
    with pytest.raises(ValueError):
        normalise_level("LOUD")


def test_at_least_keeps_the_more_severe():
    entries = parse_log(LOG)
    assert [e.level for e in at_least(entries, "WARNING")] == ["WARNING", "ERROR"]


def test_count_by_level_lists_every_level():
    assert count_by_level(parse_log(LOG)) == {
        "DEBUG": 1,
        "INFO": 1,
        "WARNING": 1,
        "ERROR": 1,
        "CRITICAL": 0,
    }
