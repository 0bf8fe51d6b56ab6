"""pygls's protocol with Cadenza's additions: typed custom responses, the command's token.

- ``get_result_type``: responses to ``cadenza/askUser`` are kept as raw JSON and validated by
  the schema (``cadenza.schema.requests``). pygls's fallback turns unknown results into namedtuples,
  and a strict type would make a malformed answer undeliverable (the waiting session would
  hang), so the raw value is taken and checked where it is used.
- ``exit`` over TCP: pygls calls ``sys.exit`` inside the connection callback, which asyncio
  reports as an unhandled exception; closing the connection instead ends pygls's TCP server
  the same way a disconnect does, and ``serve_main`` returns the exit status.
- ``workspace/executeCommand``: pygls passes a command handler its ``arguments`` only; the
  request's ``workDoneToken`` (client-initiated progress, LSP §WorkDoneProgress) is kept in a
  context variable that the handler's task inherits.
- ``handle_body``: malformed messages get a JSON-RPC 2.0 error response (§5.1) instead of
  pygls's ``window/showMessage``: -32700 for a body that is not JSON, -32600 for an invalid
  request object (a notification method sent with an id included), -32602 for params that
  do not fit the method (``executeCommand`` arguments that are no array included: pygls's
  converter took a string's characters as the arguments); notifications and responses are
  only logged. The response carries the request's id, or null when none is usable. A
  client's response that does not fit the server's request (``applyEdit`` answered ``{}``)
  fails that request (pygls dropped it, and the session waiting for it hung).
- ``handle_message``: before ``initialize`` pygls runs handlers that need the workspace (an
  internal error); Cadenza answers requests with -32002 and drops notifications (LSP 3.17
  §initialize), ``exit`` excepted. After ``shutdown`` pygls drops every request unanswered
  (a client waiting for the answer hangs); Cadenza answers each with -32600 (LSP 3.17
  §shutdown: "If a server receives requests after a shutdown request those requests should
  error with InvalidRequest").
- ``TIMED_REQUESTS``: with ``--log-level INFO`` each such request's time in the server is
  logged when its response has been written: from the body's arrival to the response sent,
  and the part of it its handler spent in the model call (``note_timing``). The
  completion benchmark reads these lines for the server's own overhead; editors see nothing
  else (a log line on stderr, at a level the default leaves out).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.protocol import LanguageServerProtocol, lsp_method

from cadenza.lsp.params import arguments_error
from cadenza.schema.methods import RAW_RESULT_REQUESTS

log = logging.getLogger(__name__)

_WORK_DONE_TOKEN: contextvars.ContextVar[types.ProgressToken | None] = contextvars.ContextVar(
    "cadenza_work_done_token", default=None
)


_REQUEST_ID: contextvars.ContextVar[int | str | None] = contextvars.ContextVar(
    "cadenza_request_id", default=None
)


def command_work_done_token() -> types.ProgressToken | None:
    """The ``workDoneToken`` of the ``workspace/executeCommand`` being handled, if any."""
    return _WORK_DONE_TOKEN.get()


def current_request_id() -> int | str | None:
    """The JSON-RPC id of the client request being handled, if any.

    Set while pygls dispatches the request, so a sync handler sees it and a coroutine
    handler's task inherits it (a task copies the context it was created in).
    """
    return _REQUEST_ID.get()


@attrs.define
class RawResponse:
    """A JSON-RPC response whose ``result`` stays raw JSON."""

    id: int | str
    result: Any = None
    jsonrpc: str = "2.0"


def _usable_id(raw: Any) -> int | str | None:
    """The message's id if it is an integer or a string (LSP), else None."""
    msg_id = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool):
        return msg_id
    return None


def _envelope_error(raw: Any) -> tuple[JsonRpcException, bool] | None:
    """What is wrong with a message's envelope, and whether to answer it.

    Returns:
        None for a well-formed request, notification or response; else the error and True
        when the message is a request (it has an ``id`` and is not a response).
    """
    if not isinstance(raw, dict):
        return JsonRpcInvalidRequest("Invalid Request: not a JSON object"), True
    has_id = "id" in raw
    is_response = "method" not in raw and ("result" in raw or "error" in raw)
    answer = has_id and not is_response
    if raw.get("jsonrpc") != "2.0":
        return JsonRpcInvalidRequest('Invalid Request: "jsonrpc" must be "2.0"'), answer
    if "method" in raw and not isinstance(raw["method"], str):
        return JsonRpcInvalidRequest('Invalid Request: "method" must be a string'), answer
    if has_id and _usable_id(raw) is None:
        return JsonRpcInvalidRequest('Invalid Request: "id" must be an integer or string'), True
    if "method" not in raw and not is_response:
        return JsonRpcInvalidRequest('Invalid Request: no "method"'), has_id
    return None


def _refused(raw: dict[str, Any], message_type: type[Any] | None) -> JsonRpcException | None:
    """The error that answers a well-enveloped request pygls would mishandle, or None.

    A notification method sent with an id: pygls would drop the id and handle a notification
    (the sender waits forever). ``executeCommand`` arguments that are no array: pygls's
    converter would make a string's characters, or an object's keys, the arguments.
    """
    if message_type is not None and "id" not in attrs.fields_dict(message_type):
        return JsonRpcInvalidRequest(
            f"Invalid Request: {raw['method']} is a notification; it takes no id"
        )
    if raw.get("method") == types.WORKSPACE_EXECUTE_COMMAND:
        return arguments_error(raw.get("params"))
    return None


TIMED_REQUESTS = frozenset({types.TEXT_DOCUMENT_INLINE_COMPLETION})
"""Requests whose time in the server is logged at INFO once answered (``RequestTiming``)."""


@dataclass(kw_only=True)
class RequestTiming:
    """One timed request: when its body arrived, and what its handler noted.

    Attributes:
        method: The request's method.
        arrived: ``time.monotonic()`` when its body reached ``handle_body`` (seconds).
        subject: What it was about, for the log (a completion's file name).
        outcome: How the handler ended it ("" when it did not say: an error or a cancel).
        model_ms: The part of it spent waiting for the model (ms).
    """

    method: str
    arrived: float
    subject: str = ""
    outcome: str = ""
    model_ms: float = 0.0


class CadenzaProtocol(LanguageServerProtocol):
    """The language server protocol plus Cadenza's custom message types."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timings: dict[int | str, RequestTiming] = {}

    def send_error(self, msg_id: int | str | None, error: JsonRpcException) -> None:
        """Send an error response; ``msg_id`` None is sent as ``"id": null``."""
        self._send_data(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "error": {"code": error.code, "message": error.message},
            }
        )
        self._log_timing(msg_id)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        """Send a response as pygls does, then log its time if the request is timed."""
        super()._send_response(msg_id, result, error)
        self._log_timing(msg_id)

    def note_timing(
        self, msg_id: int | str | None, *, subject: str, outcome: str, model_ms: float
    ) -> None:
        """What the handler of timed request ``msg_id`` did (nothing when it is not timed)."""
        timing = self._timings.get(msg_id) if msg_id is not None else None
        if timing is not None:
            timing.subject, timing.outcome, timing.model_ms = subject, outcome, model_ms

    def _log_timing(self, msg_id: int | str | None) -> None:
        timing = self._timings.pop(msg_id, None) if msg_id is not None else None
        if timing is None:
            return
        log.info(
            "%s %s for %s (%s): %.1f ms from arrival to response, %.1f ms of it in the model call",
            timing.method,
            msg_id,
            timing.subject or "?",
            timing.outcome or "error",
            (time.monotonic() - timing.arrived) * 1000,
            timing.model_ms,
        )

    def handle_body(self, body: bytes) -> None:
        """Parse, check and dispatch one message body, answering malformed requests.

        Args:
            body: The bytes of one frame's body.
        """
        arrived = time.monotonic()
        try:
            raw = json.loads(body)
        except (ValueError, RecursionError) as exc:
            log.warning("Message body is not JSON: %s", exc)
            self.send_error(None, JsonRpcParseError(f"Parse error: {exc}"))
            return
        problem = _envelope_error(raw)
        if problem is not None:
            error, answer = problem
            log.warning("%s: %.200r", error.message, raw)
            if answer:
                self.send_error(_usable_id(raw), error)
            return
        is_request = "method" in raw and "id" in raw
        message_type = self.get_message_type(raw["method"]) if "method" in raw else None
        refused = _refused(raw, message_type) if is_request else None
        if refused is not None:
            log.warning("%s", refused.message)
            self.send_error(_usable_id(raw), refused)
            return
        if "method" in raw and message_type is None:
            # pygls's generic request type requires params; let the dispatch answer -32601.
            raw.setdefault("params", None)
        try:
            message = self.structure_message(raw)
        except JsonRpcException as exc:
            # structure_message raises JsonRpcInvalidParams / JsonRpcInternalError (logged).
            if is_request:
                self.send_error(_usable_id(raw), exc)
            else:
                self._fail_response(raw, exc.message)
            return
        except Exception as exc:
            log.exception("Unable to deserialize message")
            if is_request:
                self.send_error(_usable_id(raw), JsonRpcInternalError())
            else:
                self._fail_response(raw, repr(exc))
            return
        self._start_timing(raw, arrived)
        self.handle_message(message)

    def _start_timing(self, raw: dict[str, Any], arrived: float) -> None:
        """Time request ``raw`` from ``arrived`` if its method is timed and INFO is logged."""
        method, msg_id = raw.get("method"), _usable_id(raw)
        if method in TIMED_REQUESTS and msg_id is not None and log.isEnabledFor(logging.INFO):
            self._timings[msg_id] = RequestTiming(method=str(method), arrived=arrived)

    def _fail_response(self, raw: dict[str, Any], problem: str) -> None:
        """A client's response that does not fit its request fails the request's waiter.

        pygls drops a response it cannot structure (e.g. ``workspace/applyEdit`` answered
        ``{}``): the request would never complete and its session would hang.
        """
        msg_id = _usable_id(raw)
        if "method" in raw or msg_id is None:
            return
        log.warning("malformed response to request %s: %s", msg_id, problem)
        error = types.ResponseError(
            code=JsonRpcInternalError.CODE, message=f"malformed response from the client: {problem}"
        )
        self._handle_response(msg_id, None, error)

    initialize_seen = False
    """True once an ``initialize`` request arrived (requests before it are refused)."""

    def handle_message(self, message: Any) -> None:
        """Dispatch as pygls does; refuse requests before ``initialize`` and after ``shutdown``.

        Before ``initialize`` a request gets -32002 (ServerNotInitialized); after ``shutdown``,
        -32600 (InvalidRequest). Notifications then are dropped, ``exit`` excepted.
        """
        method = getattr(message, "method", None)
        if method == types.INITIALIZE:
            self.initialize_seen = True
        elif not self.initialize_seen and method is not None and method != types.EXIT:
            msg_id = getattr(message, "id", None)
            log.warning("%s before initialize: refused", method)
            if msg_id is not None:
                self.send_error(
                    msg_id,
                    JsonRpcException(
                        code=types.ErrorCodes.ServerNotInitialized.value,
                        message=f"Server Not Initialized: {method} before initialize",
                    ),
                )
            return
        if self._shutdown and method is not None and method != types.EXIT:
            msg_id = getattr(message, "id", None)
            if msg_id is not None:
                log.warning("request %s after shutdown: answered with Invalid Request", method)
                self.send_error(
                    msg_id, JsonRpcInvalidRequest("Invalid Request: the server is shutting down")
                )
                return
        super().handle_message(message)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """The response type of ``method`` (raw for Cadenza's own requests)."""
        if method in RAW_RESULT_REQUESTS:
            return RawResponse
        return super().get_result_type(method)

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        """Remember the request's id while pygls dispatches it (see ``current_request_id``)."""
        reset = _REQUEST_ID.set(msg_id)
        try:
            super()._handle_request(msg_id, method_name, params)
        finally:
            _REQUEST_ID.reset(reset)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """``$/cancelRequest``: cancel the request as pygls does, and its session.

        A ``cadenza.startSession`` request is answered at once; cancelling it afterwards
        cancels the session it started.
        """
        super()._handle_cancel_notification(msg_id)
        on_cancel = self.on_cancel_request
        if on_cancel is not None:
            on_cancel(msg_id)

    on_cancel_request: Callable[[int | str], None] | None = None
    """Called with the id of every ``$/cancelRequest`` (set by the server)."""

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """Over TCP close the connection; over stdio exit as pygls does."""
        if not isinstance(self.writer, asyncio.StreamWriter):
            return (yield from super().lsp_exit(*args))
        self.writer.close()
        return None

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: types.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        """Remember the request's ``workDoneToken``, then dispatch as pygls does."""
        _WORK_DONE_TOKEN.set(params.work_done_token)
        return (yield from super().lsp_workspace__execute_command(params))
