"""Start and stop llama.cpp's ``llama-server`` (its command line is ``llama_command``'s).

The server runs in its own process group on a free loopback port, logs to a file in the
platform's log folder (never a pipe that could fill up and stall it), and is stopped by
``stop()``, by an ``atexit`` hook, and on Linux by the kernel when the parent dies
(``PR_SET_PDEATHSIG``), so no orphan keeps gigabytes of memory.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import anyio
import httpx

from cadenza.providers.llama_command import (
    LlamaServerError,
    child_env,
    default_log_path,
    find_binary,
    free_port,
    server_command,
    usable_cores,
)

log = logging.getLogger(__name__)

STARTUP_TIMEOUT_S = 120.0
"""How long to wait for ``/health`` to answer 200 (seconds)."""
STOP_GRACE_S = 5.0
"""How long ``stop()`` waits after SIGTERM before SIGKILL (seconds)."""
POLL_INTERVAL_S = 0.1
"""Interval between health and exit polls (seconds)."""
LOG_ROTATE_BYTES = 5 << 20
"""The log file is rotated to ``.1`` at start when larger than this (bytes)."""
PORT_ATTEMPTS = 3
"""Starts tried when the chosen port was taken in the meantime."""

_LIVE: dict[int, subprocess.Popen[bytes]] = {}
"""Running servers by pid, stopped by the ``atexit`` hook."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    _PRCTL(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


_PRCTL: Any = None
if sys.platform.startswith("linux"):
    with contextlib.suppress(OSError, AttributeError):
        # Resolved here, not in the child, so the child only makes one libc call.
        _PRCTL = ctypes.CDLL(None, use_errno=True).prctl


def _open_log(path: Path) -> IO[bytes]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        if path.stat().st_size > LOG_ROTATE_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
    return path.open("ab")


def _read_tail(path: Path, offset: int, lines: int = 25) -> str:
    try:
        with path.open("rb") as f:
            f.seek(offset)
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.strip().splitlines()[-lines:]) or "(empty log)"


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    """Send ``sig`` to the server's process group (its own, from ``start_new_session``)."""
    if proc.poll() is not None:
        return
    try:
        if os.name == "posix":
            os.killpg(proc.pid, sig)
        elif sig == signal.SIGTERM:
            proc.terminate()
        else:
            proc.kill()
    except ProcessLookupError:
        pass


def _stop_all_at_exit() -> None:
    """Stop every server still running when the interpreter exits (SIGTERM, then SIGKILL)."""
    procs = list(_LIVE.values())
    _LIVE.clear()
    for proc in procs:
        _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + 2.0
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=2.0)


atexit.register(_stop_all_at_exit)


class LlamaServer:
    """A running llama-server; create it with ``await LlamaServer.start(...)``.

    Attributes:
        base_url: ``http://127.0.0.1:PORT`` (the OpenAI API is under ``/v1``).
        model_path: The GGUF file served.
        log_path: The file receiving the server's stdout and stderr.
        n_ctx: The context size the server reports (tokens), or None if it did not say.
        build: The server's ``build_info`` (e.g. ``b6123-abc1234``), or None if it did not say.
        binary: The executable run.
        startup_s: Seconds from spawn to the first 200 from ``/health``.
    """

    def __init__(
        self,
        *,
        proc: subprocess.Popen[bytes],
        port: int,
        model_path: Path,
        log_path: Path,
        startup_s: float,
        n_ctx: int | None,
    ) -> None:
        self._proc = proc
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"
        self.model_path = model_path
        self.log_path = log_path
        self.startup_s = startup_s
        self.n_ctx = n_ctx
        self.build: str | None = None
        self.binary = Path(proc.args[0]) if isinstance(proc.args, list) else None

    @property
    def pid(self) -> int:
        """The server's process id (also its process group id on POSIX)."""
        return self._proc.pid

    @property
    def running(self) -> bool:
        """Whether the process is still alive."""
        return self._proc.poll() is None

    @classmethod
    async def start(
        cls,
        model_path: Path,
        *,
        ctx_size: int = 8192,
        threads: int | None = None,
        binary: Path | None = None,
        log_path: Path | None = None,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
        agent_slots: int = 1,
        extra_args: Sequence[str] = (),
    ) -> LlamaServer:
        """Start llama-server on a free loopback port and wait until it serves.

        Args:
            model_path: The GGUF file.
            ctx_size: Context window (tokens).
            threads: CPU threads (default: every usable core).
            binary: The executable (default: ``find_binary()``).
            log_path: Where the output goes (default: ``default_log_path()``).
            startup_timeout_s: Limit for ``/health`` to answer 200 (seconds).
            agent_slots: Slots for agent requests made at once (``server_command``).
            extra_args: More llama-server flags.

        Returns:
            The running server.

        Raises:
            LlamaServerError: No binary, no model file, the process exited, or the timeout
                passed; the message ends with the tail of the log.
        """
        if not model_path.is_file():
            raise LlamaServerError(f"model file {model_path} does not exist")
        exe = binary or find_binary()
        log_file = log_path or default_log_path()
        last_error: LlamaServerError | None = None
        for _ in range(PORT_ATTEMPTS):
            port = free_port()
            cmd = server_command(
                exe,
                model_path,
                port=port,
                ctx_size=ctx_size,
                threads=threads or usable_cores(),
                agent_slots=agent_slots,
                extra_args=extra_args,
            )
            try:
                return await cls._launch(cmd, port, model_path, log_file, startup_timeout_s)
            except _PortTaken as exc:
                last_error = LlamaServerError(str(exc))
        assert last_error is not None
        raise last_error

    @classmethod
    async def _launch(
        cls, cmd: list[str], port: int, model_path: Path, log_path: Path, timeout_s: float
    ) -> LlamaServer:
        sink = _open_log(log_path)
        offset = sink.tell()
        sink.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(cmd)}\n".encode())
        sink.flush()
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=child_env(),
                start_new_session=True,
                preexec_fn=_die_with_parent if _PRCTL is not None else None,
            )
        except OSError as exc:
            raise LlamaServerError(f"cannot run {cmd[0]}: {exc}") from None
        finally:
            sink.close()  # the child holds its own descriptor
        _LIVE[proc.pid] = proc
        server = cls(
            proc=proc,
            port=port,
            model_path=model_path,
            log_path=log_path,
            startup_s=0.0,
            n_ctx=None,
        )
        try:
            await server._wait_healthy(timeout_s, offset)
            server.startup_s = time.monotonic() - started
            await server._read_props()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await server.stop()
            raise
        log.info(
            "llama-server pid %d on port %d ready in %.1f s (n_ctx=%s)",
            proc.pid,
            port,
            server.startup_s,
            server.n_ctx,
        )
        return server

    async def _wait_healthy(self, timeout_s: float, log_offset: int) -> None:
        deadline = time.monotonic() + timeout_s
        async with httpx.AsyncClient(base_url=self.base_url, trust_env=False) as client:
            while True:
                code = self._proc.poll()
                if code is not None:
                    tail = _read_tail(self.log_path, log_offset)
                    if "bind" in tail.lower() and "port" in tail.lower():
                        raise _PortTaken(f"port {self.port} was taken:\n{tail}")
                    raise LlamaServerError(
                        f"llama-server exited with status {code} while starting "
                        f"(log: {self.log_path}):\n{tail}"
                    )
                try:
                    response = await client.get("/health", timeout=2.0)
                    if response.status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    tail = _read_tail(self.log_path, log_offset)
                    raise LlamaServerError(
                        f"llama-server did not become healthy within {timeout_s:.0f} s "
                        f"(log: {self.log_path}):\n{tail}"
                    )
                await anyio.sleep(POLL_INTERVAL_S)

    async def _read_props(self) -> None:
        """``n_ctx`` (``default_generation_settings.n_ctx``) and ``build_info`` from ``/props``."""
        try:
            async with httpx.AsyncClient(base_url=self.base_url, trust_env=False) as client:
                data = (await client.get("/props", timeout=5.0)).json()
        except (httpx.HTTPError, ValueError):
            return
        if not isinstance(data, dict):
            return
        settings = data.get("default_generation_settings")
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        self.n_ctx = n_ctx if isinstance(n_ctx, int) else None
        build = data.get("build_info")
        self.build = build if isinstance(build, str) and build else None

    async def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Stop the server: SIGTERM to its process group, SIGKILL after ``grace_s`` seconds.

        Idempotent; returns once the process is reaped.
        """
        proc = self._proc
        _LIVE.pop(proc.pid, None)
        _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while proc.poll() is None and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        if proc.poll() is None:
            _signal_group(proc, signal.SIGKILL)
            await anyio.to_thread.run_sync(proc.wait)


class _PortTaken(LlamaServerError):
    """The free port was taken between choosing it and the server binding it."""
