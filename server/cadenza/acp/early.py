"""Answer ACP's ``initialize`` before the SDK is imported: an agent panel opens at once.

Importing the ACP SDK builds several hundred pydantic models, most of the agent's start-up
time, and the engine behind the agent is as much again. The first request every client sends
is ``initialize``, whose answer needs none of it: what Cadenza offers is fixed. So the first
line is read from stdin (raw ``os.read``, nothing buffered elsewhere), answered here when it
is a well-formed ``initialize``, and everything else (imports, the SDK's connection) happens
after the answer is written. Whatever this reader took beyond the first line, and the first
line itself when it was not answered, is handed to the SDK unchanged (``EarlyStart.pending``).

The answer is the same JSON the SDK path produces: ``CadenzaAgent.initialize`` builds its
response from ``initialize_result`` too, and a test compares the two byte for byte. Only
params that pass the SDK's own schema of them (``initialize_schema``, generated from the SDK)
are answered early; whatever that schema accepts, the SDK accepts, so a malformed request
still gets the SDK's error. ``CADENZA_EARLY_INITIALIZE=0`` turns this off.
"""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

from cadenza import __version__
from cadenza.early_schema import env_allows

PROTOCOL_VERSION = 1
"""The ACP protocol version Cadenza speaks (the SDK's ``acp.PROTOCOL_VERSION``; a test checks)."""

_READ_SIZE = 65536
_FIRST_LINE_LIMIT = 1 << 20
"""A first line longer than this is left to the SDK (an ``initialize`` is a few hundred bytes)."""


class EarlyStart(NamedTuple):
    """What the early reader did: the bytes the SDK must still read, and what it answered.

    Attributes:
        pending: Bytes read from stdin that are not consumed (given to the SDK first).
        initialize: The params of the ``initialize`` answered here; the agent must still take
            them (the client's capabilities). None: nothing was answered.
    """

    pending: bytes
    initialize: dict[str, Any] | None


def initialize_result(protocol_version: int) -> dict[str, Any]:
    """The ``InitializeResponse`` to a client that speaks ``protocol_version`` (wire JSON)."""
    return {
        "protocolVersion": min(protocol_version, PROTOCOL_VERSION),
        "agentCapabilities": {
            "loadSession": True,
            # Text (and resource links) only: the baseline every agent takes.
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
            "mcpCapabilities": {"http": True, "sse": False},
            "sessionCapabilities": {"list": {}},
        },
        "agentInfo": {"name": "cadenza", "title": "Cadenza", "version": __version__},
    }


def _initialize_params(line: bytes) -> tuple[Any, dict[str, Any]] | None:
    """``(id, params)`` when ``line`` is an ``initialize`` the SDK would take; else None.

    Deliberately narrow: anything unusual goes to the SDK, which answers it as before. The
    envelope and ``protocolVersion`` (an integer, echoed in the answer) are checked here, the
    params against the SDK's schema of them.
    """
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # nesting deeper than the parser goes: not ours
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    params = message.get("params")
    if not isinstance(params, dict) or message.get("jsonrpc") != "2.0":
        return None
    version = params.get("protocolVersion")
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version < 1 << 16:
        return None
    from cadenza.acp.initialize_schema import accepts_params

    if not accepts_params()(params):
        return None
    return request_id, params


def _read_first_line(fd: int) -> tuple[bytes, bytes]:
    """The first line (with its newline) and whatever was read after it."""
    data = b""
    while b"\n" not in data and len(data) <= _FIRST_LINE_LIMIT:
        chunk = os.read(fd, _READ_SIZE)
        if not chunk:
            return data, b""
        data += chunk
    line, newline, rest = data.partition(b"\n")
    return line + newline, rest


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def answer_early(fd_in: int = 0, fd_out: int = 1) -> EarlyStart:
    """Read the client's first line; answer it when it is a plain ``initialize``."""
    if not env_allows():
        return EarlyStart(pending=b"", initialize=None)
    line, rest = _read_first_line(fd_in)
    found = _initialize_params(line.strip()) if line.endswith(b"\n") else None
    if found is None:
        return EarlyStart(pending=line + rest, initialize=None)
    request_id, params = found
    answer = {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": initialize_result(params["protocolVersion"]),
    }
    _write_all(fd_out, json.dumps(answer, separators=(",", ":")).encode("utf-8") + b"\n")
    return EarlyStart(pending=rest, initialize=params)
