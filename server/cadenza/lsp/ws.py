"""``cadenza serve --ws HOST:PORT``: the LSP face over a WebSocket, for browser-based editors.

pygls's own ``start_ws`` accepts any connection. A WebSocket is reachable from every web page
the person's browser opens, and this server runs commands: a page of another origin must not
be able to drive it. So this transport (pygls's ``run_websocket`` message loop, served here)
checks each upgrade request before it is accepted:

- **Origin**: a request with an ``Origin`` header (every browser sends one) is refused unless
  that origin is a loopback page (``http://localhost:PORT``, ``http://127.0.0.1:PORT``,
  ``http://[::1]:PORT``) or named with ``--ws-origin``. Requests without ``Origin`` come from
  programs, not pages, and pass this check.
- **Token**: when ``CADENZA_SERVE_TOKEN`` is set, the request must carry it as the ``token``
  query parameter (browsers cannot set headers on a WebSocket).
- **Interface**: only loopback addresses unless ``--allow-remote`` with a token
  (``lsp.guard``, the same rules as ``--tcp``).

Messages go out as text frames (``_TextFrames``), which browsers hand to pages as strings. Each
frame received (text or binary) is one message body, checked and answered as over stdio
(``CadenzaProtocol.handle_body``: a body that is not JSON or not a JSON-RPC message gets an
error answer; pygls's own loop drops it unanswered). One client at a time, as over stdio: a
second connection while one is open is refused (HTTP 409), and when the client's connection
closes, the server stops.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pygls.io_ import WebSocketWriter
from pygls.lsp.server import LanguageServer

from cadenza.lsp.framing import MAX_CONTENT_LENGTH
from cadenza.lsp.guard import check_address, configured_token, is_loopback, token_matches
from cadenza.lsp.protocol import CadenzaProtocol

log = logging.getLogger(__name__)


def origin_allowed(origin: str, extra: Sequence[str]) -> bool:
    """Whether a page of ``origin`` may connect: a loopback page or one named in ``extra``."""
    if origin in extra:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and is_loopback(parts.hostname or "")


def check_request(
    path: str, origin: str | None, *, token: str | None, origins: Sequence[str]
) -> str | None:
    """Why the upgrade request for ``path`` with ``origin`` is refused, or None to accept.

    Args:
        path: The request target (``/`` or ``/?token=...``).
        origin: The ``Origin`` header, None when absent.
        token: The token required, or None.
        origins: Origins allowed besides loopback pages.
    """
    if origin is not None and not origin_allowed(origin, origins):
        return f"origin {origin!r} is not allowed (see --ws-origin)"
    if token is not None:
        given = parse_qs(urlsplit(path).query).get("token", [""])[0]
        if not token_matches(given, token):
            return "a missing or wrong token"
    return None


class _TextFrames:
    """The connection, with every message sent as a text frame.

    pygls's ``WebSocketWriter`` sends the encoded JSON as bytes, i.e. binary frames, which a
    browser hands to the page as a ``Blob``: browser LSP clients (``@codemirror/lsp-client``)
    ``JSON.parse`` the frame's data and never see an answer. LSP over WebSocket is JSON text.
    """

    def __init__(self, websocket: Any) -> None:
        self._ws = websocket

    def recv(self, decode: bool | None = None) -> Any:
        return self._ws.recv(decode=decode)

    def send(self, data: bytes | str) -> Any:
        return self._ws.send(data.decode("utf-8") if isinstance(data, bytes) else data)

    def close(self) -> Any:
        return self._ws.close()


async def serve_connection(
    websocket: Any, stop_event: threading.Event, protocol: CadenzaProtocol
) -> None:
    """Hand every frame of ``websocket`` to ``protocol`` until it closes or the server stops."""
    from websockets.exceptions import ConnectionClosed

    writer = WebSocketWriter(_TextFrames(websocket))  # type: ignore[arg-type]
    protocol.set_writer(writer, include_headers=False)
    while not stop_event.is_set():
        try:
            data = await websocket.recv(decode=False)
        except ConnectionClosed:
            break
        try:
            protocol.handle_body(data)
        except Exception:
            log.exception("Unable to handle a WebSocket message")


def serve_ws(
    server: LanguageServer,
    host: str,
    port: int,
    *,
    allow_remote: bool = False,
    origins: Sequence[str] = (),
) -> None:
    """Serve ``server`` on ``ws://HOST:PORT`` until its client disconnects or exits.

    Raises:
        ServeRefused: ``host`` is not loopback and ``allow_remote`` or the token is missing.
    """
    from websockets.asyncio.server import ServerConnection, serve
    from websockets.http11 import Request, Response

    token = configured_token()
    check_address("--ws", host, allow_remote=allow_remote, token=token)
    clients: set[ServerConnection] = set()

    def process_request(connection: ServerConnection, request: Request) -> Response | None:
        refusal = check_request(
            request.path, request.headers.get("Origin"), token=token, origins=origins
        )
        if refusal is None and not clients:
            return None
        if refusal is None:
            log.warning("WebSocket connection refused: another client is connected")
            busy = "refused: another client is connected\n"
            return connection.respond(HTTPStatus.CONFLICT, busy)
        log.warning("WebSocket connection refused: %s", refusal)
        return connection.respond(HTTPStatus.FORBIDDEN, f"refused: {refusal}\n")

    # As pygls's start_ws does: its shutdown() (on ``exit``) sets the event, closes the server.
    server._stop_event = stop_event = threading.Event()

    async def connection(websocket: ServerConnection) -> None:
        if clients:  # two upgrades accepted before either connection started
            await websocket.close(1013, "another client is connected")
            return
        clients.add(websocket)
        protocol = server.protocol
        assert isinstance(protocol, CadenzaProtocol)
        try:
            await serve_connection(websocket, stop_event, protocol)
        finally:
            await websocket.close()
            server.shutdown()  # type: ignore[no-untyped-call]  # one client, as over stdio

    async def main() -> None:
        listening = await serve(
            connection, host, port, process_request=process_request, max_size=MAX_CONTENT_LENGTH
        )
        server._server = listening
        addresses = ", ".join(str(s.getsockname()) for s in listening.sockets)
        log.warning("cadenza serve: WebSocket on %s", addresses)
        async with listening:
            await listening.serve_forever()

    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        log.debug("the WebSocket server was cancelled")
