"""The client's handlers of server → client messages, one thin function per method.

Requests: ``workspace/applyEdit`` (written by the applier; an edit whose change annotation needs
confirmation is shown to the prompter first), ``window/workDoneProgress/create``
(accepted), ``cadenza/askUser``, ``window/showMessageRequest`` and ``cadenza/requestPermission``
(the prompter; a permission request is given the tool's name from the call's ``tool_call``
update). Notifications: ``$/progress``, ``cadenza/sessionUpdate``, ``window/showMessage``,
``window/logMessage`` (to the observer). Handlers take only ``params``: pygls passes the client
itself only to a first parameter named ``ls``, which none of these has.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from cadenza.client.edits import EditApplied, EditRefused, FileChange, WorkspaceEditApplier
from cadenza.client.events import (
    ClientEvent,
    EditRejected,
    EditWritten,
    PermissionAnswered,
    Progress,
    ServerMessage,
    UserAsked,
)
from cadenza.client.permissions import PermissionAsk, ToolNames
from cadenza.client.prompts import Prompter
from cadenza.schema.methods import ASK_USER, REQUEST_PERMISSION, SESSION_UPDATE
from cadenza.schema.requests import (
    AskUserParams,
    AskUserResult,
    CancelledOutcome,
    RequestPermissionParams,
    RequestPermissionResult,
    SelectedOutcome,
)
from cadenza.schema.updates import SessionUpdateParams

DECLINED = "the person declined the change"
"""``failureReason`` of an edit the person did not confirm."""

_LEVELS: dict[int, Literal["error", "warning", "info", "log", "debug"]] = {
    types.MessageType.Error: "error",
    types.MessageType.Warning: "warning",
    types.MessageType.Info: "info",
    types.MessageType.Log: "log",
    types.MessageType.Debug: "debug",
}


class ServerRequests:
    """State shared by the handlers.

    Attributes:
        applier: Writes ``workspace/applyEdit`` to disk (replaced once the position encoding
            is negotiated).
        prompter: Answers questions.
        publish: Hands an event to the observer.
        on_change: Receives the files each applied edit changed.
    """

    def __init__(
        self,
        *,
        applier: WorkspaceEditApplier,
        prompter: Prompter,
        publish: Callable[[ClientEvent], None],
        on_change: Callable[[Sequence[FileChange]], None],
    ) -> None:
        self.applier = applier
        self.prompter = prompter
        self.publish = publish
        self.on_change = on_change
        self.tool_names = ToolNames()

    async def apply_edit(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        """Write the edit all-or-nothing; a refusal carries its reason (``failureReason``).

        An edit that needs confirmation (review mode ``confirm``) is shown to the prompter
        first; declined, nothing is written.
        """
        prepared = self.applier.prepare(params.edit)
        if isinstance(prepared, EditRefused):
            return self._refused(params, prepared.reason)
        if prepared.review is not None:
            accepted = await self.prompter.confirm_edit(prepared.review)
            question = f"apply {prepared.review.label}?"
            self.publish(UserAsked(question=question, answer="yes" if accepted else None))
            if not accepted:
                return self._refused(params, DECLINED)
        result = self.applier.commit(prepared)
        if isinstance(result, EditApplied):
            self.on_change(result.changes)
            self.publish(EditWritten(label=params.label, changes=result.changes))
            return types.ApplyWorkspaceEditResult(applied=True)
        return self._refused(params, result.reason)

    def _refused(
        self, params: types.ApplyWorkspaceEditParams, reason: str
    ) -> types.ApplyWorkspaceEditResult:
        self.publish(EditRejected(label=params.label, reason=reason))
        return types.ApplyWorkspaceEditResult(applied=False, failure_reason=reason)

    def progress(self, params: types.ProgressParams) -> None:
        """Publish a work-done progress value; values of other shapes are ignored."""
        value: Any = params.value
        if isinstance(value, dict) and value.get("kind") in ("begin", "report", "end"):
            percentage = value.get("percentage")
            self.publish(
                Progress(
                    kind=value["kind"],
                    title=value.get("title"),
                    message=value.get("message"),
                    percentage=percentage if isinstance(percentage, int) else None,
                )
            )

    async def ask_user(self, params: AskUserParams) -> AskUserResult:
        """Ask the prompter; None answers mean declined."""
        answer = await self.prompter.ask(params)
        self.publish(UserAsked(question=params.question, answer=answer))
        return AskUserResult(answer=answer)

    async def show_message_request(
        self, params: types.ShowMessageRequestParams
    ) -> types.MessageActionItem | None:
        """Offer the actions; None when dismissed or not among them."""
        titles = [action.title for action in params.actions or ()]
        choice = await self.prompter.choose(params.message, titles)
        self.publish(UserAsked(question=params.message, answer=choice))
        return types.MessageActionItem(title=choice) if choice in titles else None

    async def request_permission(self, params: RequestPermissionParams) -> RequestPermissionResult:
        """Ask the prompter about the call's tool (named by its ``tool_call`` update).

        The selected option's id, or ``cancelled`` when the prompter picked none.
        """
        call = params.tool_call
        tool = self.tool_names.name(call.tool_call_id)
        ask = PermissionAsk(tool=tool, params=params)
        option = await self.prompter.permit(ask)
        self.publish(
            PermissionAnswered(
                tool=tool,
                tool_call_id=call.tool_call_id,
                title=call.title or "",
                answer=option.name if option is not None else None,
                kind=option.kind if option is not None else None,
                rule=ask.ruled_by(self.prompter.permissions) if option is not None else "",
                allow_rule=ask.allow_rule(),
            )
        )
        if option is None:
            return RequestPermissionResult(outcome=CancelledOutcome(outcome="cancelled"))
        return RequestPermissionResult(
            outcome=SelectedOutcome(outcome="selected", option_id=option.option_id)
        )

    def session_update(self, params: SessionUpdateParams) -> None:
        """Note the tool of each call (for permission requests), then publish the update."""
        self.tool_names.see(params.update)
        self.publish(params.update)

    def message(self, params: types.ShowMessageParams | types.LogMessageParams) -> None:
        """Publish ``window/showMessage`` or ``window/logMessage``."""
        shown = isinstance(params, types.ShowMessageParams)
        level = _LEVELS.get(params.type, "info")
        self.publish(ServerMessage(level=level, message=params.message, shown=shown))

    def register(self, lsp: LanguageClient) -> None:
        """Register one handler per method on ``lsp``.

        Lambdas rather than bound methods: pygls's feature manager sets attributes on what it
        registers, which bound methods do not allow.
        """
        handlers: dict[str, Callable[..., Any]] = {
            types.WORKSPACE_APPLY_EDIT: _coroutine(self.apply_edit),
            types.WINDOW_WORK_DONE_PROGRESS_CREATE: lambda params: None,
            types.PROGRESS: lambda params: self.progress(params),
            SESSION_UPDATE: lambda params: self.session_update(params),
            ASK_USER: _coroutine(self.ask_user),
            REQUEST_PERMISSION: _coroutine(self.request_permission),
            types.WINDOW_SHOW_MESSAGE_REQUEST: _coroutine(self.show_message_request),
            types.WINDOW_SHOW_MESSAGE: lambda params: self.message(params),
            types.WINDOW_LOG_MESSAGE: lambda params: self.message(params),
        }
        for method, handler in handlers.items():
            lsp.protocol.fm.feature(method)(handler)


def _coroutine(method: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
    """A plain coroutine function calling ``method`` (pygls awaits only coroutine functions)."""

    async def handler(params: Any) -> Any:
        return await method(params)

    return handler
