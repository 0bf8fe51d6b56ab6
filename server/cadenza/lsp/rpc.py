"""Server → client requests that a cancelled session can walk away from safely.

pygls resolves each outgoing request through a ``concurrent.futures.Future``. Awaiting it
directly and then being cancelled (``cadenza.cancelSession``) cancels that future too, and
when the client's answer arrives later pygls fails with ``InvalidStateError`` while handling
it. Shielding keeps the future alive until the answer; for Cadenza's own prompts the client is
also told to stop waiting with ``$/cancelRequest`` (JSON-RPC cancellation, LSP §Cancellation
Support).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

T = TypeVar("T")


def _consume(future: asyncio.Future[Any]) -> None:
    """Retrieve a late exception so asyncio does not log it as never retrieved."""
    if not future.cancelled():
        future.exception()


async def shielded(request: Awaitable[T]) -> T:
    """Await ``request``; cancelling the waiter leaves the request itself pending.

    Raises:
        asyncio.CancelledError: The waiter was cancelled (the request keeps running).
        pygls.exceptions.JsonRpcException: The client answered with an error.
    """
    future = asyncio.ensure_future(request)
    future.add_done_callback(_consume)
    return await asyncio.shield(future)


async def cancellable_request(server: LanguageServer, method: str, params: Any) -> Any:
    """Send a custom request; on cancellation, send ``$/cancelRequest`` for it and re-raise.

    Args:
        server: The server whose client receives the request.
        method: The method name, e.g. ``cadenza/askUser``.
        params: JSON-ready params (a dict with camelCase keys) or an lsprotocol object.

    Returns:
        The raw ``result`` of the response (JSON values).

    Raises:
        asyncio.CancelledError: The waiter was cancelled.
        pygls.exceptions.JsonRpcException: The client answered with an error.
    """
    msg_id = f"cadenza-{uuid.uuid4().hex}"
    try:
        return await shielded(server.protocol.send_request_async(method, params, msg_id=msg_id))
    except asyncio.CancelledError:
        server.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        raise
