"""Agent CLIs as model backends (``cli/NAME[/MODEL]``): each call runs the CLI once.

Names: ``cli/claude``, ``cli/codex``, ``cli/gemini``, ``cli/opencode``, ``cli/grok``; how each
is invoked and read is in ``cli_adapters``, the prompt contract and its exactly-once repair in
``cli_turn``. This module runs the processes.

Each call runs the CLI in its own process group, in an empty temporary folder (its own agent
tools see nothing of the workspace: Cadenza's tools act through the envelope), with a time
limit; on timeout or cancellation the whole group is killed at once (SIGKILL).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import anyio

from cadenza.messages import AssistantReply
from cadenza.procgroups import forget, signal_group, start_group
from cadenza.providers.base import ModelRequest, ProviderError, TextSink
from cadenza.providers.cli_adapters import CliAdapter
from cadenza.providers.cli_turn import CliAnswer, cli_turn
from cadenza.secrets import redact, secret_from_env

DEFAULT_TIMEOUT_S = 300.0
"""Longest time one CLI call may take before it is killed (seconds)."""
STDERR_TAIL_CHARS = 600
"""How much of a failed CLI's stderr goes into the error (its last characters)."""
REAP_TIMEOUT_S = 5.0
"""How long to wait for a killed process to be reaped (seconds)."""
CLI_KEY_ENV = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "XAI_API_KEY",
    "GROK_API_KEY",
    "OPENROUTER_API_KEY",
)
"""Keys a CLI may read from the environment it inherits: hidden from errors if it prints one."""


def _kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the process's whole group (it leads a session of its own); it is done with."""
    signal_group(process.pid, signal.SIGKILL)
    forget(process.pid)


async def _reap(process: asyncio.subprocess.Process) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(REAP_TIMEOUT_S):
        await process.wait()


@dataclass(frozen=True, kw_only=True)
class CliResult:
    """A finished CLI call: exit status and decoded output."""

    returncode: int
    stdout: str
    stderr: str


async def run_process(
    argv: list[str], stdin: str | None, *, timeout_s: float, cwd: Path, who: str
) -> CliResult:
    """Run ``argv`` in a new process group; kill the group on timeout or cancellation.

    Args:
        argv: The command line.
        stdin: Text for stdin (then closed), or None for no stdin.
        timeout_s: Limit for the whole call (seconds).
        cwd: Working folder.
        who: Names the provider in errors.

    Raises:
        ProviderError: The program cannot start, or it ran past ``timeout_s`` (it is killed).
    """
    spawn = asyncio.create_subprocess_exec(
        *argv,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        start_new_session=True,
    )
    try:
        process = await start_group(spawn, lambda started: started.pid)
    except OSError as exc:
        raise ProviderError(f"{who}: cannot run {argv[0]}: {exc}") from None
    data = stdin.encode("utf-8") if stdin is not None else None
    try:
        with anyio.fail_after(timeout_s):
            out, err = await process.communicate(data)
    except TimeoutError:
        _kill_group(process)
        await _reap(process)
        raise ProviderError(
            f"{who}: {Path(argv[0]).name} gave no answer within {timeout_s:g} s and was stopped"
        ) from None
    except BaseException:  # cancelled: the CLI must not outlive the turn
        _kill_group(process)
        await _reap(process)
        raise
    _kill_group(process)  # whatever it left running in its group
    returncode = process.returncode if process.returncode is not None else -1
    return CliResult(
        returncode=returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
    )


class CliProvider:
    """``cli/NAME[/MODEL]``: an agent CLI driven through the JSON-envelope prompt contract.

    Args:
        name: ``PROVIDER/MODEL`` as the person named it (e.g. ``cli/claude``).
        adapter: How to run the CLI.
        model: The CLI's own model (``--model``), or None for its default.
        executable: Replaces the adapter's program (name or path).
        args: Replaces the adapter's ``args``.
        timeout_s: Limit per CLI call (seconds).
    """

    def __init__(
        self,
        *,
        name: str,
        adapter: CliAdapter,
        model: str | None = None,
        executable: str | None = None,
        args: list[str] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._name = name
        self.adapter = adapter if args is None else replace(adapter, args=tuple(args))
        self.model = model
        self.executable = executable or os.environ.get(adapter.env_var) or adapter.executable
        self.timeout_s = timeout_s
        self._ids = itertools.count(1)
        for variable in CLI_KEY_ENV:
            secret_from_env(variable)

    @property
    def name(self) -> str:
        """``PROVIDER/MODEL``."""
        return self._name

    def _program(self) -> str:
        found = shutil.which(self.executable)
        if found is None:
            raise ProviderError(
                f"{self._name}: {self.executable!r} is not installed or not on PATH "
                f"(set {self.adapter.env_var} to its path)"
            )
        return found

    async def run_once(self, prompt: str) -> CliAnswer:
        """Run the CLI once on ``prompt`` and find the answer in its output.

        Raises:
            ProviderError: Not installed, timed out, exited non-zero (with its stderr's tail),
                or printed no answer in the adapter's format.
        """
        argv = self.adapter.argv(self._program(), self.model, prompt)
        stdin = prompt if self.adapter.prompt_via == "stdin" else None
        with tempfile.TemporaryDirectory(prefix="cadenza-cli-") as folder:
            result = await run_process(
                argv, stdin, timeout_s=self.timeout_s, cwd=Path(folder), who=self._name
            )
        if result.returncode != 0:
            # Redacted before the tail is taken: a key cut by it would no longer match.
            tail = (
                redact(result.stderr.strip())[-STDERR_TAIL_CHARS:]
                or redact(result.stdout.strip())[-200:]
            )
            raise ProviderError(
                redact(
                    f"{self._name}: {Path(argv[0]).name} exited with status "
                    f"{result.returncode}: {tail}"
                )
            )
        return self.adapter.read(result.stdout, self._name)

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        """Run one turn (see ``cli_turn``); the CLI's answer arrives whole, not streamed.

        Raises:
            ProviderError: As ``run_once``.
        """
        return await cli_turn(request, self.run_once, id_prefix=f"cli_{next(self._ids)}")

    async def aclose(self) -> None:
        """Nothing to release: each call's process is gone when the call returns."""
