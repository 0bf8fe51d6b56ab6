"""``cadenza run --interactive``: the person's next message, read from the terminal.

Each line is read by a daemon thread with ``os.read`` on the standard input, so a run that
ends (Ctrl-C while the prompt waits) never waits for a line, and no Python-level lock on
``sys.stdin`` is held at exit. An empty line or EOF (Ctrl-D) ends the conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading

from rich.console import Console

PROMPT = "[bold cyan]you>[/] "
"""Shown before each follow-up (on the display's console: stderr with ``--output json``)."""
HINT = "[dim]next message (an empty line or Ctrl-D ends the run)[/]"
READ_SIZE = 4096


class LineReader:
    """Lines of a file descriptor, one at a time, without blocking the event loop."""

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._buffer = b""
        self._eof = False

    async def readline(self) -> str | None:
        """The next line without its newline, or None at EOF (a last unended line counts)."""
        while b"\n" not in self._buffer and not self._eof:
            chunk = await self._read_chunk()
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True
        if b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
        elif self._buffer:
            line, self._buffer = self._buffer, b""
        else:
            return None
        return line.decode("utf-8", errors="replace").rstrip("\r")

    async def _read_chunk(self) -> bytes:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bytes] = loop.create_future()

        def settle(data: bytes) -> None:
            if not done.done():
                done.set_result(data)

        def read() -> None:
            try:
                data = os.read(self._fd, READ_SIZE)
            except OSError:
                data = b""
            # The loop may be gone when the run ended while this thread waited for a line.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, data)

        threading.Thread(target=read, name="cadenza-stdin", daemon=True).start()
        return await done


async def next_message(console: Console, reader: LineReader) -> str | None:
    """Ask the person for the next message; None when they end the conversation."""
    console.print(HINT)
    console.print(PROMPT, end="")
    line = await reader.readline()
    if line is None:
        console.print()  # EOF left the cursor after the prompt
        return None
    text = line.strip()
    return text or None


async def ask(console: Console, reader: LineReader) -> tuple[str | None, signal.Signals | None]:
    """:func:`next_message`, with Ctrl-C (or SIGTERM) ending the wait at once.

    Returns:
        The message (None: the conversation ends) and the signal that stopped the wait, if any.
    """
    task = asyncio.create_task(next_message(console, reader))
    stopped: list[signal.Signals] = []

    def stop(signum: signal.Signals) -> None:
        stopped.append(signum)
        task.cancel()

    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop, signum)
    try:
        text = await task
        # A signal handled while the line (or EOF) came in still ends the run as a signal.
        return (None, stopped[0]) if stopped else (text, None)
    except asyncio.CancelledError:
        if not stopped:
            raise
        console.print()
        return None, stopped[0]
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
