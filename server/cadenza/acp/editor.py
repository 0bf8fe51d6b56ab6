"""The ``Editor`` port over ACP: edits, permission prompts and events of one session.

- ``open_document``: None. Tools read files from disk. ACP's ``fs/read_text_file`` would give
  the client's unsaved buffers, but it is a request (async) while ``open_document`` is
  synchronous; reading through the client is left for a later slice.
- ``apply_edit``: a text change or a new file goes to the client as ``fs/write_text_file``
  with the whole new text when the client has ``fs.writeTextFile`` (so the editor sees it,
  and can show or undo it); a change is refused when the file on disk no longer holds what
  the tool read. Files in a legacy encoding or with a BOM, deletions and renames, and every
  edit for a client without ``fs.writeTextFile``, are written on disk atomically
  (``tools.fs.apply_on_disk``), which keeps the file's bytes outside the change.
- Before the session's first change to a file its state goes into the session's checkpoint
  (``tools.checkpoints``, as with the LSP face), so ``cadenza undo <sessionId>`` can put the
  files back.
- ``request_permission``: ``session/request_permission`` with ACP's four options (the option
  id is the option kind), the outcome mapped to ``PermissionAnswer``.
- ``ask_user``: None (declined). A permission request is not a question with a free-text
  answer, and ACP's elicitation is not stable yet; the ``ask_user`` tool tells the model.
- ``publish``: the event's ``session/update`` (``updates.UpdateMapper``), queued in order.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol, get_args

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)
from pydantic import ValidationError

from cadenza.acp.stream import UpdateStream
from cadenza.acp.updates import UpdateMapper, raw_input
from cadenza.engine.events import (
    AgentMessageChunk,
    SessionEvent,
    StepStarted,
    ToolCallFinished,
    ToolCallStarted,
)
from cadenza.engine.permissions import (
    OPTION_NAMES,
    PermissionAnswer,
    PermissionOptionKind,
    PermissionRequest,
)
from cadenza.engine.workflows import Workflow
from cadenza.tools.checkpoints import ABSENT, CheckpointError, FileState, SessionCheckpoint
from cadenza.tools.fs import apply_on_disk
from cadenza.tools.host import DocumentSnapshot, EditOutcome, FileEdit
from cadenza.tools.textfile import UTF8, UndecodableError, decode_bytes

log = logging.getLogger(__name__)

OPTION_KINDS: tuple[PermissionOptionKind, ...] = get_args(PermissionOptionKind)


class AcpClient(Protocol):
    """The client requests the editor makes (the SDK's ``AgentSideConnection``)."""

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """``session/request_permission``."""
        ...

    async def write_text_file(
        self, session_id: str, path: str, content: str
    ) -> WriteTextFileResponse | None:
        """``fs/write_text_file``."""
        ...


@dataclass(frozen=True, kw_only=True)
class ClientFs:
    """What the client said it can do in ``initialize`` (``clientCapabilities``)."""

    read_text_file: bool = False
    write_text_file: bool = False
    terminal: bool = False


def permission_options() -> list[PermissionOption]:
    """ACP's four options, in the order the person sees them (id = kind)."""
    return [
        PermissionOption(option_id=kind, name=OPTION_NAMES[kind], kind=kind)
        for kind in OPTION_KINDS
    ]


def permission_answer(response: RequestPermissionResponse) -> PermissionAnswer:
    """The engine's answer for the client's outcome (an unknown option is a dismissal)."""
    outcome = response.outcome
    if isinstance(outcome, AllowedOutcome):
        for kind in OPTION_KINDS:
            if outcome.option_id == kind:
                return PermissionAnswer(outcome="selected", option=kind)
        log.warning("unknown permission option %r: treated as dismissed", outcome.option_id)
    return PermissionAnswer(outcome="cancelled")


def disk_state(path: Path) -> FileState:
    """The state of ``path`` on disk: absent, or its bytes and (when it is text) its text."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return ABSENT
    try:
        text: str | None = decode_bytes(data).text
    except UndecodableError:
        text = None
    return FileState(exists=True, text=text, data=data)


def record_after(checkpoint: SessionCheckpoint, edit: FileEdit) -> None:
    """Record what an applied ``edit`` left its files in (a rename remembers its origin).

    Raises:
        CheckpointError: The checkpoint cannot be written.
    """
    if edit.kind == "rename":
        assert edit.new_path is not None  # FileEdit.__post_init__
        origin = checkpoint.origin_of(edit.path)
        checkpoint.record_after(edit.path, ABSENT)
        checkpoint.record_after(
            edit.new_path, FileState(exists=True, text=edit.new_text, origin=origin)
        )
    elif edit.kind == "delete":
        checkpoint.record_after(edit.path, ABSENT)
    else:
        checkpoint.record_after(edit.path, FileState(exists=True, text=edit.new_text))


def _refused(reason: str) -> EditOutcome:
    return EditOutcome(applied=False, reason=reason, refused_by="cadenza")


class AcpEditor:
    """One session's editor over ACP, implementing ``cadenza.engine.ports.Editor``.

    Args:
        client: The connection to the client.
        stream: The session's ordered updates.
        root: The session's workspace root.
        fs: The client's file-system capabilities.
        workflows: The workflows by name (multi-movement runs are shown as a plan).
        checkpoint: Where the files' states before the session's changes are recorded (for
            ``cadenza undo``); None records nothing.
    """

    def __init__(
        self,
        client: AcpClient,
        stream: UpdateStream,
        root: Path,
        fs: ClientFs,
        workflows: Mapping[str, Workflow] | None = None,
        checkpoint: SessionCheckpoint | None = None,
    ) -> None:
        self._client = client
        self.checkpoint = checkpoint
        self.stream = stream
        self.root = root
        self.fs = fs
        self._mapper = UpdateMapper(root, workflows)
        self.open_calls: dict[str, None] = {}
        """Tool calls started and not finished (closed as failed when a prompt is cancelled)."""
        self.step_text = ""
        """The assistant text published since the last step started."""

    @property
    def session_id(self) -> str:
        """The ACP session id."""
        return self.stream.session_id

    def open_document(self, path: Path) -> DocumentSnapshot | None:
        """None: tools read the file from disk (see the module docstring)."""
        return None

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Write ``edit`` through ``fs/write_text_file`` when the client can, else on disk.

        Before the session's first change to a file, its state goes into the session's
        checkpoint (when there is one), so ``cadenza undo`` can put it back.
        """
        if edit.kind == "change" and edit.old_text == edit.new_text:
            return EditOutcome(applied=True)
        checkpoint = self.checkpoint
        if checkpoint is None:
            return await self._deliver(edit)
        touched = [edit.path] if edit.new_path is None else [edit.path, edit.new_path]
        try:
            for path in touched:
                checkpoint.record_before(path, partial(disk_state, path))
        except CheckpointError as exc:
            return _refused(f"{exc}; nothing was changed")
        outcome = await self._deliver(edit)
        try:
            if outcome.applied:
                record_after(checkpoint, edit)
            else:
                checkpoint.forget_unapplied(touched)
        except CheckpointError as exc:
            log.warning("session %s: %s", self.session_id, exc)
        return outcome

    async def _deliver(self, edit: FileEdit) -> EditOutcome:
        if not self.fs.write_text_file or edit.kind in ("delete", "rename"):
            return apply_on_disk(edit)
        if edit.kind == "create":
            if edit.path.exists():
                return _refused("the file exists already")
            return await self._write(edit)
        try:
            decoded = decode_bytes(edit.path.read_bytes())
        except FileNotFoundError:
            return _refused("the file was removed since it was read")
        except (OSError, UndecodableError) as exc:
            return _refused(f"cannot read the file: {exc}")
        if decoded.text != edit.old_text:
            return _refused("the file changed on disk since it was read")
        if decoded.format.encoding != UTF8:
            return apply_on_disk(edit)  # keep its encoding and BOM byte for byte
        return await self._write(edit)

    async def _write(self, edit: FileEdit) -> EditOutcome:
        try:
            await self._client.write_text_file(
                session_id=self.session_id, path=str(edit.path), content=edit.new_text
            )
        except RequestError as exc:
            return EditOutcome(applied=False, reason=f"the editor answered with an error: {exc}")
        return EditOutcome(applied=True)

    async def ask_user(self, question: str) -> str | None:
        """None: free-text questions are not supported over ACP yet (declined)."""
        return None

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        """Ask through ``session/request_permission``; an error counts as dismissed."""
        tool_call = ToolCallUpdate(
            tool_call_id=request.tool_call_id,
            title=request.title,
            kind=request.kind,
            status="pending",
            raw_input=raw_input(request.raw_input),
        )
        await self.stream.flush()  # the tool_call update first, then the question
        try:
            response = await self._client.request_permission(
                session_id=self.session_id, tool_call=tool_call, options=permission_options()
            )
        except RequestError as exc:
            log.warning("session %s: permission request failed: %s", self.session_id, exc)
            return PermissionAnswer(outcome="cancelled")
        except ValidationError as exc:  # a malformed answer: dismissed, as an error is
            log.warning(
                "session %s: malformed permission answer, treated as dismissed: %s",
                self.session_id,
                exc,
            )
            return PermissionAnswer(outcome="cancelled")
        return permission_answer(response)

    def publish(self, event: SessionEvent) -> None:
        """Queue the event's ``session/update`` (in order; never blocks)."""
        if isinstance(event, StepStarted):
            self.step_text = ""
        elif isinstance(event, AgentMessageChunk):
            self.step_text += event.text
        elif isinstance(event, ToolCallStarted):
            self.open_calls[event.tool_call_id] = None
        elif isinstance(event, ToolCallFinished):
            self.open_calls.pop(event.tool_call_id, None)
        update = self._mapper.update(event)
        if update is not None:
            self.stream.send(update)
