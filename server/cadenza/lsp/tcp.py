"""``cadenza serve --tcp HOST:PORT``: the LSP face on a TCP socket, guarded like ``--ws``.

A plain TCP port is reachable from every program on the machine and from every web page the
person's browser opens (a ``fetch`` to ``http://127.0.0.1:PORT`` sends ``POST / HTTP/1.1``
and a JSON body), and the server behind it runs commands. pygls's ``start_tcp`` takes whatever
connects as the client; this server takes a connection as the client only once its first
frame checks out:

- **Interface and token** (``lsp.guard``, the rules of ``--ws``): loopback only unless
  ``--allow-remote`` with ``CADENZA_SERVE_TOKEN`` set. With a token set, the first message must
  be ``initialize`` carrying it as ``initializationOptions.token`` (the one setting every LSP
  client lets a person fill in); it is removed before the server reads the options.
- **An LSP frame first**: the connection must open with a header block of LSP headers
  (``Content-Length``, ``Content-Type``) and a body of the announced length, within
  ``FIRST_FRAME_TIMEOUT_S``. Anything else (an HTTP request line, a silent or closed
  connection such as a port scan's) is closed unanswered; the server and its sessions never
  see it.
- **One client at a time**: while one is served, a new connection gets a JSON-RPC error and
  is closed; it never takes the writer. When the client's connection ends, the server stops,
  as over stdio.

After its first frame, the client's stream is read by ``framing.serve_messages``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from typing import Any

from pygls.lsp.server import LanguageServer

from cadenza.lsp.framing import MAX_CONTENT_LENGTH, MAX_HEADER_LINE, serve_messages
from cadenza.lsp.guard import check_address, configured_token, token_matches
from cadenza.lsp.protocol import CadenzaProtocol

log = logging.getLogger(__name__)

FIRST_FRAME_TIMEOUT_S = 30.0
"""Seconds a new connection has to send its first whole frame."""

MAX_WAITING = 16
"""Connections that may be sending their first frame at once; more are closed."""

LINGER_S = 1.0
"""Seconds a refused connection is given to read its answer."""

_LSP_HEADERS = frozenset({b"content-length", b"content-type"})
_INVALID_REQUEST = -32600
_WHERE = "initialize's initializationOptions.token"


class NotTheClient(Exception):
    """Why a connection is not taken as the client (said in the log)."""

    def __init__(
        self, reason: str, *, reply: bool = False, msg_id: int | str | None = None
    ) -> None:
        """Refuse a connection.

        Args:
            reason: What was wrong, for the log (and the reply).
            reply: Answer request ``msg_id`` with an error saying ``reason``; False for a peer
                that does not speak LSP: it is closed without a word.
            msg_id: The id of the refused request (None: the null id).
        """
        super().__init__(reason)
        self.reply = reply
        self.msg_id = msg_id


def _content_length(line: bytes) -> int | None:
    """The length a header line announces (None: a ``Content-Type`` line).

    Raises:
        NotTheClient: The line is not an LSP header, or the length is not usable.
    """
    name, sep, value = line.partition(b":")
    if not sep or name.lower() not in _LSP_HEADERS:
        raise NotTheClient(f"not an LSP frame: {line[:40]!r}")
    if name.lower() != b"content-length":
        return None
    digits = value.strip()
    if not digits.isdigit() or int(digits) > MAX_CONTENT_LENGTH:
        raise NotTheClient(f"not an LSP frame: Content-Length {digits[:20]!r}")
    return int(digits)


async def read_first_frame(reader: asyncio.StreamReader) -> bytes:
    """The body of the connection's first frame, read by the book.

    Raises:
        NotTheClient: The bytes are not an LSP frame, or the stream ended before its end.
    """
    length: int | None = None
    for count in range(len(_LSP_HEADERS) + 1):
        try:
            line = await reader.readline()
        except ValueError:  # longer than the reader's limit
            raise NotTheClient("not an LSP frame: an overlong first line") from None
        if not line.endswith(b"\n"):
            raise NotTheClient("closed before a whole LSP frame")
        if line.rstrip(b"\r\n") == b"":
            if count == 0:
                raise NotTheClient("not an LSP frame: a blank first line")
            break
        announced = _content_length(line)
        length = length if announced is None else announced
    else:
        raise NotTheClient("not an LSP frame: more header lines than LSP has")
    if length is None:
        raise NotTheClient("not an LSP frame: no Content-Length")
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        raise NotTheClient("closed before a whole LSP frame") from None


def _request_id(body: bytes) -> int | str | None:
    """The id of the request in ``body`` (None: not a request, not JSON, an unusable id)."""
    try:
        message: Any = json.loads(body)
    except (ValueError, RecursionError):
        return None
    msg_id = message.get("id") if isinstance(message, dict) else None
    return msg_id if isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool) else None


def take_token(body: bytes, token: str) -> bytes:
    """The first message without its token, once the token is the one required.

    Raises:
        NotTheClient: The message is not ``initialize`` with ``initializationOptions.token``
            equal to ``token``.
    """
    try:
        message: Any = json.loads(body)
    except (ValueError, RecursionError):
        raise NotTheClient("the first message is not JSON") from None
    if not isinstance(message, dict):
        raise NotTheClient("the first message is not a JSON object")
    msg_id = _request_id(body)
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    given = options.pop("token", None) if isinstance(options, dict) else None
    if message.get("method") != "initialize" or not isinstance(given, str):
        raise NotTheClient(f"a token is required ({_WHERE})", reply=True, msg_id=msg_id)
    if not token_matches(given, token):
        raise NotTheClient("a wrong token", reply=True, msg_id=msg_id)
    return json.dumps(message, separators=(",", ":")).encode()


async def _close(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, refusal: NotTheClient | None
) -> None:
    """Close a connection that is not the client, with the refusal's reply if it has one.

    A reply is followed by the end of the stream, then what the peer still sends is read
    and dropped for up to ``LINGER_S``: closing a socket with unread data resets it, and the
    peer would lose the answer.
    """
    with contextlib.suppress(OSError, TimeoutError, ValueError):
        if refusal is not None and refusal.reply:
            error = {"code": _INVALID_REQUEST, "message": f"refused: {refusal}"}
            body = json.dumps({"jsonrpc": "2.0", "id": refusal.msg_id, "error": error}).encode()
            writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            writer.write_eof()
            async with asyncio.timeout(LINGER_S):
                while await reader.read(MAX_HEADER_LINE):
                    pass
    writer.close()
    with contextlib.suppress(OSError, TimeoutError):
        await asyncio.wait_for(writer.wait_closed(), LINGER_S)


class _Gate:
    """Accepts the first connection whose first frame checks out; refuses all others."""

    def __init__(self, server: LanguageServer, token: str | None, stop: threading.Event) -> None:
        self.server = server
        self.token = token
        self.stop = stop
        self.client: asyncio.StreamWriter | None = None
        self.waiting = 0

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve the connection if it is the client, else close it."""
        peer = writer.get_extra_info("peername")
        if self.waiting >= MAX_WAITING:
            log.warning("TCP connection from %s refused: too many waiting connections", peer)
            await _close(reader, writer, None)
            return
        self.waiting += 1
        try:
            body = await self._first_message(reader)
        except NotTheClient as exc:
            log.warning("TCP connection from %s refused: %s", peer, exc)
            await _close(reader, writer, exc)
            return
        finally:
            self.waiting -= 1
        await self._serve(reader, writer, body)

    async def _first_message(self, reader: asyncio.StreamReader) -> bytes:
        """The first message of a connection that may become the client (token removed).

        Raises:
            NotTheClient: It may not (see the module docstring).
        """
        try:
            async with asyncio.timeout(FIRST_FRAME_TIMEOUT_S):
                body = await read_first_frame(reader)
        except TimeoutError:
            raise NotTheClient("no LSP frame in time") from None
        if self.client is not None:
            raise NotTheClient("another client is connected", reply=True, msg_id=_request_id(body))
        return body if self.token is None else take_token(body, self.token)

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bytes
    ) -> None:
        self.client = writer
        protocol = self.server.protocol
        assert isinstance(protocol, CadenzaProtocol)
        protocol.set_writer(writer)
        try:
            protocol.handle_body(first)
            await serve_messages(self.stop, reader, protocol)
        finally:
            self.server.shutdown()  # type: ignore[no-untyped-call]  # one client, as over stdio


def serve_tcp(server: LanguageServer, host: str, port: int, *, allow_remote: bool = False) -> None:
    """Serve ``server`` on ``HOST:PORT`` until its client disconnects or exits.

    Raises:
        ServeRefused: ``host`` is not loopback and ``allow_remote`` or the token is missing.
        OSError: The address cannot be listened on (in use, not this machine's).
    """
    token = configured_token()
    check_address("--tcp", host, allow_remote=allow_remote, token=token)
    # As pygls's start_tcp does: its shutdown() (on ``exit``) sets the event, closes the server.
    server._stop_event = stop = threading.Event()
    gate = _Gate(server, token, stop)

    async def main() -> None:
        listening = await asyncio.start_server(gate.connection, host, port, limit=MAX_HEADER_LINE)
        server._server = listening
        addresses = ", ".join(str(s.getsockname()) for s in listening.sockets)
        log.warning("cadenza serve: TCP on %s", addresses)
        async with listening:
            await listening.serve_forever()

    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        log.debug("the TCP server was cancelled")
