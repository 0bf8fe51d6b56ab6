"""The client's side of Cadenza's custom messages: how pygls receives them typed.

The shapes are declared once, in ``cadenza.schema`` (the server's side of the contract is in
``docs/protocol.md``); the client parses them leniently (the schema's default: unknown fields
ignored, unknown update kinds kept as ``OtherUpdate``), so a client keeps working when a newer
server sends more than it knows. They are registered with pygls the way esbonio registers its
own methods (a method → message-type map on the protocol plus a cattrs hook for pydantic
models), so handlers receive typed objects, not namedtuples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import cattrs
from pydantic import BaseModel
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.protocol.json_rpc import MsgId

from cadenza.schema.methods import ASK_USER, REQUEST_PERMISSION, SESSION_UPDATE
from cadenza.schema.requests import AskUserParams, RequestPermissionParams
from cadenza.schema.updates import SessionUpdateParams


@attrs.define
class SessionUpdateNotification:
    """JSON-RPC envelope of ``cadenza/sessionUpdate`` (for pygls's method → type map)."""

    method: str
    jsonrpc: str
    params: SessionUpdateParams


@attrs.define
class AskUserRequest:
    """JSON-RPC envelope of ``cadenza/askUser`` (for pygls's method → type map)."""

    id: MsgId
    method: str
    jsonrpc: str
    params: AskUserParams


@attrs.define
class RequestPermissionRequest:
    """JSON-RPC envelope of ``cadenza/requestPermission`` (for pygls's method → type map)."""

    id: MsgId
    method: str
    jsonrpc: str
    params: RequestPermissionParams


CUSTOM_MESSAGE_TYPES: dict[str, type[Any]] = {
    SESSION_UPDATE: SessionUpdateNotification,
    ASK_USER: AskUserRequest,
    REQUEST_PERMISSION: RequestPermissionRequest,
}


def _is_wire_model(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, BaseModel)


def client_converter() -> cattrs.Converter:
    """The pygls converter plus pydantic models: validated leniently in, dumped by alias out."""
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    converter.register_structure_hook_func(
        _is_wire_model, lambda data, cls: cls.model_validate(data)
    )
    converter.register_unstructure_hook_func(
        _is_wire_model, lambda model: model.model_dump(by_alias=True, mode="json")
    )
    return converter


MessageSink = Callable[[dict[str, Any]], None]
"""Receives each request and notification from the server as raw JSON, before it is handled."""


class CadenzaClientProtocol(LanguageServerProtocol):
    """pygls's LSP protocol that also knows Cadenza's custom message types.

    Attributes:
        message_sink: When set, called with every request and notification the server sends
            (the whole JSON-RPC message as parsed JSON), in arrival order: ``cadenza run
            --events``.
    """

    message_sink: MessageSink | None = None

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Show server requests and notifications to ``message_sink``; then parse as pygls does.

        pygls calls this as the JSON decoder's ``object_hook``, innermost objects first, so the
        message's ``params`` are still plain JSON here. Only the message itself carries both
        ``jsonrpc`` and ``method``.
        """
        if self.message_sink is not None and "jsonrpc" in data and "method" in data:
            self.message_sink(data)
        return super().structure_message(data)

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """The message class of ``method``: Cadenza's own, else lsprotocol's."""
        # The base method is wrapped in functools.lru_cache; a plain override is called alike.
        return CUSTOM_MESSAGE_TYPES.get(method) or super().get_message_type(method)

    def _handle_response(
        self, msg_id: Any, result: Any | None = None, error: Any | None = None
    ) -> None:
        """Drop a response to a request that was given up (Ctrl-C); else as pygls does.

        pygls would set the result of the cancelled future, raising ``InvalidStateError``
        and printing a traceback on the terminal.
        """
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            self._request_futures.pop(msg_id, None)
            return
        super()._handle_response(msg_id, result, error)
