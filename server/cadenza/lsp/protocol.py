"""pygls's protocol with Cadenza's additions: typed custom responses, the command's token.

- ``get_result_type``: responses to ``cadenza/askUser`` are kept as raw JSON and validated by
  pydantic (``params.AskUserResult``). pygls's fallback turns unknown results into namedtuples,
  and a strict type would make a malformed answer undeliverable (the waiting session would
  hang), so the raw value is taken and checked where it is used.
- ``exit`` over TCP: pygls calls ``sys.exit`` inside the connection callback, which asyncio
  reports as an unhandled exception; closing the connection instead ends pygls's TCP server
  the same way a disconnect does, and ``serve_main`` returns the exit status.
- ``workspace/executeCommand``: pygls passes a command handler its ``arguments`` only; the
  request's ``workDoneToken`` (client-initiated progress, LSP §WorkDoneProgress) is kept in a
  context variable that the handler's task inherits.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Generator
from typing import Any

import attrs
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol, lsp_method

from cadenza.lsp.params import ASK_USER

_WORK_DONE_TOKEN: contextvars.ContextVar[types.ProgressToken | None] = contextvars.ContextVar(
    "cadenza_work_done_token", default=None
)


def command_work_done_token() -> types.ProgressToken | None:
    """The ``workDoneToken`` of the ``workspace/executeCommand`` being handled, if any."""
    return _WORK_DONE_TOKEN.get()


@attrs.define
class RawResponse:
    """A JSON-RPC response whose ``result`` stays raw JSON."""

    id: int | str
    result: Any = None
    jsonrpc: str = "2.0"


class CadenzaProtocol(LanguageServerProtocol):
    """The language server protocol plus Cadenza's custom message types."""

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """The response type of ``method`` (raw for Cadenza's own requests)."""
        if method == ASK_USER:
            return RawResponse
        return super().get_result_type(method)

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
