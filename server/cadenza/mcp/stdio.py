"""A stdio MCP server in a process group Cadenza owns, stopped as a whole when it closes.

The SDK's ``stdio_client`` starts a server in a new session (its own process group) but
signals that group only when the server is still alive after its grace; a server that exits
promptly once its stdin closes leaves whatever it started (a worker, a language server, a
watcher) running after the session, and the SDK offers no way to reach the group afterwards.
So this transport spawns the server itself, in a new session, and its end follows the MCP
lifecycle's shutdown (stdin closed, a grace to exit) and then, always, the group's end as
``run_command`` does it: SIGTERM to the group, SIGKILL after ``KILL_GRACE_S``. Groups still
alive when the Cadenza process exits, or the server gets SIGTERM, are killed then
(``cadenza.procgroups``).

Messages are newline-delimited JSON-RPC, parsed and serialized as the SDK's transport does.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TextIO

import anyio
import anyio.abc
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from anyio.streams.text import TextReceiveStream
from mcp import StdioServerParameters
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from cadenza.procgroups import forget, signal_group, start_group

log = logging.getLogger(__name__)

EXIT_GRACE_S = 2.0
"""Seconds the server has to exit on its own once its stdin is closed (the SDK's too)."""

FLUSH_S = 0.5
"""Seconds for messages already accepted to reach the server's stdin before it closes."""

KILL_GRACE_S = 1.0
"""Seconds between SIGTERM and SIGKILL to the server's process group."""

REAP_S = 2.0
"""Seconds to wait for the killed server to be reaped (one stuck in the kernel is left)."""

POLL_S = 0.02


async def stop_group(process: anyio.abc.Process) -> None:
    """End the server's whole process group: SIGTERM, SIGKILL after ``KILL_GRACE_S``, reap.

    The group outlives its leader while a process it started runs; the leader's pid is the
    group's id (a new session). The grace ends early once the group is empty. Safe to call
    under cancellation: every wait is bounded and shielded.
    """
    pgid = process.pid
    with anyio.CancelScope(shield=True):
        if signal_group(pgid, signal.SIGTERM):
            with anyio.move_on_after(KILL_GRACE_S):
                while signal_group(pgid, 0):
                    await anyio.sleep(POLL_S)
            signal_group(pgid, signal.SIGKILL)
        forget(pgid)
        with anyio.move_on_after(REAP_S):
            await process.wait()
        with contextlib.suppress(OSError, anyio.BrokenResourceError):
            await process.aclose()


def _parse(line: str) -> SessionMessage | Exception:
    """One stdout line as a message; a parse error is handed to the session as a value."""
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as exc:
        log.warning("MCP server sent a line that is not JSON-RPC: %s", exc)
        return exc
    return SessionMessage(message)


async def _read(
    process: anyio.abc.Process,
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    params: StdioServerParameters,
) -> None:
    """Server stdout → session, one message per line.

    Once the session stops listening the rest is drained: a server blocked on a full pipe
    could not exit.
    """
    assert process.stdout is not None
    stdout = TextReceiveStream(
        process.stdout, encoding=params.encoding, errors=params.encoding_error_handler
    )
    listening = True
    buffer = ""
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        async with sink:
            async for chunk in stdout:
                lines = (buffer + chunk).split("\n")
                buffer = lines.pop()
                for line in lines if listening else ():
                    try:
                        await sink.send(_parse(line))
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        listening = False
                        break


async def _write(
    process: anyio.abc.Process,
    source: MemoryObjectReceiveStream[SessionMessage],
    params: StdioServerParameters,
    done: anyio.Event,
) -> None:
    """Session → server stdin, one JSON line per message."""
    assert process.stdin is not None
    try:
        async with source:
            async for message in source:
                json = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                data = (json + "\n").encode(params.encoding, errors=params.encoding_error_handler)
                await process.stdin.send(data)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        pass
    finally:
        done.set()


async def _wait_exit(process: anyio.abc.Process, timeout_s: float) -> None:
    """Wait up to ``timeout_s`` for the server to exit.

    By its returncode, not its pipes: a child holding stdout open would make an exited
    server look alive.
    """
    with anyio.move_on_after(timeout_s):
        while process.returncode is None:
            await anyio.sleep(POLL_S)


async def _close_stdin(process: anyio.abc.Process) -> None:
    assert process.stdin is not None
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()


@asynccontextmanager
async def stdio_server(
    params: StdioServerParameters, errlog: TextIO | None = None
) -> AsyncIterator[TransportStreams]:
    """Start the server in a group of its own; its read and write streams while it runs.

    On exit (also when cancelled): stop listening, flush, close stdin, give the server
    ``EXIT_GRACE_S`` to exit, then end its whole group (``stop_group``).

    Raises:
        OSError: The server could not be started.
    """
    spawn = anyio.open_process(
        [params.command, *params.args],
        env=get_default_environment() | (params.env or {}),
        cwd=params.cwd,
        stderr=errlog or sys.stderr,
        start_new_session=True,
    )
    process = await start_group(spawn, lambda started: started.pid)
    try:
        async with _bridge(process, params) as streams:
            yield streams
    finally:
        await stop_group(process)


@asynccontextmanager
async def _bridge(
    process: anyio.abc.Process, params: StdioServerParameters
) -> AsyncIterator[TransportStreams]:
    """The session's streams, pumped to and from the server's pipes.

    On exit, the MCP shutdown: stop listening, flush, close stdin, and wait up to
    ``EXIT_GRACE_S`` for the server to exit.
    """
    sink, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, source = anyio.create_memory_object_stream[SessionMessage](0)
    written = anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_read, process, sink, params)
        tasks.start_soon(_write, process, source, params, written)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                with anyio.move_on_after(FLUSH_S):
                    await written.wait()
                await _close_stdin(process)
                await _wait_exit(process, EXIT_GRACE_S)
            tasks.cancel_scope.cancel()  # the reader may wait on a pipe a worker holds open
