"""``_cadenza/steerSession``: the person's message into a running prompt turn (ACP extension).

The same arguments and result as the LSP face's ``cadenza.steerSession``: ``{sessionId,
text}`` → ``{steered: true}``; the session's running turn takes the text as a user message at
its next step boundary (``host.service`` ``steer``). Malformed params are answered with
-32602; a session with no turn running (unknown, never prompted, or between turns) with
-32803, and nothing was taken: the client sends the text as its next ``session/prompt``
instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp import RequestError
from pydantic import ValidationError

from cadenza.acp.session import REQUEST_FAILED, AcpSession, request_error
from cadenza.host.service import SessionService
from cadenza.schema.base import strict_validate
from cadenza.schema.commands import SteerSessionArgs, SteerSessionResult


def steer_session(
    sessions: Mapping[str, AcpSession], service: SessionService[None], params: dict[str, Any]
) -> dict[str, Any]:
    """Send ``params.text`` into the running turn of ``params.sessionId``.

    Raises:
        RequestError: -32602 for malformed params, -32803 when no turn of the session runs.
    """
    try:
        args = strict_validate(SteerSessionArgs, params)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors()
        )
        raise request_error(f"invalid params: {problems}") from None
    if args.session_id not in sessions or not service.steer(args.session_id, args.text):
        raise no_turn(args.session_id)
    return SteerSessionResult().wire()


def no_turn(session_id: str) -> RequestError:
    """The error for a steer that came when no turn of ``session_id`` runs."""
    return request_error(
        f"session {session_id} has no turn running: send it as a prompt", REQUEST_FAILED
    )
