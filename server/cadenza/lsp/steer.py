"""The handler of ``cadenza.steerSession``: the person's message into a running turn.

The session takes it at its next step boundary (``Session.steer``). Malformed arguments are
answered with ``InvalidParams`` (-32602); a session with no turn running (unknown, over, or
waiting for the person) with ``RequestFailed`` (-32803), and nothing was taken: the client
sends the message as the next prompt instead.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from cadenza.lsp.params import command_args
from cadenza.lsp.review_commands import sessions_of
from cadenza.schema.commands import SteerSessionArgs, SteerSessionResult
from cadenza.schema.methods import STEER_SESSION

log = logging.getLogger(__name__)


def steer_session(ls: LanguageServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.steerSession {sessionId, text}`` → ``{steered: true}``.

    Raises:
        JsonRpcInvalidParams: Malformed arguments (-32602).
        JsonRpcException: -32803 when no turn of the session runs.
    """
    args: SteerSessionArgs = command_args(STEER_SESSION, SteerSessionArgs, arguments)
    if not sessions_of(ls).steer(args.session_id, args.text):
        log.info("refused %s: no turn of %s runs", STEER_SESSION, args.session_id)
        raise JsonRpcException(
            message=f"session {args.session_id} has no turn running: send it as a prompt",
            code=types.LSPErrorCodes.RequestFailed.value,
        )
    return SteerSessionResult().wire()


def register(server: LanguageServer) -> None:
    """Register ``cadenza.steerSession`` on ``server``."""
    server.command(STEER_SESSION)(steer_session)
