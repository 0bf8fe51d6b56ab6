"""A checked stdin for the SDK: only JSON-RPC objects reach it; bad lines get an error answer.

The SDK's stdio connection takes every JSON line as a message object: a line that is valid
JSON but not an object (``[1]``, a batch, ``"x"``, ``42``, ``null``) ends its receive loop
(an ``AttributeError``, or ``null`` read as the end of the stream), and a line that is not
JSON (or not UTF-8) is dropped without an answer. ``checked_stdin`` reads the client's lines
first and hands the SDK only the good ones; for the others it writes the JSON-RPC error
itself, with ``id`` null:

- not UTF-8, not JSON → ``-32700`` Parse error;
- JSON but not an object (a batch too: Cadenza does not take batches, ACP does not use
  them) → ``-32600`` Invalid Request;
- an object with neither ``method`` nor ``id``, whose ``method`` is not a string, or whose
  ``id`` is not a string, a number or null → ``-32600`` Invalid Request.

JSON nested too deep for the parser is a parse error too (the SDK would parse it again). A
response whose ``error`` is not an object (the SDK calls ``.get`` on it, which ends its
receive loop) reaches the SDK with that error replaced by an internal error object, so the
request it answers fails instead of waiting forever (``repaired``).

An error line is written with one ``write`` call, as the SDK writes its own, so lines never
interleave.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def error_line(code: int, message: str) -> bytes:
    """The JSON-RPC error response (``id`` null) to write for a bad line."""
    payload = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return (json.dumps(payload, separators=(",", ":")) + "\n").encode("utf-8")


def check_line(line: bytes) -> bytes | None:
    """None when ``line`` (stripped, not empty) is a message object; else the error to write."""
    try:
        message: Any = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return error_line(PARSE_ERROR, "Parse error: the line is not UTF-8")
    except (ValueError, RecursionError):
        return error_line(PARSE_ERROR, "Parse error: the line is not JSON")
    if isinstance(message, list):
        return error_line(INVALID_REQUEST, "Invalid Request: batches are not supported")
    if not isinstance(message, dict):
        return error_line(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    if "method" not in message and "id" not in message:
        return error_line(INVALID_REQUEST, "Invalid Request: neither a method nor an id")
    if "method" in message and not isinstance(message["method"], str):
        return error_line(INVALID_REQUEST, "Invalid Request: method must be a string")
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | float | None):
        return error_line(INVALID_REQUEST, "Invalid Request: id must be a string, number or null")
    return None


_PARAMETER_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def repaired(line: bytes) -> bytes:
    """``line`` (a message ``check_line`` passed), made safe for the SDK.

    - a response whose ``error`` is not an object gets an internal-error object (the SDK's
      receive loop dies on anything else);
    - ``params._meta`` loses the keys shaped like a Python parameter name: the SDK's router
      passes ``_meta``'s keys as keyword arguments after the validated params, so a key such as
      ``cwd`` or ``session_id`` would replace a checked value with a raw one. Namespaced keys
      (``zed.dev/…``, ``x-…``, camelCase) stay.
    """
    message = json.loads(line.decode("utf-8"))
    changed = False
    if "method" not in message and "error" in message and not isinstance(message["error"], dict):
        message["error"] = {"code": -32603, "message": "the client answered with a malformed error"}
        changed = True
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(params, dict) and isinstance(meta, dict):
        kept = {key: value for key, value in meta.items() if not _PARAMETER_NAME.fullmatch(key)}
        if len(kept) != len(meta):
            params["_meta"] = kept
            changed = True
    return json.dumps(message).encode("utf-8") if changed else line


async def read_line(reader: asyncio.StreamReader) -> bytes:
    """The next line (with its newline; b"" at the end), however long (as the SDK reads)."""
    chunks: list[bytes] = []
    try:
        while True:
            try:
                chunks.append(await reader.readuntil(b"\n"))
                return b"".join(chunks)
            except asyncio.LimitOverrunError as exc:
                chunks.append(await reader.readexactly(exc.consumed))
    except asyncio.IncompleteReadError as exc:
        chunks.append(exc.partial)
        return b"".join(chunks)


async def pump_checked(
    source: asyncio.StreamReader,
    target: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    pending: bytes = b"",
) -> None:
    """Copy ``source``'s good lines to ``target``; answer the bad ones on ``writer``.

    ``pending``: bytes already read from the client (``early.answer_early``), taken first.
    """
    try:
        while True:
            if b"\n" in pending:
                line, _, pending = pending.partition(b"\n")
                line += b"\n"
            else:
                line, pending = pending + await read_line(source), b""
            if not line:
                break
            stripped = line.strip()
            if not stripped:
                continue
            error = check_line(stripped)
            if error is None:
                target.feed_data(repaired(stripped) + b"\n")
                continue
            log.warning("a bad line from the client, answered: %s", error.decode().strip())
            try:
                writer.write(error)
                await writer.drain()
            except (ConnectionError, RuntimeError) as exc:
                log.warning("the error answer could not be written: %s", exc)
    except Exception:
        log.exception("reading the client's input failed")
    finally:
        target.feed_eof()


def checked_stdin(
    source: asyncio.StreamReader, writer: asyncio.StreamWriter, limit: int, pending: bytes = b""
) -> tuple[asyncio.StreamReader, asyncio.Task[None]]:
    """The reader to give the SDK, and the task that fills it from ``pending``, then ``source``."""
    target = asyncio.StreamReader(limit=limit)
    task = asyncio.get_running_loop().create_task(
        pump_checked(source, target, writer, pending), name="cadenza-acp-stdin"
    )
    return target, task
