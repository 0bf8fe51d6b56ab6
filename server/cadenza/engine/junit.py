"""pytest's own report of a run, beside what the run printed (``--junitxml``).

When Cadenza builds the pytest command itself (``testsuite.SuiteCommand.junit``), each run
asks pytest for its JUnit XML report in a private temporary folder outside the workspace
(``ReportFile``), and the verdict takes the report's counts: a run's last line and exit status
can be forged by the code under test (an ``atexit`` hook that prints ``3 passed`` and calls
``os._exit(0)``; an ``os._exit(5)`` at import, pytest's "no tests collected"), while pytest
writes the report when its session ends, from its own results. That code runs in pytest's own
process and could write a report too: the cross-check raises the bar, it is not a proof.

The report is written by a process running the workspace's code, so it is read as hostile: a
regular file of at most ``MAX_REPORT_BYTES``, parsed by expat with no document type declaration
allowed (no entity can be declared, so none expands: no XML bomb), and only ``testcase``
elements and their direct ``failure`` / ``error`` / ``skipped`` children are counted.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePath
from xml.parsers import expat

MAX_REPORT_BYTES = 50_000_000
"""A report larger than this is not read (pytest's own for ten thousand tests is a few MB)."""

CHUNK_BYTES = 1 << 20

OPTION = "--junitxml="
"""pytest's option naming the report file; the last one given wins, so it overrides addopts."""

PREFIX = "cadenza-pytest-"
"""How the report folders are named (``base_command`` knows the option by it)."""

NO_REPORT = "the test run ended before pytest wrote its report"
"""Why there is no report after a run that should have one (pytest writes it at its end, even
when it found no test)."""

OUTCOMES = ("failure", "error", "skipped")
"""A ``testcase`` child that says it did not pass (none: it passed)."""


@dataclass(frozen=True, kw_only=True)
class Junit:
    """What pytest's report counts, one per ``testcase`` element.

    A test whose call failed and whose teardown then erred is two, as in pytest's own counts
    (``1 failed, 1 error``).

    Attributes:
        passed: Test cases without a failure, an error or a skip (xpassed ones included).
        failed: Test cases with a failure.
        errors: Test cases with an error (setup, teardown, collection).
        skipped: Test cases skipped (xfailed ones included).
        skipped_in_code: Where a skip was raised from a file that is not a test file (the
            skip's ``path:line``), the first one; "" none. A test belongs to the tests: code
            under test that skips the test calling it (``pytest.skip`` when its answer is
            wrong) would make a failing run pass.
    """

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    skipped_in_code: str = ""

    @property
    def ran(self) -> int:
        """Test cases that ran (skipped ones did not)."""
        return self.passed + self.failed + self.errors

    @property
    def passes(self) -> bool:
        """Some test ran and none failed or erred."""
        return self.ran > 0 and self.failed == self.errors == 0

    @property
    def counts(self) -> dict[str, int]:
        """The counts as pytest's last line names them (``test_report.TestReport.counts``)."""
        named = {
            "failed": self.failed,
            "passed": self.passed,
            "skipped": self.skipped,
            "error" if self.errors == 1 else "errors": self.errors,
        }
        return {what: n for what, n in named.items() if n}

    @property
    def summary(self) -> str:
        """``1 failed, 2 passed`` (``no test`` when it counts none)."""
        return ", ".join(f"{n} {what}" for what, n in self.counts.items()) or "no test"


class ReportFile:
    """A private temporary folder (outside the workspace) for one run's report.

    ``close`` removes it.
    """

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix=PREFIX))
        self.path = self.folder / "report.xml"

    def command(self, command: str) -> str:
        """``command`` asking pytest for its report in this folder."""
        return f"{command} {shlex.quote(OPTION + str(self.path))}"

    def read(self) -> Junit | str:
        """The report's counts, or why there are none (``NO_REPORT``, or why it is unreadable)."""
        return read_junit(self.path)

    def close(self) -> None:
        """Remove the folder and what the run left in it."""
        shutil.rmtree(self.folder, ignore_errors=True)


@contextmanager
def report_file(wanted: bool) -> Iterator[ReportFile | None]:
    """A ``ReportFile`` for the run when ``wanted`` (None otherwise), removed afterwards."""
    report = ReportFile() if wanted else None
    try:
        yield report
    finally:
        if report is not None:
            report.close()


_ADDED = re.compile(r" '?" + re.escape(OPTION) + r"[^\n]*/" + PREFIX + r"[^/\s']+/report\.xml'?\Z")


def base_command(command: str) -> str:
    """``command`` without the report option ``ReportFile.command`` added.

    That is the command as the person allowed it (``testsuite.suite_command``'s).
    """
    return _ADDED.sub("", command, count=1)


class _Refused(Exception):
    """The report declares a document type (where entities are declared): not read."""


class _Tally:
    """Counts ``testcase`` elements by their direct children, as expat reports them."""

    def __init__(self) -> None:
        self.depth = 0
        self.case_depth = 0  # the open testcase's depth (0: none open)
        self.outcome = ""
        self.suites = 0
        self.tally = {"passed": 0, "failure": 0, "error": 0, "skipped": 0}
        self.skip_text: list[str] | None = None  # the open skipped element's text
        self.skipped_in_code = ""

    def start(self, name: str, _attributes: dict[str, str]) -> None:
        self.depth += 1
        if name == "testsuite":
            self.suites += 1
        elif name == "testcase" and not self.case_depth:
            self.case_depth, self.outcome = self.depth, ""
        elif (
            self.case_depth
            and self.depth == self.case_depth + 1
            and name in OUTCOMES
            and self.outcome in ("", "skipped")  # a failure or an error outweighs a skip
        ):
            self.outcome = name
            if name == "skipped":
                self.skip_text = []

    def text(self, data: str) -> None:
        if self.skip_text is not None and sum(map(len, self.skip_text)) < MAX_SKIP_CHARS:
            self.skip_text.append(data)

    def end(self, name: str) -> None:
        if name == "skipped" and self.skip_text is not None:
            where = skip_place("".join(self.skip_text)[:MAX_SKIP_CHARS])
            if where and not self.skipped_in_code and not is_test_path(where):
                self.skipped_in_code = where
            self.skip_text = None
        if self.depth == self.case_depth:
            self.tally[self.outcome or "passed"] += 1
            self.case_depth = 0
        self.depth -= 1

    def counted(self) -> Junit:
        t = self.tally
        return Junit(
            passed=t["passed"],
            failed=t["failure"],
            errors=t["error"],
            skipped=t["skipped"],
            skipped_in_code=self.skipped_in_code,
        )


MAX_SKIP_CHARS = 2_000
_SKIP_PLACE = re.compile(r"^\s*(?P<where>(?P<path>[^\n]+?\.py):\d+):")


def skip_place(text: str) -> str:
    """The ``path:line`` a skip's text starts with (pytest writes it there), or ""."""
    found = _SKIP_PLACE.match(text)
    return found["where"] if found else ""


TEST_FOLDERS = frozenset({"tests", "test", "testing"})
INSTALLED = frozenset({"site-packages", "dist-packages"})


def is_test_path(where: str) -> bool:
    """Whether ``path:line`` lies with the tests, not the code.

    A test module, a ``conftest.py``, a file in a tests folder (a helper of theirs), or an
    installed package (a plugin).
    """
    path = PurePath(where.rsplit(":", 1)[0])
    if TEST_FOLDERS & set(path.parts[:-1]) or INSTALLED & set(path.parts):
        return True
    name = path.name
    return name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")


def _refuse(*_args: object) -> None:
    raise _Refused


def read_junit(path: Path) -> Junit | str:
    """The counts of the report at ``path``, or why there are none (see the module docstring)."""
    unreadable = "pytest's report could not be read"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return NO_REPORT
    except OSError:
        return unreadable
    tally = _Tally()
    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.StartElementHandler = tally.start
    parser.EndElementHandler = tally.end
    parser.CharacterDataHandler = tally.text
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            return unreadable
        if info.st_size > MAX_REPORT_BYTES:
            return f"{unreadable}: it is larger than {MAX_REPORT_BYTES // 1_000_000} MB"
        read = 0
        try:
            while read <= MAX_REPORT_BYTES and (chunk := file.read(CHUNK_BYTES)):
                read += len(chunk)
                parser.Parse(chunk, False)
            if read > MAX_REPORT_BYTES:  # it grew while read
                return f"{unreadable}: it is larger than {MAX_REPORT_BYTES // 1_000_000} MB"
            parser.Parse(b"", True)
        except (expat.ExpatError, _Refused, OSError):
            return unreadable
    if not tally.suites:
        return unreadable
    return tally.counted()
