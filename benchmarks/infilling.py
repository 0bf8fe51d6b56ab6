"""HumanEval-Infilling problems as editor documents, and their scoring (no model, no server).

The benchmark of the fill-in-the-middle paper (Bavarian et al. 2022, "Efficient Training of
Language Models to Fill in the Middle"; harness: github.com/openai/human-eval-infilling) is
built from HumanEval's canonical solutions: each non-blank line of a solution is masked
(single-line infilling, 1,033 problems), or each span of lines from one non-blank line to a
later or the same one (multi-line infilling, 5,815). ``derive`` rebuilds both sets from the
``human-eval`` package's data file (already a dev dependency); the result is identical, field
for field, to the harness's ``HumanEval-SingleLineInfilling.jsonl.gz`` and
``HumanEval-MultiLineInfilling.jsonl.gz``. (The PyPI package ``human-eval-infilling`` is an
empty placeholder and the harness's data files sit outside its Python package, so neither
ships them.)

A problem is ``prompt`` + hole + ``suffix``; ``prompt`` ends with a new line and the hole is
whole lines. In the editor the hole is an empty line: the document is
``prompt + "\\n" + suffix`` with the cursor at the start of that empty line, and the
completion inserted there is scored as ``prompt + completion + "\\n" + suffix`` followed by the
problem's tests, run in a subprocess with a time limit.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from benchmarks.humaneval.problems import Problem, load_problems

Subset = Literal["single-line", "multi-line"]
SUBSETS: tuple[Subset, ...] = ("single-line", "multi-line")
_PREFIX = {"single-line": "SingleLineInfilling", "multi-line": "MultiLineInfilling"}
SCORE_TIMEOUT_S = 10.0
"""A filled program that runs longer fails (HumanEval's tests take well under a second)."""


@dataclass(frozen=True, kw_only=True)
class InfillProblem:
    """One infilling problem, with the fields of the harness's data files.

    Attributes:
        task_id: ``SingleLineInfilling/HumanEval/0/L3`` or ``MultiLineInfilling/.../L0_L2``.
        entry_point: The function the tests call.
        prompt: The text before the hole (ends with a new line).
        suffix: The text after the hole.
        canonical_solution: The masked lines (end with a new line).
        test: HumanEval's ``check(candidate)`` function.
    """

    task_id: str
    entry_point: str
    prompt: str
    suffix: str
    canonical_solution: str
    test: str

    @property
    def file_stem(self) -> str:
        """A file name for the problem's document: ``he000_L3``, ``he000_L0_L2``."""
        _, _, number, lines = self.task_id.split("/")
        return f"he{int(number):03d}_{lines}"


@dataclass(frozen=True, kw_only=True)
class Document:
    """An editor buffer and a cursor in it (0-based line, column in code points)."""

    text: str
    line: int
    column: int


@dataclass(frozen=True, kw_only=True)
class Score:
    """Whether the filled program passed the problem's tests, and if not, why."""

    passed: bool
    reason: str


def derive(problem: Problem, subset: Subset) -> list[InfillProblem]:
    """The infilling problems of one HumanEval problem, in the harness's order."""
    lines = problem.canonical_solution.split("\n")
    marked = [n for n, line in enumerate(lines) if line.strip()]
    spans = (
        [(n, n) for n in marked]
        if subset == "single-line"
        else [(i, j) for i in marked for j in marked if j >= i]
    )
    out = []
    for first, last in spans:
        lines_id = f"L{first}" if subset == "single-line" else f"L{first}_L{last}"
        out.append(
            InfillProblem(
                task_id=f"{_PREFIX[subset]}/{problem.task_id}/{lines_id}",
                entry_point=problem.entry_point,
                prompt=problem.prompt + "\n".join(lines[:first]) + "\n",
                suffix="\n".join(lines[last + 1 :]),
                canonical_solution="\n".join(lines[first : last + 1]) + "\n",
                test=problem.test,
            )
        )
    return out


def load(subset: Subset) -> list[InfillProblem]:
    """Every problem of ``subset`` (1,033 single-line, 5,815 multi-line).

    Raises:
        RuntimeError: The ``human-eval`` package is not installed.
    """
    return [p for problem in load_problems() for p in derive(problem, subset)]


def sample(problems: Sequence[InfillProblem], limit: int, seed: int) -> list[InfillProblem]:
    """``limit`` problems drawn with ``seed`` (all when ``limit`` is 0 or more than there are),
    in the set's order."""
    if limit <= 0 or limit >= len(problems):
        return list(problems)
    chosen = set(random.Random(seed).sample(range(len(problems)), limit))
    return [p for n, p in enumerate(problems) if n in chosen]


def document(problem: InfillProblem) -> Document:
    """The buffer with the hole as an empty line, the cursor at its start."""
    return Document(
        text=problem.prompt + "\n" + problem.suffix,
        line=problem.prompt.count("\n"),
        column=0,
    )


def filled(problem: InfillProblem, completion: str) -> str:
    """The buffer after ``completion`` was inserted at the cursor."""
    return problem.prompt + completion + "\n" + problem.suffix


def check_program(problem: InfillProblem, completion: str) -> str:
    """The filled buffer, the problem's tests and the call that runs them (the harness's)."""
    return f"{filled(problem, completion)}\n{problem.test}\ncheck({problem.entry_point})\n"


def score(problem: InfillProblem, completion: str, timeout_s: float = SCORE_TIMEOUT_S) -> Score:
    """Run the problem's tests on the buffer filled with ``completion``, in a fresh folder.

    The program is the model's code: it runs in a subprocess of its own, in a temporary
    folder, with a time limit (no further sandbox: run the benchmark on a disposable machine).
    """
    with tempfile.TemporaryDirectory(prefix="infill-score-") as folder:
        program = Path(folder) / "check.py"
        program.write_text(check_program(problem, completion), encoding="utf-8")
        env = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            done = subprocess.run(
                [sys.executable, "-I", str(program)],
                cwd=folder,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Score(passed=False, reason=f"ran longer than {timeout_s:g} s")
    if done.returncode == 0:
        return Score(passed=True, reason="passed")
    last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    return Score(passed=False, reason=last[:200])


def typing_line(problem: InfillProblem) -> str | None:
    """The masked line of a single-line problem, when it is long enough to type into."""
    line = problem.canonical_solution.rstrip("\n")
    return line if "\n" not in line and len(line.strip()) >= 8 else None


_WORD = re.compile(r"[A-Za-z_]\w{2,}")
"""A name of three characters or more: what a keystroke starts to type."""


def keystroke_word(problem: InfillProblem) -> re.Match[str] | None:
    """The name in the masked line a keystroke types (nearest its middle), if any.

    Only a name with code after it on the line: the completion is then a single-line one.
    """
    line = typing_line(problem)
    if line is None:
        return None
    indent = len(line) - len(line.lstrip())
    middle = indent + (len(line) - indent) // 2
    words = [m for m in _WORD.finditer(line) if line[m.end() :].strip()]
    return min(words, key=lambda m: abs(m.start() - middle)) if words else None


def keystroke(problem: InfillProblem) -> tuple[Document, Document, str]:
    """The first letter of a name typed in the middle of the masked line.

    Before: the line without that name (``keystroke_word``), the cursor where it goes; after:
    its first letter typed, the cursor one further, the rest of the name still to come (the
    expected completion, returned third). The text after the cursor stays, so the completion
    is a single-line one and the model's cached prompt differs from the cursor on.

    Raises:
        ValueError: Not a single-line problem with a name of three characters or more.
    """
    word = keystroke_word(problem)
    if word is None:
        raise ValueError(f"{problem.task_id} has no line with a name to type into")
    line = problem.canonical_solution.rstrip("\n")
    number = problem.prompt.count("\n")
    head, name = line[: word.start()], word.group()
    tail = line[word.end() :] + "\n" + problem.suffix
    column = len(head)
    before = Document(text=problem.prompt + head + tail, line=number, column=column)
    after = Document(text=problem.prompt + head + name[0] + tail, line=number, column=column + 1)
    return before, after, name[1:]


def typing(problem: InfillProblem, keystrokes: int) -> list[Document]:
    """The buffer after each of ``keystrokes`` characters typed into the emptied masked line.

    The line starts as its indentation; its code is typed character by character (cycling
    through it when it is shorter than ``keystrokes``), the cursor at the end of the line.

    Raises:
        ValueError: Not a single-line problem with a line long enough (``typing_line``).
    """
    line = typing_line(problem)
    if line is None:
        raise ValueError(f"{problem.task_id} has no line to type into")
    indent = line[: len(line) - len(line.lstrip())]
    code = line.strip()
    number = problem.prompt.count("\n")
    out = []
    for n in range(1, keystrokes + 1):
        typed = indent + code[: (n - 1) % len(code) + 1]
        out.append(
            Document(
                text=problem.prompt + typed + "\n" + problem.suffix,
                line=number,
                column=len(typed),
            )
        )
    return out
