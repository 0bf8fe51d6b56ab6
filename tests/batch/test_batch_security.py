"""What a task file can make the batch do, and what the batch writes down, without Ray.

A task file may come from someone else: its values must never reach git as options, and
a repo URL's password or a key the model wrote must not land in the results.
"""

from __future__ import annotations

import io
import json
import subprocess
from collections import deque
from pathlib import Path

import pytest
from rich.console import Console

from cadenza.batch import raylib
from cadenza.batch.checkout import CheckoutError, prepare
from cadenza.batch.display import BatchDisplay, summary_table
from cadenza.batch.driver import BatchPlan, BatchRun, _Flight
from cadenza.batch.results import SUMMARY, TaskOutput, TaskResult, write_task
from cadenza.batch.tasks import TaskSpec, parse_line
from cadenza.batch.worker import WorkerSettings, run_one
from cadenza.client.eventlog import EventLog
from cadenza.secrets import register_known_keys
from tests.batch.conftest import ModelServer, make_repo

TOKEN = "ghs_batchTok3nNotForTheResults1234"
REPO = f"https://x-access-token:{TOKEN}@github.com/acme/api.git"


def test_a_repo_or_ref_starting_with_a_dash_is_refused_naming_the_field() -> None:
    ref = parse_line(
        '{"repo": "r", "ref": "--upload-pack=touch /tmp/X;git-upload-pack", "task": "t"}'
    )
    repo = parse_line('{"repo": "-utouch X@h:x", "task": "t"}')
    assert isinstance(ref, str) and ref.startswith("ref:") and "'-'" in ref
    assert isinstance(repo, str) and repo.startswith("repo:") and "'-'" in repo
    assert not isinstance(parse_line('{"repo": "r", "ref": "v1-rc", "task": "t"}'), str)


def test_git_never_reads_a_ref_or_a_repo_as_an_option(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "r")
    mark = tmp_path / "ran"
    with pytest.raises(CheckoutError):
        prepare(str(repo), f"--upload-pack=touch {mark};git-upload-pack", tmp_path / "w1")
    assert not mark.exists()
    # scp-like: git must see a host, not -u (--upload-pack) and the folder as the repository
    with pytest.raises(CheckoutError) as info:
        prepare("-utouch ran@h:x", None, tmp_path / "w2")
    assert "ran@h" in str(info.value)
    assert not (tmp_path / "ran@h:x").exists()


def test_a_ref_only_a_fetch_brings_is_still_checked_out(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "r")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run(["git", "update-ref", "refs/pull/7/head", head], cwd=repo, check=True)
    checkout = prepare(str(repo), "refs/pull/7/head", tmp_path / "w")
    assert checkout.base == head


def test_a_repo_urls_password_is_in_no_result_summary_or_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    spec = TaskSpec(id="a", repo=REPO, task="t")
    worker = TaskResult(
        id="b", status="failed", repo=REPO, error=f"git clone failed: cannot reach {REPO}"
    )
    write_task(out, TaskOutput(result=worker))

    def died(ref: object) -> TaskOutput:
        raise raylib.WorkerDied(f"the worker running {REPO} was killed")

    monkeypatch.setattr(raylib, "get", died)
    printed = io.StringIO()
    console = Console(file=printed, width=300, highlight=False)
    plan = BatchPlan(
        tasks=(spec,), out=out, settings=WorkerSettings(), max_concurrency=1, retry_crashed=0
    )
    run = BatchRun(plan=plan, display=BatchDisplay(console, 1))
    ref = object()
    run._inflight[id(ref)] = (ref, _Flight(spec=spec, attempt=1))
    run._collect(ref, deque())
    run._write_summary()
    summary_table(console, run.results, 1.0)

    written = [(out / i / "result.json").read_text() for i in ("a", "b")]
    written.append((out / SUMMARY).read_text())
    for text in [*written, printed.getvalue()]:
        assert TOKEN not in text
    lost = json.loads(written[0])
    assert lost["status"] == "crashed"
    assert lost["repo"] == "https://x-access-token:[redacted]@github.com/acme/api.git"
    assert "[redacted]" in printed.getvalue()  # shown as text, not taken for markup


def test_transcript_and_events_hide_a_key_the_model_wrote_and_the_patch_keeps_it(
    tmp_path: Path, model: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-batchKeyTheModelCopied0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    register_known_keys.cache_clear()
    repo = make_repo(tmp_path, "r")
    settings = WorkerSettings(
        model="openai/test",
        env={"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": key},
        scratch=str(tmp_path),
        session_timeout_s=120,
    )
    spec = TaskSpec(id="k", repo=str(repo), task=f"batch-write: leaked.txt {key}")
    output = run_one(spec, settings)
    assert output.result.status == "done", output.result
    out = tmp_path / "out"
    out.mkdir()
    folder = write_task(out, output)

    transcript = (folder / "transcript.jsonl").read_text()
    assert "write_file" in transcript and "[redacted]" in transcript
    for name in ("transcript.jsonl", "events.jsonl", "result.json"):
        assert key not in (folder / name).read_text(), name
    for line in transcript.splitlines():
        json.loads(line)
    assert f"+{key}" in (folder / "patch.diff").read_text()  # a patch must apply


def test_an_events_line_stays_json_when_a_secret_assignment_is_quoted(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    log({"method": "m", "params": {"command": 'PGPASSWORD="hunter2hunter2" psql'}})
    log.close()
    line = json.loads((tmp_path / "events.jsonl").read_text())
    assert line["params"]["command"] == 'PGPASSWORD="[redacted]" psql'
