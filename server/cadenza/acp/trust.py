"""The workspace trust question over ACP, asked at a session's first prompt.

When the session's folder has ``cadenza.toml`` settings that need trust (``config.workspace``)
and the person never decided about it (``host.trust``), those settings are held back at
``session/new``; the first prompt asks with ``session/request_permission`` (ACP's permission
path, the only prompt every ACP client shows) about a pseudo tool call naming the file and the
settings. "Trust this folder" (``allow_always``) records the decision; "Trust for this session"
(``allow_once``) applies the settings without recording; "Don't trust" (``reject_always``)
records a refusal. Dismissed, failed or unanswered within the permission timeout: nothing is
recorded and the settings stay ignored.
"""

from __future__ import annotations

import logging
from typing import Literal

import anyio
from acp import RequestError
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate
from pydantic import ValidationError

from cadenza.acp.permissions import PermissionClient
from cadenza.host.trust import DISTRUST, TRUST, FolderTrust, TrustStore

log = logging.getLogger(__name__)

TRUST_CALL_ID = "cadenza-workspace-trust"
"""The ``toolCallId`` of the trust question (no tool call of the model has it)."""

TRUST_ONCE = "Trust for this session"

Answer = Literal["trusted", "session", "untrusted"]

_OPTIONS: dict[str, tuple[str, Answer, Literal["allow_always", "allow_once", "reject_always"]]] = {
    "trust": (TRUST, "trusted", "allow_always"),
    "trust_once": (TRUST_ONCE, "session", "allow_once"),
    "distrust": (DISTRUST, "untrusted", "reject_always"),
}
"""Option id → (name, answer, ACP kind)."""


async def ask_trust(
    client: PermissionClient, session_id: str, trust: FolderTrust, timeout_s: float
) -> Answer | None:
    """Ask about ``trust``'s folder; None when dismissed, failed or unanswered in time."""
    tool_call = ToolCallUpdate(
        tool_call_id=TRUST_CALL_ID,
        title=trust.question(),
        kind="other",
        status="pending",
        raw_input={"folder": str(trust.folder)},
    )
    options = [
        PermissionOption(option_id=option_id, name=name, kind=kind)
        for option_id, (name, _answer, kind) in _OPTIONS.items()
    ]
    with anyio.move_on_after(timeout_s):
        try:
            response = await client.request_permission(
                session_id=session_id, tool_call=tool_call, options=options
            )
        except (RequestError, ValidationError) as exc:
            log.warning("session %s: the workspace trust question failed: %s", session_id, exc)
            return None
        outcome = response.outcome
        if isinstance(outcome, AllowedOutcome) and outcome.option_id in _OPTIONS:
            return _OPTIONS[outcome.option_id][1]
    return None


def record(answer: Answer | None, trust: FolderTrust, store: TrustStore | None = None) -> None:
    """Record a "this folder" answer (a session-only or missing one records nothing)."""
    if answer not in ("trusted", "untrusted"):
        return
    try:
        (store or TrustStore()).record(trust.folder, answer)
    except OSError as exc:
        log.warning("could not record the trust decision for %s: %s", trust.folder, exc)
