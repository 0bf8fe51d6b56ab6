"""The ``Editor`` port over ACP: edits, permission prompts and events of one session.

- ``open_document``: the editor's text of a file this session knows (see below) while the
  file on disk has not changed since; else None (tools read the disk). ``open_document`` is
  synchronous and ``fs/read_text_file`` a request, so the editor's text is learnt in
  ``apply_edit`` and in ``refresh``, which the ACP ``read_file`` awaits before each read
  (``host.client_tools.ClientReadFile``).
- ``apply_edit``: a text change or a new file goes to the client as ``fs/write_text_file``
  with the whole new text when the client has ``fs.writeTextFile`` (so the editor sees it,
  and can show or undo it). Before a change, when the client has ``fs.readTextFile``, its
  current text is read through ``fs/read_text_file`` (unsaved buffers included): when it is
  not the text the tool changed, the edit is refused (nothing is written) and that text is
  remembered, so the model's next read sees it and its next edit applies to it. The text
  this session wrote is remembered too, so consecutive edits chain in an editor that keeps
  them unsaved. Without ``fs.readTextFile`` a change is refused when the file on disk no
  longer holds what the tool read. Files in a legacy encoding or with a BOM, deletions and
  renames, and every edit for a client without ``fs.writeTextFile``, are written on disk
  atomically (``tools.fs.apply_on_disk``), which keeps the file's bytes outside the change.
- Every edit goes through the host's checkpointed delivery (``host.edits``, as on the LSP
  face: before, pending, after), so ``cadenza undo <sessionId>`` can put the files back.
- ``request_permission``: ``session/request_permission`` with ACP's four options (the option
  id is the option kind), the outcome mapped to ``PermissionAnswer``.
- ``ask_user``: None (declined). A permission request is not a question with a free-text
  answer, and ACP's elicitation is not stable yet; the ``ask_user`` tool tells the model.
- ``publish``: the event's ``session/update`` (``updates.UpdateMapper``), queued in order.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

from acp import RequestError
from acp.schema import (
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)
from pydantic import ValidationError

from cadenza.acp.errors import describe_error
from cadenza.acp.permissions import ask_permission
from cadenza.acp.stream import UpdateStream
from cadenza.acp.updates import UpdateMapper
from cadenza.fileread import FileReadError, in_worker, read_regular, regular_or_absent
from cadenza.host.checkpoints import SessionCheckpoint, disk_state
from cadenza.host.edits import deliver_checkpointed
from cadenza.host.ports import (
    AgentMessageChunk,
    CodeIntel,
    DocumentSnapshot,
    EditOutcome,
    FileEdit,
    ModelReplied,
    PermissionAnswer,
    PermissionRequest,
    SessionEvent,
    StepStarted,
    ToolCallFinished,
    ToolCallStarted,
    Workflow,
    apply_on_disk,
)
from cadenza.schema.updates import raw_input
from cadenza.textio import UTF8, UndecodableError, decode_bytes

log = logging.getLogger(__name__)

FS_TIMEOUT_S = 60.0
"""How long ``fs/read_text_file`` and ``fs/write_text_file`` may take (the environment
variable ``CADENZA_ACP_FS_TIMEOUT_S`` overrides it)."""


def fs_timeout_s() -> float:
    """The client file-system timeout: ``CADENZA_ACP_FS_TIMEOUT_S`` or ``FS_TIMEOUT_S``."""
    value = os.environ.get("CADENZA_ACP_FS_TIMEOUT_S", "")
    try:
        seconds = float(value) if value.strip() else FS_TIMEOUT_S
    except ValueError:
        log.warning("CADENZA_ACP_FS_TIMEOUT_S=%r is not a number; using %s", value, FS_TIMEOUT_S)
        return FS_TIMEOUT_S
    return seconds if seconds > 0 else FS_TIMEOUT_S


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

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> ReadTextFileResponse:
        """``fs/read_text_file``."""
        ...


@dataclass(frozen=True, kw_only=True)
class ClientFs:
    """What the client said it can do in ``initialize`` (``clientCapabilities``)."""

    read_text_file: bool = False
    write_text_file: bool = False
    terminal: bool = False
    elicitation_url: bool = False


def _refused(reason: str) -> EditOutcome:
    return EditOutcome(applied=False, reason=reason, refused_by="cadenza")


STALE_BUFFER = (
    "the file's text in the editor is not the text this edit was made on (unsaved changes "
    "in the editor, or a change since it was read); nothing was written. Read the file "
    "again (reads now see the editor's text) and redo the edit"
)


def disk_stamp(path: Path) -> tuple[int, int] | None:
    """The file's mtime (ns) and size on disk; None when it is missing."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


@dataclass(frozen=True)
class KnownText:
    """The editor's text of a file, as this session last saw or wrote it.

    Attributes:
        text: The text.
        version: A counter of this editor (a new one for each text learnt).
        stamp: The file's ``disk_stamp`` then: when the disk changes, the text is forgotten.
    """

    text: str
    version: int
    stamp: tuple[int, int] | None


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
        self.cost: float | None = None
        """The session's model calls' cost so far, when known (``usage_update``)."""
        self.currency = "USD"
        self._commands: dict[str, str] = {}
        """Open ``run_command`` calls: id → their raw arguments."""
        self.last_call_id: str | None = None
        """The tool call that finished last (a ``waiting_human`` question refers to it)."""
        self._known: dict[Path, KnownText] = {}
        self._versions = 0
        self.fs_timeout_s = fs_timeout_s()
        """The bound on ``fs/read_text_file`` and ``fs/write_text_file``."""

    def gated_by(self, asks: Callable[[str], bool]) -> None:
        """Calls of tools ``asks`` is true for start ``pending``, ``in_progress`` once allowed."""
        self._mapper.asks = asks

    @property
    def session_id(self) -> str:
        """The ACP session id."""
        return self.stream.session_id

    def code_intel(self) -> CodeIntel | None:
        """No editor-side language intelligence (yet): the host may start its own server."""
        return None

    def open_document(self, path: Path) -> DocumentSnapshot | None:
        """The editor's text this session knows, while the disk is unchanged; else None."""
        known = self._known.get(path)
        if known is None:
            return None
        if disk_stamp(path) != known.stamp:
            del self._known[path]  # changed on disk since (saved, reverted, a command)
            return None
        return DocumentSnapshot(path=path, text=known.text, version=known.version)

    def _remember(self, path: Path, text: str) -> None:
        self._versions += 1
        self._known[path] = KnownText(text=text, version=self._versions, stamp=disk_stamp(path))

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Write ``edit`` through ``fs/write_text_file`` when the client can, else on disk.

        Delivered through the host's checkpointed edit path (``host.edits``), as on the LSP
        face: the state before, the pending state, then the state after, so ``cadenza undo``
        can put it back (also after a crash mid-edit).
        """
        if edit.kind == "change" and edit.old_text == edit.new_text:
            return EditOutcome(applied=True)
        return await deliver_checkpointed(
            self.checkpoint,
            edit,
            state_of=disk_state,
            deliver=partial(self._deliver, edit),
            warn=lambda text: log.warning("session %s: %s", self.session_id, text),
        )

    async def deliver_unrecorded(self, edit: FileEdit) -> EditOutcome:
        """Deliver ``edit`` as a session's edit is, without recording it in the checkpoint.

        Restoring a turn puts files back with it (``acp.restore``; the host records that).
        """
        return await self._deliver(edit)

    async def _deliver(self, edit: FileEdit) -> EditOutcome:
        if not self.fs.write_text_file or edit.kind in ("delete", "rename"):
            return apply_on_disk(edit)
        if edit.kind == "create":
            if edit.path.exists():
                return _refused("the file exists already")
            return await self._write(edit)
        current = await self._client_text(edit.path)
        if current is not None and current != edit.old_text:
            self._remember(edit.path, current)
            return _refused(STALE_BUFFER)
        try:
            decoded = decode_bytes(await in_worker(read_regular, edit.path))
        except (OSError, UndecodableError) as exc:
            if not os.path.lexists(edit.path):
                if current is None:
                    return _refused("the file was removed since it was read")
                return await self._write(edit)  # an editor buffer not saved yet
            return _refused(f"cannot read the file: {exc}")
        if current is None and decoded.text != edit.old_text:
            return _refused("the file changed on disk since it was read")
        if decoded.format.encoding != UTF8 and decoded.text == edit.old_text:
            return apply_on_disk(edit)  # keep its encoding and BOM byte for byte
        return await self._write(edit)

    async def refresh(self, path: Path) -> None:
        """Learn the client's current text of ``path`` (``fs/read_text_file``) before a read.

        A text other than the file's on disk is remembered (``open_document`` serves it: an
        unsaved buffer); the disk's text forgets what was remembered. Nothing is learnt when
        the client has no ``fs.readTextFile``, cannot read the file, or the path on disk is
        neither a regular file nor absent (a FIFO is not even asked about).
        """
        if not self.fs.read_text_file:
            return
        text = await self._client_text(path)
        if text is None:
            return
        known = self.open_document(path)
        if known is not None and known.text == text:
            return
        try:
            disk: str | None = decode_bytes(await in_worker(read_regular, path)).text
        except (OSError, UndecodableError):
            disk = None
        if disk == text:
            self._known.pop(path, None)
            return
        self._remember(path, text)

    async def _client_text(self, path: Path) -> str | None:
        """The client's current text of ``path`` (``fs/read_text_file``); None: not known."""
        if not self.fs.read_text_file:
            return None
        try:  # the disk first: the client is never asked for a FIFO or a device
            if not await in_worker(regular_or_absent, path):
                return None
        except FileReadError:
            return None
        try:
            async with asyncio.timeout(self.fs_timeout_s):
                response = await self._client.read_text_file(
                    session_id=self.session_id, path=str(path)
                )
        except (RequestError, ValidationError, TimeoutError) as exc:
            log.warning(
                "session %s: fs/read_text_file %s failed: %s",
                self.session_id,
                path,
                str(exc) or "no answer in time",
            )
            return None
        return response.content

    async def _write(self, edit: FileEdit) -> EditOutcome:
        try:
            async with asyncio.timeout(self.fs_timeout_s):
                await self._client.write_text_file(
                    session_id=self.session_id, path=str(edit.path), content=edit.new_text
                )
        except (RequestError, ValidationError) as exc:
            self._known.pop(edit.path, None)
            reason = f"the editor answered with an error: {describe_error(exc)}"
            return EditOutcome(applied=False, reason=reason)
        except TimeoutError:
            self._known.pop(edit.path, None)
            log.warning("session %s: fs/write_text_file %s: no answer", self.session_id, edit.path)
            return EditOutcome(
                applied=False,
                reason=(
                    f"the editor did not answer the write within {self.fs_timeout_s:g} s; the "
                    "edit is not known to be applied: read the file again before going on"
                ),
            )
        if self.fs.read_text_file:
            self._remember(edit.path, edit.new_text)
        return EditOutcome(applied=True)

    async def ask_user(self, question: str) -> str | None:
        """None: free-text questions are not supported over ACP yet (declined)."""
        return None

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        """Ask through ``session/request_permission`` (``permissions.ask_permission``)."""
        return await ask_permission(self._client, self.session_id, request)

    def claim_command(self, command: str) -> str | None:
        """The id of the open ``run_command`` call running ``command``; None: none.

        The call is claimed: a second call with the same command gets the next one.
        """
        for call_id, arguments in self._commands.items():
            parsed = raw_input(arguments)
            if isinstance(parsed, dict) and parsed.get("command") == command:
                del self._commands[call_id]
                return call_id
        return None

    def show_terminal(self, tool_call_id: str, terminal_id: str) -> None:
        """Embed the client's terminal in the call's content (``{type: terminal}``)."""
        self.stream.send(self._mapper.terminal(tool_call_id, terminal_id))

    def publish(self, event: SessionEvent) -> None:
        """Queue the event's ``session/update`` (in order; never blocks)."""
        if isinstance(event, StepStarted):
            self.step_text = ""
        elif isinstance(event, AgentMessageChunk):
            self.step_text += event.text
        elif isinstance(event, ToolCallStarted):
            self.open_calls[event.tool_call_id] = None
            if event.name == "run_command":
                self._commands[event.tool_call_id] = event.raw_input
        elif isinstance(event, ModelReplied) and event.cost is not None:
            self.cost = (self.cost or 0.0) + event.cost
            self.currency = event.currency or "USD"
        elif isinstance(event, ToolCallFinished):
            self.open_calls.pop(event.tool_call_id, None)
            self._commands.pop(event.tool_call_id, None)
            self.last_call_id = event.tool_call_id
        update = self._mapper.update(event)
        if update is not None:
            self.stream.send(update)
