"""Permission prompts over ACP: ``session/request_permission`` with ACP's four options.

The option id is the option kind; a command the person may allow by its program also gets
``allow_pattern`` ("Always allow `pytest …` in this workspace", kind ``allow_always``) after
"Allow once"; the client's outcome maps to the engine's
``PermissionAnswer``. An error or a malformed answer counts as dismissed.
"""

from __future__ import annotations

import logging
from typing import Protocol, get_args

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)
from pydantic import ValidationError

from cadenza.host.ports import (
    OPTION_NAMES,
    PATTERN_OPTION,
    PermissionAnswer,
    PermissionOptionKind,
    PermissionRequest,
)
from cadenza.schema.updates import raw_input

log = logging.getLogger(__name__)

OPTION_KINDS: tuple[PermissionOptionKind, ...] = get_args(PermissionOptionKind)


class PermissionClient(Protocol):
    """The request a permission prompt makes (the SDK's ``AgentSideConnection``)."""

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """``session/request_permission``."""
        ...


def permission_options(
    kinds: tuple[PermissionOptionKind, ...] = OPTION_KINDS,
) -> list[PermissionOption]:
    """ACP's options of ``kinds`` (default: all four), in the order the person sees them."""
    return [PermissionOption(option_id=kind, name=OPTION_NAMES[kind], kind=kind) for kind in kinds]


def request_options(request: PermissionRequest) -> list[PermissionOption]:
    """The request's options: ``allow_pattern`` after "Allow once" when it is offered."""
    options = permission_options(request.options)
    name = request.pattern_option_name
    if name is not None:
        options.insert(
            1, PermissionOption(option_id=PATTERN_OPTION, name=name, kind="allow_always")
        )
    return options


def permission_answer(
    response: RequestPermissionResponse, *, pattern_offered: bool = False
) -> PermissionAnswer:
    """The engine's answer for the client's outcome (an unknown option is a dismissal)."""
    outcome = response.outcome
    if isinstance(outcome, AllowedOutcome):
        if pattern_offered and outcome.option_id == PATTERN_OPTION:
            return PermissionAnswer(outcome="selected", option="allow_always", pattern=True)
        for kind in OPTION_KINDS:
            if outcome.option_id == kind:
                return PermissionAnswer(outcome="selected", option=kind)
        log.warning("unknown permission option %r: treated as dismissed", outcome.option_id)
    return PermissionAnswer(outcome="cancelled")


async def ask_permission(
    client: PermissionClient, session_id: str, request: PermissionRequest
) -> PermissionAnswer:
    """Ask whether a gated call may run; an error or a malformed answer counts as dismissed."""
    tool_call = ToolCallUpdate(
        tool_call_id=request.tool_call_id,
        title=request.title,
        kind=request.kind,
        status="pending",
        raw_input=raw_input(request.raw_input),
    )
    try:
        response = await client.request_permission(
            session_id=session_id, tool_call=tool_call, options=request_options(request)
        )
    except RequestError as exc:
        log.warning("session %s: permission request failed: %s", session_id, exc)
        return PermissionAnswer(outcome="cancelled")
    except ValidationError as exc:  # a malformed answer: dismissed, as an error is
        log.warning(
            "session %s: malformed permission answer, treated as dismissed: %s", session_id, exc
        )
        return PermissionAnswer(outcome="cancelled")
    answer = permission_answer(response, pattern_offered=request.pattern_option_name is not None)
    if answer.option is not None and answer.option not in request.options:
        log.warning("permission option %r was not offered: treated as dismissed", answer.option)
        return PermissionAnswer(outcome="cancelled")
    return answer
