"""The person's prompts in the editor: questions, permissions, and "act in the browser".

Each prompt uses Cadenza's own request when the client declared it in
``experimental.cadenza`` (an agent panel can show it properly), else LSP's
``window/showMessageRequest`` (LSP 3.17 §window/showMessageRequest), which every editor shows
but which only offers buttons:

- ``ask``: ``cadenza/askUser {sessionId, question, whyNoDefault?, options?}`` →
  ``{answer: string | null}``; fallback: the question with the options as buttons plus
  ``Answer in the agent panel`` (free text then comes as ``cadenza.replySession``).
- ``permission``: ``cadenza/requestPermission`` (ACP's ``session/request_permission`` shape)
  → ``{outcome: {outcome: "selected", optionId} | {outcome: "cancelled"}}``; fallback: the
  option titles as buttons. A command the person may allow by its program also gets
  ``{optionId: "allow_pattern", name: "Always allow `pytest …` in this workspace", kind:
  "allow_always"}`` after "Allow once".
- ``choose``: ``window/showMessageRequest`` with the given buttons (the workspace trust
  question, ``lsp.trust``).
- ``confirm_human``: ``window/showDocument {uri, external: true}`` (LSP 3.16) when the client
  supports it, then ``cadenza/waitingHuman {sessionId, waitReason, uri?, opened}`` →
  ``{action: "continue" | "cancel"}``; fallback: ``Continue when done`` / ``Cancel`` buttons.

Every request is withdrawn with ``$/cancelRequest`` when its waiter is cancelled (a cancelled
session, a permission timeout), and a late answer is dropped (``rpc.cancellable_request``).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal, TypeVar

from lsprotocol import types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from cadenza.host.ports import (
    OPTION_NAMES,
    PATTERN_OPTION,
    PermissionAnswer,
    PermissionRequest,
    ToolError,
)
from cadenza.lsp.capabilities import ClientFeatures
from cadenza.lsp.rpc import cancellable_request
from cadenza.schema.base import strict_validate
from cadenza.schema.methods import ASK_USER, REQUEST_PERMISSION, WAITING_HUMAN
from cadenza.schema.requests import (
    AskUserParams,
    AskUserResult,
    PermissionOption,
    PermissionToolCall,
    RequestPermissionParams,
    RequestPermissionResult,
    SelectedOutcome,
    WaitingHumanParams,
    WaitingHumanResult,
)
from cadenza.schema.updates import raw_input
from cadenza.secrets import redact

log = logging.getLogger(__name__)

ANSWER_IN_PANEL = "Answer in the agent panel"
CONTINUE = "Continue when done"
CANCEL = "Cancel"
HumanAction = Literal["continue", "cancel"]
M = TypeVar("M", bound=BaseModel)


class PromptError(Exception):
    """The client answered a prompt with an error or a malformed result."""


def _features(server: LanguageServer) -> ClientFeatures:
    return ClientFeatures.of(server.client_capabilities)


def _parse(model: type[M], method: str, raw: Any) -> M:
    """The client's answer to ``method``, validated strictly (unknown fields aside)."""
    try:
        return strict_validate(model, raw if raw is not None else {})
    except ValidationError:
        raise PromptError(f"the editor's answer to {method} is malformed: {raw!r}") from None


async def _request(server: LanguageServer, method: str, params: Any) -> Any:
    try:
        return await cancellable_request(server, method, params)
    except JsonRpcException as exc:
        raise PromptError(f"the editor could not show {method}: {exc}") from None


async def _buttons(server: LanguageServer, message: str, titles: list[str]) -> str | None:
    """``window/showMessageRequest``; the chosen title, or None when dismissed."""
    params = types.ShowMessageRequestParams(
        type=types.MessageType.Info,
        message=message,
        actions=[types.MessageActionItem(title=title) for title in titles],
    )
    chosen = await _request(server, types.WINDOW_SHOW_MESSAGE_REQUEST, params)
    if isinstance(chosen, types.MessageActionItem):
        return chosen.title
    if isinstance(chosen, dict) and isinstance(chosen.get("title"), str):
        return str(chosen["title"])
    return None


async def choose(server: LanguageServer, message: str, titles: list[str]) -> str | None:
    """Offer ``titles`` as buttons (``window/showMessageRequest``); None when dismissed.

    Raises:
        PromptError: The client answered with an error.
    """
    return await _buttons(server, message, titles)


async def ask(
    server: LanguageServer,
    *,
    session_id: str,
    question: str,
    why_no_default: str | None = None,
    options: list[str] | None = None,
) -> str | None:
    """Ask the person a question.

    Returns:
        The answer; None when they declined, answered blank, dismissed the prompt, or chose to
        answer in the agent panel (fallback), so the answer, if any, comes later as
        ``cadenza.replySession``.

    Raises:
        PromptError: The client answered with an error or a malformed result.
    """
    if _features(server).ask_user:
        params = AskUserParams(
            session_id=session_id,
            question=question,
            why_no_default=why_no_default,
            options=options or None,
        )
        raw = await _request(server, ASK_USER, params.wire())
        result = _parse(AskUserResult, ASK_USER, raw)
        answer = result.answer
        return answer if answer is not None and answer.strip() else None
    message = question if not why_no_default else f"{question}\n({why_no_default})"
    chosen = await _buttons(server, message, [*(options or []), ANSWER_IN_PANEL])
    if chosen is None or chosen == ANSWER_IN_PANEL:
        return None
    return chosen


async def ask_tool_question(server: LanguageServer, session_id: str, question: str) -> str | None:
    """The ``ask_user`` tool's question: ``ask``, with failures as a ``ToolError``.

    The fallback offers ``Yes`` / ``No`` / ``Skip`` buttons (``Skip`` declines), since the
    tool's call waits for this answer and cannot take a later reply.
    """
    try:
        if _features(server).ask_user:
            return await ask(server, session_id=session_id, question=question)
        chosen = await _buttons(server, question, ["Yes", "No", "Skip"])
    except PromptError as exc:
        raise ToolError(str(exc)) from None
    return None if chosen in (None, "Skip") else chosen


FALLBACK_INPUT_CHARS = 2_000
"""Longest arguments text shown in the fallback permission prompt (characters)."""


def fallback_permission_message(request: PermissionRequest) -> str:
    r"""The fallback prompt's text: the tool and its whole arguments, never a shortened title.

    The person must see exactly what they allow: a command's second line or its tail
    (``… && curl -d @~/.ssh/id_rsa …``) must not hide behind a title cut at 60 characters.
    Arguments are shown as JSON (newlines escaped as ``\n``); past ``FALLBACK_INPUT_CHARS``
    the text is cut with a note.
    """
    raw = raw_input(request.raw_input)
    shown = json.dumps(raw, ensure_ascii=False) if not isinstance(raw, str) else repr(raw)
    shown = redact(shown)  # before the cut: a key running past it would no longer match
    if len(shown) > FALLBACK_INPUT_CHARS:
        shown = (
            shown[:FALLBACK_INPUT_CHARS]
            + f"… ({len(shown) - FALLBACK_INPUT_CHARS} more characters: see the agent panel)"
        )
    if request.once_only:  # the title names each protected file, or the local address and why
        return f"Cadenza asks before {request.title} (a {request.name} call with {shown})"
    return f"Cadenza wants to call {request.name} with {shown}"


def _permission_options(request: PermissionRequest) -> list[PermissionOption]:
    """The request's options; "Always allow `pytest …` in this workspace" after allow once."""
    options = [
        PermissionOption(option_id=kind, name=OPTION_NAMES[kind], kind=kind)
        for kind in request.options
    ]
    pattern = request.pattern_option_name
    if pattern is not None:
        options.insert(
            1, PermissionOption(option_id=PATTERN_OPTION, name=pattern, kind="allow_always")
        )
    return options


def _answer(options: list[PermissionOption], chosen: str | None) -> PermissionAnswer:
    """The answer for the chosen option id (unknown or none: dismissed)."""
    for option in options:
        if chosen == option.option_id:
            if option.option_id == PATTERN_OPTION:
                return PermissionAnswer(outcome="selected", option="allow_always", pattern=True)
            return PermissionAnswer(outcome="selected", option=option.kind)
    return PermissionAnswer(outcome="cancelled")


async def permission(
    server: LanguageServer, *, session_id: str, request: PermissionRequest
) -> PermissionAnswer:
    """Ask whether a gated tool call may run.

    Returns:
        The selected option, or ``cancelled`` (dismissed, an unknown option id, or an error
        answer: a call is never run on an answer Cadenza cannot read).
    """
    options = _permission_options(request)
    try:
        if _features(server).request_permission:
            params = RequestPermissionParams(
                session_id=session_id,
                tool_call=PermissionToolCall(
                    tool_call_id=request.tool_call_id,
                    title=request.title,
                    kind=request.kind,
                    raw_input=raw_input(request.raw_input),
                ),
                options=options,
                protected_paths=[*request.protected, *filter(None, [request.address])] or None,
            )
            raw = await _request(server, REQUEST_PERMISSION, params.wire())
            result = _parse(RequestPermissionResult, REQUEST_PERMISSION, raw)
            outcome = result.outcome
            chosen = outcome.option_id if isinstance(outcome, SelectedOutcome) else None
        else:
            message = fallback_permission_message(request)
            title = await _buttons(server, message, [option.name for option in options])
            chosen = next((o.option_id for o in options if o.name == title), None)
    except PromptError as exc:
        log.warning("session %s: permission prompt failed: %s", session_id, exc)
        return PermissionAnswer(outcome="cancelled")
    return _answer(options, chosen)


async def confirm_human(
    server: LanguageServer, *, session_id: str, wait_reason: str, uri: str | None
) -> HumanAction | None:
    """Open the page for the person, then ask them to continue when done.

    Returns:
        ``continue`` or ``cancel``; None when the prompt was dismissed (the session keeps
        waiting for ``cadenza.replySession``).

    Raises:
        PromptError: The client answered with an error or a malformed result.
    """
    features = _features(server)
    opened = False
    if uri and features.show_document:
        try:
            shown = await _request(
                server,
                types.WINDOW_SHOW_DOCUMENT,
                types.ShowDocumentParams(uri=uri, external=True),
            )
            opened = bool(getattr(shown, "success", False))
        except PromptError as exc:
            log.info("session %s: showDocument failed: %s", session_id, exc)
    if features.waiting_human:
        params = WaitingHumanParams(
            session_id=session_id, wait_reason=wait_reason, uri=uri, opened=opened
        )
        raw = await _request(server, WAITING_HUMAN, params.wire())
        result = _parse(WaitingHumanResult, WAITING_HUMAN, raw)
        return result.action
    where = f" at {uri}" if uri else ""
    chosen = await _buttons(
        server, f"Cadenza waits for you in the browser{where}: {wait_reason}", [CONTINUE, CANCEL]
    )
    if chosen == CONTINUE:
        return "continue"
    return "cancel" if chosen == CANCEL else None
