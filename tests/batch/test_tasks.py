"""The task file and the result folder, without Ray."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cadenza.batch.checkout import CheckoutError, patch, prepare
from cadenza.batch.results import (
    OutDirError,
    TaskOutput,
    TaskResult,
    check_out_dir,
    done_ids,
    write_task,
)
from cadenza.batch.tasks import derived_id, parse_line, read_tasks
from tests.batch.conftest import make_repo


def test_lines_are_checked_and_bad_ones_reported_with_their_number(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "\n".join(
            [
                '{"id": "one", "repo": "r", "task": "t"}',
                "# a comment",
                "{not json",
                '{"repo": "r", "task": "t", "colour": "red"}',
                '{"id": "../up", "repo": "r", "task": "t"}',
                '{"repo": "r", "task": "t", "allow": ["rm"]}',
                '{"id": "one", "repo": "r2", "task": "t"}',
                '{"repo": "r", "ref": "main", "task": "t"}',
                "[1, 2]",
            ]
        ),
        encoding="utf-8",
    )
    parsed = read_tasks(tasks)
    assert parsed.tasks[0].id == "one"
    assert len(parsed.tasks) == 2
    assert [b.line for b in parsed.skipped] == [3, 4, 5, 6, 7, 9]
    reasons = [b.reason for b in parsed.skipped]
    assert reasons[0].startswith("not JSON")
    assert "colour" in reasons[1]
    assert "unknown tool 'rm'" in reasons[3]
    assert "repeated" in reasons[4]


def test_a_missing_id_is_derived_stably() -> None:
    first = parse_line('{"repo": "r", "ref": "v1", "task": "t"}')
    again = parse_line('{"task": "t", "repo": "r", "ref": "v1"}')
    other = parse_line('{"repo": "r", "ref": "v2", "task": "t"}')
    assert not isinstance(first, str) and not isinstance(again, str)
    assert not isinstance(other, str)
    assert first.id == again.id == derived_id(first) != other.id


def test_checkout_at_a_ref_and_the_patch_has_untracked_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "r")
    first = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "README.md").write_text("changed later\n", encoding="utf-8")
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "two"],
        cwd=repo,
        check=True,
    )
    checkout = prepare(str(repo), first, tmp_path / "work")
    assert checkout.base == first
    assert (checkout.path / "README.md").read_text() == "the r repository\n"
    (checkout.path / "new.txt").write_text("new\n", encoding="utf-8")
    diff = patch(checkout)
    assert "+++ b/new.txt" in diff
    with pytest.raises(CheckoutError, match="neither a folder nor a git URL"):
        prepare(str(tmp_path / "missing"), None, tmp_path / "w2")
    with pytest.raises(CheckoutError, match=r"git (checkout|fetch) failed"):
        prepare(str(repo), "no-such-ref", tmp_path / "w3")


def test_results_are_whole_and_out_must_be_a_folder(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("", encoding="utf-8")
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(OutDirError, match="is a file"):
        check_out_dir(a_file, tasks, resume=False)
    out = tmp_path / "out"
    check_out_dir(out, tasks, resume=False)
    other = tmp_path / "other.jsonl"
    other.write_text("", encoding="utf-8")
    with pytest.raises(OutDirError, match="another batch"):
        check_out_dir(out, other, resume=True)
    result = TaskResult(id="x1", status="done")
    write_task(out, TaskOutput(result=result, patch="diff\n"))
    write_task(out, TaskOutput(result=result, patch="second\n"))
    assert (out / "x1" / "patch.diff").read_text() == "second\n"
    assert json.loads((out / "x1" / "result.json").read_text())["status"] == "done"
    assert done_ids(out) == {"x1"}
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []


def test_usage_errors_exit_2_without_starting_ray(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cadenza.cli import main

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "repo": "r", "task": "t"}\n', encoding="utf-8")
    assert main(["batch", str(tasks), "--out", str(tasks)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert main(["batch", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    with pytest.raises(SystemExit) as info:
        main(["batch", str(tasks), "--out", str(tmp_path / "o"), "--allow", "nope"])
    assert info.value.code == 2


def test_everything_resumed_needs_no_cluster(tmp_path: Path) -> None:
    from cadenza.cli import main

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "repo": "r", "task": "t"}\n', encoding="utf-8")
    out = tmp_path / "out"
    check_out_dir(out, tasks, resume=False)
    write_task(out, TaskOutput(result=TaskResult(id="a", status="done")))
    assert main(["batch", str(tasks), "--out", str(out), "--resume"]) == 0
