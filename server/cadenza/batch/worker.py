"""One task where Ray puts it: a fresh checkout, one headless session, the patch.

The worker runs the session in-process through :mod:`cadenza.client` (it spawns ``cadenza
serve`` like ``cadenza run`` does) with a state folder of its own (``XDG_STATE_HOME`` in its
scratch space), so transcripts, checkpoints and remembered permissions of parallel sessions
never mix. Everything a session can go through (a repository that cannot be cloned, a server
that cannot start, a provider error) becomes a result; only the death of the worker process
reaches the driver as an error, and that is what ``--retry-crashed`` retries. A cancel from
the driver (``ray.cancel``) arrives as ``KeyboardInterrupt``: the session is cancelled and the
server shut down before the scratch space is removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import cadenza
from cadenza.batch.checkout import Checkout, CheckoutError, patch, prepare
from cadenza.batch.model_servers import ENV_SHARED_SERVER, shared_server_env
from cadenza.batch.rate_limit import ENV_BASE_URL, Limited, limited_proxy
from cadenza.batch.results import TaskOutput, TaskResult, WorkerInfo, redacted_output
from cadenza.batch.tasks import TaskSpec
from cadenza.client.cli import exit_status
from cadenza.client.errors import ClientError
from cadenza.client.events import ClientEvent
from cadenza.client.options import ClientOptions
from cadenza.client.outcome import RunResult
from cadenza.client.permissions import PermissionPolicy
from cadenza.client.prompts import DecliningPrompter
from cadenza.client.report import (
    PermissionPrompt,
    file_reports,
    permission_prompt,
    usage_report,
)
from cadenza.client.session import HeadlessClient
from cadenza.gitcmd import run_git

HEARTBEAT_S = 0.2
CANCEL_GRACE_S = 10.0
"""Seconds to wait for the server to confirm a cancelled session before shutting it down."""


@dataclass(frozen=True, kw_only=True)
class WorkerSettings:
    """What every task of the batch shares (sent to each worker with its task).

    Attributes:
        model: ``PROVIDER/MODEL`` for tasks that name none (None: the server's default).
        allow: Tools allowed in every task (``--allow``), besides the task's own ``allow``.
        env: Variables for the spawned server (provider settings and keys forwarded from the
            driver, so a remote node sees the same provider).
        session_timeout_s: A session running longer is cancelled and counts as failed.
        scratch: Folder for the workers' checkouts (None: the system's temporary folder).
        model_servers: ``{model: {node_id: url}}``: the batch's shared llama-servers
            (:mod:`cadenza.batch.model_servers`); a session of such a model uses its node's.
        limiters: Hosted providers' batch-wide rate limiters; a session of such a provider
            calls it through a pacing proxy.
    """

    model: str | None = None
    allow: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    session_timeout_s: float = 3600.0
    scratch: str | None = None
    model_servers: dict[str, dict[str, str]] = field(default_factory=dict)
    limiters: dict[str, Limited] = field(default_factory=dict)
    """By provider name: its batch-wide rate limiter (:mod:`cadenza.batch.rate_limit`)."""


def run_one(spec: TaskSpec, settings: WorkerSettings, attempt: int = 1) -> TaskOutput:
    """Run ``spec`` in a fresh scratch folder and return its result; never raises for a task.

    Raises:
        KeyboardInterrupt: The driver cancelled the task (after cleaning up).
    """
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix=f"cadenza-batch-{spec.id}-", dir=settings.scratch))
    base = _base_result(spec, settings, attempt)
    try:
        try:
            checkout = prepare(spec.repo, spec.ref, scratch / "repo")
        except CheckoutError as exc:
            result = base.model_copy(update={"status": "failed", "error": str(exc)})
            return redacted_output(TaskOutput(result=_timed(result, started)))
        # Redacted here with this node's keys, and again by the driver with its own.
        return redacted_output(_session_output(spec, settings, checkout, scratch, base, started))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _timed(result: TaskResult, started: float) -> TaskResult:
    return result.model_copy(update={"wall_time_s": round(time.monotonic() - started, 3)})


def _base_result(spec: TaskSpec, settings: WorkerSettings, attempt: int) -> TaskResult:
    return TaskResult(
        id=spec.id,
        status="failed",
        attempts=attempt,
        worker=_where(),
        cadenza_version=cadenza.__version__,
        cadenza_commit=_cadenza_commit(),
        repo=spec.repo,
        ref=spec.ref,
        task=spec.task,
        model=spec.model or settings.model,
        workflow=spec.workflow,
    )


def _session_output(
    spec: TaskSpec,
    settings: WorkerSettings,
    checkout: Checkout,
    scratch: Path,
    base: TaskResult,
    started: float,
) -> TaskOutput:
    env = _server_env(settings, scratch)
    shared = shared_server_env(spec.model or settings.model, settings.model_servers)
    env.update(shared)
    policy = PermissionPolicy.build(allow=(*settings.allow, *spec.allow))
    options = ClientOptions(
        workspace=checkout.path,
        model=spec.model or settings.model,
        workflow=spec.workflow,
        max_steps=spec.max_steps,
        env=env,
        events_path=scratch / "events.jsonl",
        review="auto",
        allow=tuple(sorted(policy.allow)),
    )
    prompts: list[PermissionPrompt] = []
    base = base.model_copy(
        update={"base_commit": checkout.base, "model_server": shared.get(ENV_SHARED_SERVER)}
    )
    limited = settings.limiters.get((spec.model or settings.model or "").partition("/")[0])
    try:
        with contextlib.ExitStack() as stack:
            if limited is not None:
                proxy = stack.enter_context(limited_proxy(limited))
                options = replace(options, env={**env, ENV_BASE_URL: proxy.base_url})
            outcome = asyncio.run(_session(options, spec.task, policy, prompts, settings))
    except (ClientError, TimeoutError) as exc:
        error = str(exc) or f"the session ran longer than {settings.session_timeout_s:g} s"
        result = base.model_copy(update={"error": error, "permission_prompts": prompts})
    else:
        result = _ended(base, outcome, prompts)
    try:
        diff = patch(checkout)
    except CheckoutError as exc:
        diff = ""
        result = result.model_copy(update={"error": f"no patch: {exc}"})
    return TaskOutput(
        result=_timed(result, started),
        patch=diff,
        events=_read(scratch / "events.jsonl"),
        transcript="".join(_read(p) for p in _transcripts(scratch)),
    )


def _ended(base: TaskResult, run: RunResult, prompts: list[PermissionPrompt]) -> TaskResult:
    end = run.outcome
    status = exit_status(end.stop_reason)
    return base.model_copy(
        update={
            "status": {0: "done", 3: "incomplete"}.get(status, "failed"),
            "stop_reason": end.stop_reason,
            "exit_status": status,
            "message": end.message,
            "steps": end.steps,
            "usage": usage_report(run.usage),
            "session_time_s": round(run.wall_time, 3),
            "files": file_reports(run.changes),
            "permission_prompts": prompts,
        }
    )


async def _session(
    options: ClientOptions,
    task: str,
    policy: PermissionPolicy,
    prompts: list[PermissionPrompt],
    settings: WorkerSettings,
) -> RunResult:
    def observe(event: ClientEvent) -> None:
        prompt = permission_prompt(event)
        if prompt is not None:
            prompts.append(prompt)

    prompter = DecliningPrompter(accept_edits=True, permissions=policy)
    heartbeat = asyncio.get_running_loop().create_task(_heartbeat())
    async with HeadlessClient(options, observer=observe, prompter=prompter) as client:
        await client.start_session(task)
        try:
            return await asyncio.wait_for(client.wait(), settings.session_timeout_s)
        except (asyncio.CancelledError, TimeoutError):
            # Cancelled by the driver (KeyboardInterrupt) or too slow: stop the session
            # cleanly so the server ends it, then leave; __aexit__ shuts the server down.
            with contextlib.suppress(ClientError, TimeoutError):
                await asyncio.wait_for(client.cancel(), CANCEL_GRACE_S)
            raise
        finally:
            heartbeat.cancel()


async def _heartbeat() -> None:
    """Wake the event loop every ``HEARTBEAT_S`` so a cancel from the driver lands at once.

    ``ray.cancel`` interrupts the worker's main thread the way Ctrl-C does, and Python runs
    that interrupt only when the thread executes Python code; an event loop blocked in
    ``epoll`` waiting for a slow model reply would not notice it until the reply came
    (measured: not within 20 s without this, 0.08 s with it).
    """
    while True:
        await asyncio.sleep(HEARTBEAT_S)


def _server_env(settings: WorkerSettings, scratch: Path) -> dict[str, str]:
    """This worker's environment, the forwarded variables, and a state folder of its own.

    The cluster's token (``RAY_AUTH_TOKEN``) stays out: the session's commands have no
    business with the cluster.
    """
    env = {
        k: v for k, v in os.environ.items() if k not in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
    }
    env.update(settings.env)
    state = scratch / "state"
    state.mkdir()
    env["XDG_STATE_HOME"] = str(state)
    return env


def _transcripts(scratch: Path) -> Iterator[Path]:
    yield from sorted((scratch / "state").glob("cadenza/sessions/*.jsonl"))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _where() -> WorkerInfo:
    """The Ray node and process running this task (no node id outside Ray)."""
    node_id: str | None = None
    try:
        import ray

        if ray.is_initialized():
            node_id = ray.get_runtime_context().get_node_id()
    except ImportError:
        pass
    return WorkerInfo(node_id=node_id, hostname=socket.gethostname(), pid=os.getpid())


_COMMIT: list[str | None] = []


def _cadenza_commit() -> str | None:
    """The git commit of the running Cadenza source (None outside a git checkout)."""
    if not _COMMIT:
        source = Path(cadenza.__file__).resolve().parent
        try:
            done = run_git(source, "rev-parse", "HEAD", timeout=10)
            commit = done.stdout.decode().strip() if done.returncode == 0 else ""
            _COMMIT.append(commit or None)
        except (OSError, subprocess.TimeoutExpired):
            _COMMIT.append(None)
    return _COMMIT[0]
