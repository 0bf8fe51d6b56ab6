"""Answer LSP's ``initialize`` before pygls is imported: the editor's client starts at once.

pygls needs ``lsprotocol.types`` (about a thousand attrs classes) before it can read a single
message, and the server behind it loads the configuration with pydantic: most of
``cadenza serve``'s start-up. The answer to ``initialize`` needs none of it: Cadenza's
capabilities are fixed but for the position encoding, picked from the client's list as pygls
picks it. So the first frame is read from stdin (raw ``os.read``), answered here when it is a
plain ``initialize``, and then handed to pygls with the rest of the stream as if nothing had
happened: pygls takes it as usual (the workspace, the client's capabilities, the
configuration and its warnings), and its own answer to it is dropped on the way out
(``InitializeWatch``), after a check that it says the same (a difference is logged as an
error; a test compares the two for many clients). Only params that pass lsprotocol's own
schema of them (``initialize_schema``, generated from lsprotocol) are answered early; whatever
that schema accepts, pygls accepts, so a malformed request still gets pygls's error.
``CADENZA_EARLY_INITIALIZE=0`` turns this off.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any, BinaryIO, NamedTuple

from cadenza import __version__
from cadenza.early_schema import env_allows

log = logging.getLogger(__name__)

COMMANDS = (
    "cadenza.startSession",
    "cadenza.cancelSession",
    "cadenza.undoSession",
    "cadenza.restoreTurn",
    "cadenza.replySession",
    "cadenza.listSessions",
    "cadenza.loadSession",
    "cadenza.promptSession",
    "cadenza.configureSession",
    "cadenza.listChanges",
    "cadenza.reviewChanges",
    "cadenza.steerSession",
    "cadenza.listModels",
    "cadenza.listCommands",
    "cadenza.pullModel",
    "cadenza.listPermissions",
    "cadenza.revokePermission",
)
"""The commands in the order the server registers them (``executeCommandProvider``)."""

_ENCODINGS = ("utf-8", "utf-16", "utf-32")
_MAX_HEADER = 8192
_MAX_BODY = 1 << 20


class EarlyStart(NamedTuple):
    """What the early reader did.

    Attributes:
        pending: Every byte read from stdin so far (the first frame included): pygls reads
            them first.
        answered: The answer written for the first frame, or None when nothing was answered.
        request_id: The id of the ``initialize`` answered (None: nothing was answered).
    """

    pending: bytes
    answered: dict[str, Any] | None
    request_id: int | str | None = None


def position_encoding(capabilities: dict[str, Any]) -> str:
    """The client's first supported ``general.positionEncodings`` entry, else UTF-16 (pygls)."""
    general = capabilities.get("general")
    encodings = general.get("positionEncodings") if isinstance(general, dict) else None
    for encoding in encodings if isinstance(encodings, list) else ():
        if encoding in _ENCODINGS:
            return str(encoding)
    return "utf-16"


def _sync(capabilities: dict[str, Any]) -> dict[str, Any]:
    """``textDocumentSync``: pygls says ``false`` to each will-save kind the client names."""
    document = capabilities.get("textDocument")
    sync = document.get("synchronization") if isinstance(document, dict) else None
    out: dict[str, Any] = {"openClose": True, "change": 1}
    for kind in ("willSave", "willSaveWaitUntil"):
        if isinstance(sync, dict) and sync.get(kind) is not None:
            out[kind] = False
    out["save"] = True
    return out


def initialize_result(capabilities: dict[str, Any]) -> dict[str, Any]:
    """The ``InitializeResult`` pygls computes for a client with ``capabilities``."""
    return {
        "capabilities": {
            "positionEncoding": position_encoding(capabilities),
            "textDocumentSync": _sync(capabilities),
            "executeCommandProvider": {"commands": list(COMMANDS)},
            "inlineCompletionProvider": {},
            "workspace": {
                "workspaceFolders": {"supported": True, "changeNotifications": True},
                "fileOperations": {},
            },
        },
        "serverInfo": {"name": "cadenza", "version": __version__},
    }


def frame(message: dict[str, Any]) -> bytes:
    """``message`` framed as pygls frames its own (headers, then the JSON body)."""
    body = json.dumps(message)
    header = (
        f"Content-Length: {len(body)}\r\n"
        "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
    )
    return (header + body).encode("utf-8")


def _content_length(headers: bytes) -> int | None:
    for line in headers.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value.strip())
    return None


def _read_first_frame(fd: int) -> tuple[bytes, bytes | None]:
    """Everything read, and the first frame's body (None: not a frame this reader takes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > _MAX_HEADER:
            return data, None
        chunk = os.read(fd, 65536)
        if not chunk:
            return data, None
        data += chunk
    headers, _, rest = data.partition(b"\r\n\r\n")
    length = _content_length(headers)
    if length is None or length > _MAX_BODY:
        return data, None
    while len(rest) < length:
        chunk = os.read(fd, 65536)
        if not chunk:
            return data + chunk, None
        data, rest = data + chunk, rest + chunk
    return data, rest[:length]


def _plain_initialize(body: bytes) -> tuple[int | str, dict[str, Any]] | None:
    """``(id, params)`` when ``body`` is an ``initialize`` whose params pass the schema."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # nesting deeper than the parser goes: not ours
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    if message.get("jsonrpc") != "2.0" or not isinstance(params, dict):
        return None
    from cadenza.lsp.initialize_schema import accepts_params

    if not accepts_params()(params):
        return None
    return request_id, params


def answer_early(fd_in: int = 0, fd_out: int = 1) -> EarlyStart:
    """Read the first frame; answer it when it is a plain ``initialize``."""
    if not env_allows():
        return EarlyStart(pending=b"", answered=None)
    pending, body = _read_first_frame(fd_in)
    found = _plain_initialize(body) if body is not None else None
    if found is None:
        return EarlyStart(pending=pending, answered=None)
    request_id, params = found
    result = initialize_result(params["capabilities"])
    answer = {"id": request_id, "jsonrpc": "2.0", "result": result}
    data = memoryview(frame(answer))
    while data:
        data = data[os.write(fd_out, data) :]
    return EarlyStart(pending=pending, answered=answer, request_id=request_id)


class PrefixedStdin:
    """stdin for pygls: the bytes the early reader took first, then the stream itself."""

    def __init__(self, pending: bytes, stream: BinaryIO) -> None:
        self._pending = pending
        self._stream = stream

    def readline(self, limit: int = -1) -> bytes:
        """A line (at most ``limit`` bytes), from what was read early while it lasts."""
        if not self._pending:
            return self._stream.readline(limit)
        end = self._pending.find(b"\n") + 1 or len(self._pending)
        if limit >= 0:
            end = min(end, limit)
        line, self._pending = self._pending[:end], self._pending[end:]
        if not line.endswith(b"\n") and not self._pending and (limit < 0 or len(line) < limit):
            line += self._stream.readline(limit - len(line) if limit >= 0 else -1)
        return line

    def read(self, n: int = -1) -> bytes:
        """``n`` bytes, from what was read early first."""
        if not self._pending:
            return self._stream.read(n)
        if 0 <= n <= len(self._pending):
            data, self._pending = self._pending[:n], self._pending[n:]
            return data
        data, self._pending = self._pending, b""
        return data + self._stream.read(n - len(data) if n >= 0 else -1)


class InitializeWatch:
    """stdout for pygls: drops its answer to the ``initialize`` answered early.

    Once, after a check that it says the same (a difference is logged as an error).
    """

    def __init__(self, stream: BinaryIO, early: EarlyStart) -> None:
        self._stream = stream
        self._early: EarlyStart | None = early

    def write(self, data: bytes) -> int:
        """Write ``data``, unless it is pygls's answer to an ``initialize`` answered early."""
        if self._early is not None:
            message = _answer_to(data, self._early.request_id)
            if message is not None:
                early, self._early = self._early, None
                if message != early.answered:
                    log.error("initialize answered early: %s; pygls: %s", early.answered, message)
                return len(data)
        return self._stream.write(data)

    def flush(self) -> None:
        """Flush the stream."""
        self._stream.flush()

    def close(self) -> None:
        """Close the stream."""
        self._stream.close()


def _answer_to(data: bytes, request_id: int | str | None) -> dict[str, Any] | None:
    """The response in the frame ``data`` when it answers ``request_id``."""
    _, _, body = data.partition(b"\r\n\r\n")
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" in message or message.get("id") != request_id:
        return None
    return message
