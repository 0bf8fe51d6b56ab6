"""A tolerant, bounded reader of LSP base-protocol frames (replaces pygls's ``run_async``).

pygls's loop hangs on a header block without ``Content-Length`` (the next body is then read as
a header line), and allocates whatever ``Content-Length`` announces (``MemoryError``). This
loop:

- skips a header block whose ``Content-Length`` is missing, not a number or above
  ``MAX_CONTENT_LENGTH``, logging why, and reads on;
- finds ``Content-Length`` at the end of a line too (the last one on the line), so a stray body
  glued to the next message's first header line does not lose that message, even when the
  stray body holds the text ``Content-Length:``;
- reads header lines in bounded pieces, and finds a ``Content-Length`` split between two pieces
  (a stray body longer than a piece glued to the next message's header);
- hands each body to ``CadenzaProtocol.handle_body``, which answers malformed messages.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, BinaryIO, Protocol

if TYPE_CHECKING:
    from cadenza.lsp.protocol import CadenzaProtocol

log = logging.getLogger(__name__)

MAX_CONTENT_LENGTH = 64 * 1024 * 1024
"""The largest message body accepted (64 MiB); larger ones are skipped unread."""

MAX_HEADER_LINE = 64 * 1024
"""Header lines are read in pieces of at most this many bytes."""

_CARRY = 256
"""How much of an unterminated header piece is kept to find a header split across pieces."""

_CONTENT_LENGTH = re.compile(rb"content-length:[ \t]*([^\r\n]*?)[ \t]*\r?\n?\Z", re.IGNORECASE)


def _find_content_length(line: bytes) -> re.Match[bytes] | None:
    """The line's last ``Content-Length`` header (a stray body before it may hold the text)."""
    start = line.lower().rfind(b"content-length:")
    return _CONTENT_LENGTH.match(line, start) if start >= 0 else None


class AsyncReader(Protocol):
    """What the loop reads from: ``asyncio.StreamReader`` or ``BoundedStdinReader``."""

    def readline(self) -> Awaitable[bytes]:
        """The next line, with its newline (empty at end of stream)."""
        ...

    def readexactly(self, n: int) -> Awaitable[bytes]:
        """``n`` bytes (fewer, or ``IncompleteReadError``, at end of stream)."""
        ...


class BoundedStdinReader:
    """Reads a binary stream in an executor, header lines at most ``MAX_HEADER_LINE`` long."""

    def __init__(self, stdin: BinaryIO, executor: ThreadPoolExecutor | None) -> None:
        """Wrap ``stdin``.

        Args:
            stdin: The stream the client writes to.
            executor: Where the blocking reads run (None: asyncio's default).
        """
        self.stdin = stdin
        self.executor = executor

    def readline(self) -> Awaitable[bytes]:
        """The next line or ``MAX_HEADER_LINE`` bytes of it."""
        return asyncio.get_running_loop().run_in_executor(
            self.executor, self.stdin.readline, MAX_HEADER_LINE
        )

    def readexactly(self, n: int) -> Awaitable[bytes]:
        """Up to ``n`` bytes (fewer only at end of stream)."""
        return asyncio.get_running_loop().run_in_executor(self.executor, self.stdin.read, n)


def _parse_length(value: bytes) -> int | None:
    """The body length announced by a ``Content-Length`` value, or None when unusable."""
    if not value.isdigit():
        log.warning("Skipping a message: invalid Content-Length %r", value[:40])
        return None
    length = int(value)
    if length > MAX_CONTENT_LENGTH:
        log.error(
            "Skipping a message: Content-Length %d exceeds the limit of %d bytes",
            length,
            MAX_CONTENT_LENGTH,
        )
        return None
    return length


async def _read_header_block(reader: AsyncReader) -> int | bool | None:
    """Read one header block.

    Returns:
        The body length; None when the block had no usable ``Content-Length`` (skip it);
        False at end of stream.
    """
    length: int | None = None
    seen_content_length = False
    seen_header = False
    carry = b""  # the end of the previous piece when it was not a whole line
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # asyncio.StreamReader: a line above its limit (already dropped)
            log.warning("Skipping an overlong header line")
            seen_header = True
            carry = b""
            continue
        if not line:
            return False
        if not line.strip() and not carry:
            if not seen_header:
                continue  # stray blank line between messages
            if not seen_content_length:
                log.warning("Skipping a header block without Content-Length")
            return length
        seen_header = True
        # A long line comes in pieces: a header split between two pieces is still found.
        match = _find_content_length(carry + line)
        carry = b"" if line.endswith(b"\n") else line[-_CARRY:]
        if match:
            seen_content_length = True
            length = _parse_length(match.group(1))


async def serve_messages(
    stop_event: threading.Event, reader: AsyncReader, protocol: CadenzaProtocol
) -> None:
    """Read frames until end of stream or ``stop_event``, handing each body to ``protocol``.

    Args:
        stop_event: Set when the server shuts down.
        reader: The client's byte stream.
        protocol: Handles each message body.
    """
    while not stop_event.is_set():
        length = await _read_header_block(reader)
        if length is False:
            break
        if length is None or length is True:
            continue
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            break
        if len(body) < length:
            break
        try:
            protocol.handle_body(body)
        except Exception:
            log.exception("Unable to handle message")
