"""``_cadenza/steerSession``: the person's message into a running prompt turn (ACP extension).

The same arguments and result as the LSP face's ``cadenza.steerSession``: ``{sessionId,
text}`` → ``{steered: true}``; the session's engine takes the text as a user message at its
next step boundary (``Session.steer``). Malformed params are answered with -32602; a session
with no turn running (unknown, never prompted, or between turns) with -32803, and nothing
was taken: the client sends the text as its next ``session/prompt`` instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp import RequestError
from pydantic import ValidationError

from cadenza.acp.session import AcpSession, request_error
from cadenza.schema.base import strict_validate
from cadenza.schema.commands import SteerSessionArgs, SteerSessionResult

REQUEST_FAILED = -32803
"""LSP 3.17's ``RequestFailed``: the request was valid, but cannot be done now."""


def steer_session(sessions: Mapping[str, AcpSession], params: dict[str, Any]) -> dict[str, Any]:
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
    live = sessions.get(args.session_id)
    running = live is not None and live.run is not None and not live.run.done()
    hosted = live.hosted if live is not None and running else None
    if hosted is None or not hosted.session.steer(args.text):
        raise no_turn(args.session_id)
    return SteerSessionResult().wire()


def no_turn(session_id: str) -> RequestError:
    """The error for a steer that came when no turn of ``session_id`` runs."""
    return request_error(
        f"session {session_id} has no turn running: send it as a prompt", REQUEST_FAILED
    )
