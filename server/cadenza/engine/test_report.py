"""A test run's output, short and failures first: what a small model can act on.

pytest's output (``-q --tb=short``, the detected command's options) is read by its sections:
each failure's block (``____ test_name ____``) gives the line where the error arose, with its
source, and the ``E`` lines (pytest's assertion rewriting says what was expected and what came:
``assert 88 == 3``, ``where 88 = fewest_coins([1, 5, 10], 12)``); the short summary gives the
test ids; the last line the counts. Tracebacks through other frames are left out. Output of
any other runner (npm, go, a configured command) is shown as its last lines. Everything fits
``MAX_CHARS`` (about 400 tokens).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_CHARS = 1600
"""The digest's length at most (characters; about 400 tokens of code and English)."""
LINE_CHARS = 160
"""Longest line of the digest; longer ones are cut."""
E_LINES = 4
"""``E`` lines (the error, the values) shown per failure."""

_SECTION = re.compile(r"^={3,} (.+?) ={3,}$")
_BLOCK = re.compile(r"^_{3,} (.+?) _{3,}$")
_SHORT_WHERE = re.compile(r"^(\S.*?:\d+): in \S+")
_LONG_WHERE = re.compile(r"^([^\s>].*?:\d+):(?: \S.*)?$")
_SUMMARY = re.compile(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$")
_COUNT = re.compile(r"(\d+) (failed|passed|errors?|skipped|xfailed|xpassed)\b")
_NOISE = ("Use -v to get more diff", "Full diff:", "Omitting ")
MARKS = frozenset("^~ ")
"""Characters of Python's markers under the failing part of a line (no text of their own)."""
DIFF_HINT = frozenset("^+-~ ")
"""Characters of difflib's ``?`` line under a changed line of a diff (no text of their own)."""


@dataclass(kw_only=True)
class Failure:
    """One failing test (or a test file that failed to load) as the digest shows it.

    Attributes:
        name: The test id (``test_x.py::test_y[1-2]``) or the file's name.
        error: True for a file that failed to load (pytest's ``ERRORS`` section).
        frames: ``(file:line, source)`` of the workspace's own frames (not the runner's or
            the standard library's, whose paths are absolute), in call order.
        errors: The ``E`` lines: the error, and for an assertion the values compared.
    """

    name: str
    error: bool = False
    frames: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    pending: str = field(default="", repr=False)
    """The long form's source line (``>``), until its location line comes."""
    awaiting: bool = field(default=False, repr=False)
    """The short form's last frame waits for its source line."""

    def lines(self) -> list[str]:
        """Its name; the test's line and the line the error arose on; the error lines."""
        out = [f"{'ERROR' if self.error else 'FAILED'} {self.name}"]
        shown = self.frames[:1] + self.frames[-1:] if len(self.frames) > 1 else self.frames
        out += [f"  {where}: {source}" if source else f"  {where}" for where, source in shown]
        out += [f"  {line}" for line in self.errors[:E_LINES]]
        return [_cut(line) for line in out]


@dataclass(frozen=True, kw_only=True)
class TestReport:
    """What a test run's output says, as far as it could be read.

    Attributes:
        counts: pytest's final counts (``{"failed": 2, "passed": 5}``); empty when unknown.
        failures: The failures read from pytest's blocks, in output order.
    """

    __test__ = False  # not a pytest test class, whatever its name

    counts: dict[str, int]
    failures: list[Failure]

    @property
    def summary(self) -> str:
        """``2 failed, 5 passed``, or "" when the counts are unknown."""
        return ", ".join(f"{n} {what}" for what, n in self.counts.items())


def read_report(output: str) -> TestReport:
    """Read pytest's sections out of ``output`` (another runner's gives an empty report)."""
    failures: list[Failure] = []
    ids: list[str] = []
    section = ""
    current: Failure | None = None
    counts: dict[str, int] = {}
    for raw in output.splitlines():
        line = raw.rstrip()
        if match := _SECTION.match(line):
            section, current = match[1], None
            counts = _counts(section) or counts  # the last line: "== 2 failed in 0.1s =="
            continue
        if section in ("FAILURES", "ERRORS") and (match := _BLOCK.match(line)):
            name = match[1].removeprefix("ERROR collecting ")
            current = Failure(name=name, error=section == "ERRORS")
            failures.append(current)
            continue
        if section == "short test summary info" and (match := _SUMMARY.match(line)):
            ids.append(match[2])
            continue
        if _COUNT.search(line) and not line.startswith((" ", "E ")):
            counts = _counts(line) or counts
        if current is not None:
            _take(current, line)
    _name_by_ids(failures, ids)
    return TestReport(counts=counts, failures=failures)


def _take(failure: Failure, line: str) -> None:
    """Take one line of ``failure``'s block: a frame, its source line, or an ``E`` line.

    ``--tb=short`` gives a frame as ``path:N: in name`` then its source line; the long form
    (``--tb=long``, ``auto``) gives the source line marked ``>``, then ``path:N: Error``.
    """
    if match := _SHORT_WHERE.match(line):
        failure.awaiting = _add_frame(failure, match[1], "")
    elif line.startswith(">"):
        failure.pending = line[1:].strip()
    elif match := _LONG_WHERE.match(line):
        _add_frame(failure, match[1], failure.pending)
        failure.pending = ""
    elif line.startswith("E ") or line == "E":
        text = line[1:].strip()
        hint = text.startswith("?") and set(text[1:]) <= DIFF_HINT  # difflib's marker line
        noise = not text or text.startswith(_NOISE) or set(text) <= MARKS or hint
        if not noise and len(failure.errors) < E_LINES:
            failure.errors.append(text)
    elif failure.awaiting and (text := line.strip()) and not set(text) <= MARKS:
        failure.frames[-1] = (failure.frames[-1][0], text)
        failure.awaiting = False


def _add_frame(failure: Failure, where: str, source: str) -> bool:
    """Add a frame of the workspace's own code; whether it was added (not the runner's)."""
    if where.startswith(("/", "<")) or re.match(r"^[A-Za-z]:\\", where):
        return False
    failure.frames.append((where, source))
    return True


def _name_by_ids(failures: list[Failure], ids: list[str]) -> None:
    """Give each failure its test id from the short summary (``file.py::test_x[1-2]``)."""
    for failure in failures:
        for test_id in ids:
            if test_id == failure.name or test_id.endswith(f"::{failure.name}"):
                failure.name = test_id
                break


def _counts(line: str) -> dict[str, int]:
    return {what: int(n) for n, what in _COUNT.findall(line)}


def digest(output: str, *, max_chars: int = MAX_CHARS) -> str:
    """The failures of ``output``, first and short; its last lines when none could be read.

    Each failure: ``FAILED <test id>``, the line where the error arose with its source, and up
    to ``E_LINES`` error lines; failures that do not fit are named on one line at the end.
    """
    report = read_report(output)
    if not report.failures:
        return tail_lines(output, max_chars)
    lines: list[str] = []
    used = 0
    shown = 0
    for failure in report.failures:
        block = failure.lines()
        size = sum(len(line) + 1 for line in block)
        if shown and used + size > max_chars - 200:  # keep room for the names of the rest
            break
        lines += block
        used += size
        shown += 1
    rest = [f.name for f in report.failures[shown:]]
    if rest:
        lines.append(_cut(f"… and {len(rest)} more: {', '.join(rest)}", max_chars - used))
    return "\n".join(lines)


def tail_lines(output: str, max_chars: int = MAX_CHARS) -> str:
    """The last lines of ``output`` that fit ``max_chars``, each cut to ``LINE_CHARS``."""
    kept: list[str] = []
    used = 0
    for line in reversed(output.rstrip().splitlines()):
        line = _cut(line)
        if used + len(line) + 1 > max_chars:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(reversed(kept))


def _cut(line: str, limit: int = LINE_CHARS) -> str:
    return line if len(line) <= limit else line[: max(limit - 1, 0)] + "…"
