"""The ``run_command`` tool: run a shell command in the workspace.

The command runs with ``bash -c`` (``/bin/sh -c`` when bash is missing) in a process group of
its own (a new session, so no controlling terminal: password prompts fail instead of hanging),
stdin from ``/dev/null``, stderr merged into stdout, the server's environment inherited. In a
folder the person has not trusted, the git a command runs gets the overrides of Cadenza's own
git calls (``gitcmd.command_environment``: no ``core.fsmonitor``, hooks, filters, pager... of
the repository's own configuration), through git's ``GIT_CONFIG_COUNT`` environment.
The working folder is resolved inside the workspace (``resolve_in_workspace``); the command
itself is not confined, as with any shell.

Output is bounded: the first half and the last half of ``max_output_bytes`` are kept and the byte
counts of the whole stream reported, so a test run's summary at the end is never lost. The whole
group is stopped when the command times out (SIGTERM, then SIGKILL after ``KILL_GRACE_S``), when the
call is cancelled (SIGKILL at once), and when the command ends while processes it started in the
background still run.
"""

from __future__ import annotations

import codecs
import contextlib
import shutil
import signal
import subprocess
from pathlib import Path
from typing import ClassVar

import anyio
import anyio.abc
from anyio import to_thread
from pydantic import Field
from typing_extensions import override

from cadenza.gitcmd import command_environment
from cadenza.messages import ToolSpec
from cadenza.procgroups import forget, signal_group, start_group
from cadenza.secrets import redact, redact_piece
from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from cadenza.tools.paths import relative_name, resolve_in_workspace

DEFAULT_TIMEOUT_S = 120.0
"""Seconds a command may run when the call names no ``timeout_s``."""

MAX_TIMEOUT_S = 600.0
"""The largest ``timeout_s`` a call may ask for (seconds)."""

DEFAULT_MAX_OUTPUT_BYTES = 32_000
"""Bytes of output the model reads at most (head and tail halves)."""

KILL_GRACE_S = 1.0
"""Seconds between SIGTERM and SIGKILL when a command is stopped."""

DRAIN_S = 0.5
"""Seconds to wait for the output's end once the group is gone (a process that left the group
with ``setsid`` may hold the pipe open; it is not waited for longer)."""

REAP_S = 2.0
"""Seconds to wait for a killed process to be reaped (one stuck in the kernel is left)."""

TITLE_CHARS = 60


class _Capture:
    """The head and tail of a byte stream, and its total length.

    Args:
        limit: Bytes kept at most: the first ``limit // 2`` and the last ``limit - limit // 2``.
    """

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        """Take the next chunk of the stream."""
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.tail_limit
            if excess > 0:
                del self.tail[:excess]

    def text(self) -> str:
        """The kept output as text (UTF-8, undecodable bytes replaced), with a note on the cut.

        When bytes were dropped, a UTF-8 character cut by the head or tail boundary is dropped
        too, and the note counts exactly the bytes not shown. Registered secrets are redacted,
        also a key cut by the head's end or the tail's start (``secrets.redact_piece``): the
        whole output was never kept, so it cannot be redacted before the cut.
        """
        omitted = self.total - len(self.head) - len(self.tail)
        if omitted == 0:
            return redact((self.head + self.tail).decode("utf-8", "replace"))
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        head = decoder.decode(bytes(self.head), final=False)
        pending = len(decoder.getstate()[0])
        start = 0
        while start < min(3, len(self.tail)) and 0x80 <= self.tail[start] <= 0xBF:
            start += 1
        tail = bytes(self.tail[start:]).decode("utf-8", "replace")
        head, tail = redact_piece(head, cut_after=True), redact_piece(tail, cut_before=True)
        omitted += pending + start
        sep = "" if not head or head.endswith("\n") else "\n"
        note = f"[... {omitted} bytes omitted of {self.total} bytes ...]"
        return f"{head}{sep}{note}\n{tail}"


async def _pump(stream: anyio.abc.ByteReceiveStream, capture: _Capture, done: anyio.Event) -> None:
    """Read ``stream`` into ``capture`` until its end; then set ``done``."""
    try:
        async for chunk in stream:
            capture.add(chunk)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass
    finally:
        done.set()


async def _stop_group(process: anyio.abc.Process, output_done: anyio.Event) -> None:
    """SIGTERM the command's group, SIGKILL it after ``KILL_GRACE_S``, reap the leader.

    The grace ends early once the leader has exited and the output pipe is closed (every
    process that held it is gone).
    """
    signal_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(KILL_GRACE_S):
        await process.wait()
        await output_done.wait()
    signal_group(process.pid, signal.SIGKILL)
    with anyio.move_on_after(REAP_S):
        await process.wait()


async def _kill_now(process: anyio.abc.Process) -> None:
    """SIGKILL the command's group at once and reap the leader, even inside a cancelled scope."""
    signal_group(process.pid, signal.SIGKILL)
    with anyio.CancelScope(shield=True), anyio.move_on_after(REAP_S):
        await process.wait()


def _pid(process: anyio.abc.Process) -> int:
    return process.pid


def _status(returncode: int | None) -> str:
    """The first line the model reads: the exit code, or the signal that ended the command."""
    if returncode is None:
        return "the command did not exit"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "unknown signal"
        return f"the command was killed by signal {-returncode} ({name})"
    return f"exit code {returncode}"


class RunCommandArgs(ToolArgs):
    """Arguments of the tool."""

    command: str = Field(min_length=1, description="The shell command line to run.")
    cwd: str | None = Field(
        default=None,
        description="Folder to run in, relative to the workspace root (default: the root).",
    )
    timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT_S,
        description=(
            f"Seconds before the command is stopped (default {DEFAULT_TIMEOUT_S:g}, "
            f"at most {MAX_TIMEOUT_S:g})."
        ),
    )


class RunCommand(Tool[RunCommandArgs]):
    """Run a shell command in the workspace and report its exit code and bounded output.

    The result's ``content`` is a status line (``exit code N``, ``the command was killed by
    signal N (NAME)``, or ``timed out after N s``) followed by the merged stdout and stderr:
    at most ``max_output_bytes`` bytes of it, the first and the last halves, with a note
    ``[... N bytes omitted of M bytes ...]`` in between when the output was longer.

    ``is_error`` is true when the command exited non-zero, was killed by a signal or timed
    out, so editors show the call as failed; a non-zero exit is still an ordinary result the
    model reads (a failing test run is information, not a broken tool call).

    Processes the command leaves running in the background are stopped when it ends (they
    share its process group); a program that must outlive the call has to leave the group
    itself (``setsid``), and its output is then not waited for beyond ``DRAIN_S``.

    Args:
        default_timeout_s: Seconds a command may run when the call names no ``timeout_s``;
            greater than 0 and at most ``MAX_TIMEOUT_S``.
        max_output_bytes: Bytes of output the model reads at most; greater than 0.

    Raises:
        ValueError: A setting out of range.
    """

    name = "run_command"
    description = (
        "Run a shell command (bash) in the workspace and return its exit code and output "
        "(stdout and stderr together). `cwd` is a folder relative to the workspace root "
        "(default: the root). There is no input: interactive programs get end-of-file, so "
        "pass flags such as --yes or --no-pager. Long output keeps its beginning and end, "
        "with the number of bytes left out. The command is stopped after `timeout_s` "
        "seconds; processes it starts in the background are stopped when it ends."
    )
    args_model = RunCommandArgs
    kind: ClassVar[ToolKind] = "execute"
    read_only = False
    timeout_s = MAX_TIMEOUT_S + 30.0
    """The dispatcher's outer bound (seconds): above the largest command timeout plus the
    stopping grace, so the tool's own timeout fires first and reports the output so far."""

    def __init__(
        self,
        *,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        if not 0 < default_timeout_s <= MAX_TIMEOUT_S:
            raise ValueError(
                f"default_timeout_s must be greater than 0 and at most {MAX_TIMEOUT_S:g} s, "
                f"not {default_timeout_s:g}"
            )
        if max_output_bytes <= 0:
            raise ValueError(f"max_output_bytes must be greater than 0, not {max_output_bytes}")
        self.default_timeout_s = default_timeout_s
        self.max_output_bytes = max_output_bytes
        self.shell = shutil.which("bash") or "/bin/sh"

    @override
    def spec(self) -> ToolSpec:
        spec = super().spec()
        if self.default_timeout_s == DEFAULT_TIMEOUT_S:
            return spec
        parameters = dict(spec.parameters)
        properties = dict(parameters["properties"])
        properties["timeout_s"] = {
            **properties["timeout_s"],
            "description": (
                f"Seconds before the command is stopped (default {self.default_timeout_s:g}, "
                f"at most {MAX_TIMEOUT_S:g})."
            ),
        }
        parameters["properties"] = properties
        return spec.model_copy(update={"parameters": parameters})

    @override
    def title(self, args: RunCommandArgs) -> str:
        lines = args.command.strip().splitlines() or [""]
        shown = lines[0][:TITLE_CHARS]
        if len(lines) > 1 or len(lines[0]) > TITLE_CHARS:
            shown += "…"
        return f"running `{shown}`"

    @staticmethod
    def checked_cwd(args: RunCommandArgs, ctx: ToolContext) -> Path:
        """The command's folder, inside the workspace; the command checked for NUL.

        Raises:
            ToolError: ``cwd`` is outside the workspace or not a folder, or the command holds
                a NUL character.
        """
        cwd = resolve_in_workspace(ctx.root, args.cwd or ".")
        if not cwd.is_dir():
            what = "is not a folder" if cwd.exists() else "does not exist"
            raise ToolError(f"cwd {relative_name(ctx.root, cwd)} {what}")
        if "\x00" in args.command:
            raise ToolError("the command must not contain NUL characters")
        return cwd

    @override
    def precheck(self, args: RunCommandArgs, ctx: ToolContext) -> None:
        self.checked_cwd(args, ctx)

    @override
    async def invoke(self, args: RunCommandArgs, ctx: ToolContext) -> ToolResult:
        """Run the command; see the class docstring for the result.

        Raises:
            ToolError: ``cwd`` is outside the workspace or not a folder, the command holds a
                NUL character, or the shell cannot start.
        """
        cwd = self.checked_cwd(args, ctx)
        timeout_s = args.timeout_s if args.timeout_s is not None else self.default_timeout_s
        env = None if ctx.trusted_folder else await to_thread.run_sync(command_environment, cwd)
        spawn = anyio.open_process(
            [self.shell, "-c", args.command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        try:
            process = await start_group(spawn, _pid)
        except OSError as exc:
            raise ToolError(f"cannot start {self.shell}: {exc}") from None
        capture = _Capture(self.max_output_bytes)
        try:
            timed_out = await self._supervise(process, capture, timeout_s)
        except BaseException:  # cancelled (or broken): nothing of the command may outlive it
            await _kill_now(process)
            raise
        finally:
            forget(process.pid)
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await process.aclose()
        output = capture.text() or "(no output)"
        if timed_out:
            return ToolResult(
                content=(
                    f"timed out after {timeout_s:g} s; the command and its processes were "
                    f"stopped. Output so far:\n{output}"
                ),
                is_error=True,
            )
        return ToolResult(
            content=f"{_status(process.returncode)}\n{output}",
            is_error=process.returncode != 0,
        )

    async def _supervise(
        self, process: anyio.abc.Process, capture: _Capture, timeout_s: float
    ) -> bool:
        """Read the output while the command runs; stop its group when done or late.

        Returns:
            True when the command ran past ``timeout_s`` (seconds) and was stopped.
        """
        assert process.stdout is not None
        output_done = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_pump, process.stdout, capture, output_done)
            with anyio.move_on_after(timeout_s) as deadline:
                await process.wait()
            timed_out = deadline.cancelled_caught
            # The leader is reaped when it exited, so a live group means leftovers.
            if timed_out or signal_group(process.pid, 0):
                await _stop_group(process, output_done)
            with anyio.move_on_after(DRAIN_S):
                await output_done.wait()
            tg.cancel_scope.cancel()
        return timed_out
