"""HumanEval-Infilling as editor documents, and their scoring (no model, no server).

The derived sets must be the harness's data files byte for byte: the SHA-256 digests below are
those of the decompressed ``HumanEval-SingleLineInfilling.jsonl.gz`` and
``HumanEval-MultiLineInfilling.jsonl.gz`` of github.com/openai/human-eval-infilling (one
``json.dumps`` of each problem a line, in the harness's field order).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from benchmarks.completions import mark_outcomes, percentile, quality_summary, report
from benchmarks.infilling import InfillProblem

from benchmarks import infilling
from cadenza.host.completion_context import (
    CompletionBudget,
    Cursor,
    infill_request,
    is_single_line,
    split_at,
)

HARNESS_SHA256 = {
    "single-line": "6fffc71ec2f1674372fcc177511f92312f1a27a9eacd8e43255c9f5ee9eca8c8",
    "multi-line": "5b49f312f0a781420a4ae54f5e73176009b9cfc52731e3a0b9be726b451032d1",
}
SIZES = {"single-line": 1033, "multi-line": 5815}


@pytest.fixture(scope="module")
def sets() -> dict[str, list[InfillProblem]]:
    return {subset: infilling.load(subset) for subset in infilling.SUBSETS}


@pytest.mark.parametrize("subset", infilling.SUBSETS)
def test_the_derived_sets_are_the_harness_data_files(
    sets: dict[str, list[InfillProblem]], subset: infilling.Subset
) -> None:
    problems = sets[subset]
    assert len(problems) == SIZES[subset]
    lines = "".join(json.dumps(dataclasses.asdict(p)) + "\n" for p in problems)
    assert hashlib.sha256(lines.encode()).hexdigest() == HARNESS_SHA256[subset]


def test_a_problem_becomes_a_buffer_with_an_empty_line_at_the_hole(
    sets: dict[str, list[InfillProblem]],
) -> None:
    problem = next(p for p in sets["multi-line"] if p.task_id.endswith("/HumanEval/0/L1_L2"))
    assert problem.file_stem == "he000_L1_L2"
    document = infilling.document(problem)
    lines = document.text.split("\n")
    assert lines[document.line] == "" and document.column == 0
    assert lines[document.line - 1] == "    for idx, elem in enumerate(numbers):"
    assert lines[document.line + 1] == "                distance = abs(elem - elem2)"
    # The canonical middle typed at the cursor gives back the whole solution.
    offset = len("\n".join(lines[: document.line])) + 1
    middle = problem.canonical_solution.rstrip("\n")
    typed = document.text[:offset] + middle + document.text[offset:]
    assert typed == infilling.filled(problem, middle)
    assert typed == problem.prompt + problem.canonical_solution + problem.suffix


def test_the_server_sees_a_block_completion_on_the_empty_line(
    sets: dict[str, list[InfillProblem]],
) -> None:
    for problem in infilling.sample(sets["single-line"], 20, seed=3):
        document = infilling.document(problem)
        request = infill_request(
            Cursor(text=document.text, line=document.line, column=document.column),
            (),
            CompletionBudget(),
        )
        assert request.prompt == ""
        assert request.stop == ("\n\n",)  # a block: the hole is not in the middle of a line
        assert request.suffix.startswith("\n")
        assert problem.prompt.endswith(request.prefix)
        assert ("\n" + problem.suffix).startswith(request.suffix)


def test_sampling_is_seeded_and_keeps_the_sets_order(
    sets: dict[str, list[InfillProblem]],
) -> None:
    problems = sets["single-line"]
    first = infilling.sample(problems, 5, seed=7)
    assert first == infilling.sample(problems, 5, seed=7)
    assert first != infilling.sample(problems, 5, seed=8)
    assert [problems.index(p) for p in first] == sorted(problems.index(p) for p in first)
    assert infilling.sample(problems, 0, seed=7) == problems


def test_the_canonical_middle_passes_and_a_wrong_one_fails(
    sets: dict[str, list[InfillProblem]],
) -> None:
    for subset in infilling.SUBSETS:
        for problem in infilling.sample(sets[subset], 3, seed=11):
            verdict = infilling.score(problem, problem.canonical_solution.rstrip("\n"))
            assert verdict.passed, (problem.task_id, verdict.reason)
    problem = sets["single-line"][0]  # HumanEval/0, L0: the outer for loop
    assert infilling.score(problem, problem.canonical_solution).passed  # its own new line too
    empty = infilling.score(problem, "")
    assert not empty.passed and "Error" in empty.reason
    wrong = infilling.score(problem, "    for idx, elem in enumerate(numbers[:1]):")
    assert not wrong.passed and "AssertionError" in wrong.reason


def test_a_completion_that_never_ends_fails_on_time(
    sets: dict[str, list[InfillProblem]],
) -> None:
    problem = next(p for p in sets["single-line"] if p.task_id.endswith("/HumanEval/0/L7"))
    assert problem.canonical_solution == "    return False\n"
    verdict = infilling.score(problem, "    while True: pass", timeout_s=2)
    assert verdict == infilling.Score(passed=False, reason="ran longer than 2 s")


def test_a_keystroke_starts_a_name_in_the_middle_of_a_line_and_leaves_its_rest_to_complete(
    sets: dict[str, list[InfillProblem]],
) -> None:
    typable = [p for p in sets["single-line"] if infilling.keystroke_word(p) is not None]
    assert len(typable) > 500
    for problem in infilling.sample(typable, 20, seed=5):
        before, after, expected = infilling.keystroke(problem)
        assert after.column == before.column + 1 and after.line == before.line
        _, head_before, tail_before, _ = split_at(Cursor(**vars(before)))
        _, head_after, tail_after, rest = split_at(Cursor(**vars(after)))
        assert tail_before == tail_after and is_single_line(tail_after)
        assert head_after == head_before + head_after[-1]
        assert len(expected) >= 2 and (head_after[-1] + expected).isidentifier()
        line = problem.canonical_solution.rstrip("\n")
        assert head_after + expected + tail_after == line  # the rest of the name completes it
        assert "\n".join(rest) == problem.suffix
    problem = sets["single-line"][0]  # "    for idx, elem in enumerate(numbers):"
    before, after, expected = infilling.keystroke(problem)
    assert after.text.split("\n")[after.line] == "    for idx, elem in e(numbers):"
    assert expected == "numerate"
    multi = next(p for p in sets["multi-line"] if "\n" in p.canonical_solution.rstrip("\n"))
    with pytest.raises(ValueError, match="no line with a name"):
        infilling.keystroke(multi)


def test_typing_a_line_moves_the_cursor_to_its_end(
    sets: dict[str, list[InfillProblem]],
) -> None:
    problem = sets["single-line"][0]  # "    for idx, elem in enumerate(numbers):" (36 characters)
    typed = infilling.typing(problem, 40)
    assert len(typed) == 40
    lines = [d.text.split("\n")[d.line] for d in typed]
    assert lines[0] == "    f" and lines[1] == "    fo"
    assert lines[35] == "    for idx, elem in enumerate(numbers):"
    assert lines[36] == "    f"  # then it starts the line again
    assert all(d.column == len(line) for d, line in zip(typed, lines, strict=True))
    assert all(d.text.endswith(problem.suffix) for d in typed)


def test_percentiles_are_nearest_rank() -> None:
    values = [float(n) for n in range(1, 21)]
    assert percentile(values, 0.5) == 10.0
    assert percentile(values, 0.95) == 19.0
    assert percentile([3.0], 0.95) == 3.0
    assert percentile([], 0.5) != percentile([], 0.5)  # NaN


def test_the_quality_table_tells_the_empty_answers_apart(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_text(
        "INFO cadenza.host.completions: completion for single-line/b.py: over 4 s, dropped\n"
        "WARNING cadenza.host.completions: completion for single-line/c.py failed: boom\n"
    )

    def row(name: str, text: str, ms: float, lsp: bool, raw: bool) -> dict[str, Any]:
        return {
            "task_id": name,
            "file": f"single-line/{name}.py",
            "lsp": {"text": text, "ms": ms, "passed": lsp, "reason": ""},
            "raw": {"text": "x", "ms": 50.0, "passed": raw, "reason": ""},
        }

    rows = [
        row("a", "    return 1", 100.0, True, True),
        row("b", "", 4100.0, False, True),
        row("c", "", 90.0, False, False),
        row("d", "", 80.0, False, True),
        row("e", "", float("nan"), False, False),
    ]
    mark_outcomes(log, rows)
    assert [r["lsp"]["outcome"] for r in rows] == [
        "answered",
        "timeout",
        "failed",
        "empty",
        "error",
    ]
    summary = quality_summary(rows)
    assert summary["lsp_passed"] == 1 and summary["raw_passed"] == 3
    assert summary["lsp_pass_rate"] == 0.2 and summary["raw_pass_rate"] == 0.6
    assert summary["lsp_ms"]["n"] == 4  # the failed request has no time
    text = report({"quality": {"single-line": {"summary": summary}}})
    assert "| single-line | 5 " in text and "1 (20.0%)" in text and "3 (60.0%)" in text
    assert "timeout 1" in text and "error 1" in text
