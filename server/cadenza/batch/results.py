"""What a batch leaves in ``--out``: one folder per task, written atomically, and a summary.

``DIR/<id>/`` holds ``result.json``, ``patch.diff``, ``events.jsonl`` and ``transcript.jsonl``.
The folder is assembled under a hidden temporary name in ``DIR`` and renamed into place in one
step, so an interrupted batch leaves either a whole result or none: ``--resume`` can trust any
``result.json`` it finds. ``DIR/batch.json`` marks the folder as a batch's (the task file's
path and hash), so ``--resume`` refuses the folder of another batch. Secrets are masked in
everything written but the patch: a repo URL's password, a key in the transcript.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from cadenza.client.report import FileReport, PermissionPrompt, UsageReport
from cadenza.secrets import redact, redact_jsonl, register_known_keys

Status = Literal["done", "incomplete", "failed", "crashed", "cancelled"]
"""``done``: the task is done (exit 0); ``incomplete``: max steps or waiting for a person
(exit 3); ``failed``: the session ended in error or gave up, or the repository could not be
prepared; ``crashed``: the worker died more often than ``--retry-crashed`` allows;
``cancelled``: the batch was stopped (never written as a result)."""

MARKER = "batch.json"
SUMMARY = "summary.json"


class WorkerInfo(BaseModel):
    """Where the task ran."""

    node_id: str | None = None
    hostname: str = ""
    pid: int = 0


class TaskResult(BaseModel):
    """``DIR/<id>/result.json``."""

    id: str
    status: Status
    stop_reason: str | None = None
    exit_status: int | None = None
    message: str = ""
    error: str | None = None
    steps: int | None = None
    usage: UsageReport | None = None
    wall_time_s: float = 0.0
    """Seconds the worker spent on the task: checkout, server start, session, patch."""
    session_time_s: float | None = None
    """Seconds of the session alone (``cadenza.startSession`` to ``session_end``)."""
    attempts: int = 1
    worker: WorkerInfo | None = None
    cadenza_version: str = ""
    cadenza_commit: str | None = None
    repo: str = ""
    ref: str | None = None
    base_commit: str | None = None
    task: str = ""
    model: str | None = None
    model_server: str | None = None
    """The node's shared llama-server the session used (a local model), else None."""
    workflow: str | None = None
    files: list[FileReport] = []
    permission_prompts: list[PermissionPrompt] = []


@dataclass(frozen=True, kw_only=True)
class TaskOutput:
    """What a worker sends back: the result and the files' texts."""

    result: TaskResult
    patch: str = ""
    events: str = ""
    transcript: str = ""


_FREE_TEXTS = ("repo", "ref", "task", "error", "message")
"""Fields of a result that may carry a credential: a repo URL's password, git quoting it."""


def redacted_result(result: TaskResult) -> TaskResult:
    """``result`` with secrets in its free texts masked (``secrets.redact``)."""
    register_known_keys()
    texts = {name: getattr(result, name) for name in _FREE_TEXTS}
    return result.model_copy(update={k: redact(v) for k, v in texts.items() if v})


def redacted_output(output: TaskOutput) -> TaskOutput:
    """``output`` as it may leave the worker or be written: its result and JSONL redacted.

    The patch stays exact: it must apply (a key in a changed file is the repository's).
    """
    register_known_keys()
    return TaskOutput(
        result=redacted_result(output.result),
        patch=output.patch,
        events=redact_jsonl(output.events),
        transcript=redact_jsonl(output.transcript),
    )


class OutDirError(Exception):
    """``--out`` cannot hold this batch; the message says why."""


def check_out_dir(out: Path, task_file: Path, *, resume: bool) -> None:
    """Create ``out`` (or check it) and mark it as this batch's.

    Raises:
        OutDirError: ``out`` is a file; or with ``resume``, it holds another batch's results.
    """
    if out.exists() and not out.is_dir():
        raise OutDirError(f"--out {out} is a file, not a folder")
    marker = out / MARKER
    mine = {"tasks": str(task_file.resolve()), "sha256": _file_hash(task_file)}
    if resume and marker.exists():
        theirs = json.loads(marker.read_text(encoding="utf-8"))
        if theirs.get("tasks") != mine["tasks"]:
            raise OutDirError(
                f"--out {out} holds the results of another batch ({theirs.get('tasks')}); "
                "--resume only continues the batch of the same task file"
            )
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(marker, json.dumps(mine, indent=2) + "\n")


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def done_ids(out: Path) -> set[str]:
    """Ids that have a ``result.json`` (``--resume`` skips them)."""
    if not out.is_dir():
        return set()
    return {p.parent.name for p in out.glob("*/result.json")}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes it private; results are not
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_task(out: Path, output: TaskOutput) -> Path:
    """Write one task's folder whole: assembled aside, then renamed to ``DIR/<id>``.

    Everything but the patch is redacted first (:func:`redacted_output`).

    An older folder of the same id (a rerun without ``--resume``) is replaced.
    """
    output = redacted_output(output)
    final = out / output.result.id
    staging = Path(tempfile.mkdtemp(dir=out, prefix=f".{output.result.id}."))
    try:
        staging.chmod(0o777 & ~_umask())
        files = {
            "patch.diff": output.patch,
            "events.jsonl": output.events,
            "transcript.jsonl": output.transcript,
            "result.json": output.result.model_dump_json(indent=2) + "\n",
        }
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        if final.exists():
            old = Path(tempfile.mkdtemp(dir=out, prefix=f".{output.result.id}.old."))
            os.replace(final, old / "x")
            os.replace(staging, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final


def remove_staging(out: Path) -> None:
    """Remove hidden staging folders an earlier, killed driver left behind."""
    for path in out.glob(".*.*"):
        if path.is_dir() and path.name != ".":
            shutil.rmtree(path, ignore_errors=True)
        elif path.name.endswith(".tmp"):
            with contextlib.suppress(OSError):
                path.unlink()
