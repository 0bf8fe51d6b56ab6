"""``_cadenza/restoreTurn``: an ACP session as it was before one of the person's turns.

The same restore as the LSP face's ``cadenza.restoreTurn`` (``host.service`` ``restore_turn``,
under the session's lock): the files those turns changed are put back (a text through
``fs/write_text_file`` when the client has it, as the session's own edits go; a file to
remove, recreate or rename back on disk, as undo does), the transcript is cut before the
turn, and the turn's words come back. The next prompt revives the session from the cut
transcript, so it goes on from the conversation before the turn.
"""

from __future__ import annotations

from typing import Any

from acp import RequestError
from pydantic import ValidationError

from cadenza.acp.editor import AcpEditor
from cadenza.acp.session import REQUEST_FAILED, AcpSession
from cadenza.host.checkpoints import FileState, SessionCheckpoint, disk_state
from cadenza.host.errors import Unavailable
from cadenza.host.ports import FileEdit
from cadenza.host.service import SessionService
from cadenza.host.turn_restore import RestoreRefused
from cadenza.host.undo_plan import UndoStep
from cadenza.host.undo_writes import write_step
from cadenza.schema.commands import RestoreTurnArgs, RestoreTurnResult
from cadenza.textio import UnencodableError

INVALID_PARAMS = -32602


class AcpFiles:
    """The ``host.undo_plan.FilesPort`` of an ACP session: the disk and ``fs/*``."""

    def __init__(self, editor: AcpEditor, checkpoint: SessionCheckpoint) -> None:
        self._editor = editor
        self._root = checkpoint.root

    def current(self, relative: str) -> FileState:
        """The file on disk (as the session's checkpoint records ACP edits)."""
        return disk_state(self._root / relative)

    async def put_back(self, steps: list[UndoStep]) -> None:
        """Texts through the client when it writes files, the rest on disk.

        Raises:
            RestoreRefused: The client refused a write, or a disk write failed (files before it
                were put back).
        """
        for step in steps:
            if step.action == "unchanged":
                continue
            if step.action == "restore" and self._editor.fs.write_text_file:
                await self._write(step)
                continue
            try:
                write_step(self._root, step)
            except (OSError, UnencodableError) as exc:
                raise RestoreRefused(f"putting back {step.path} failed: {exc}") from None

    async def _write(self, step: UndoStep) -> None:
        edit = FileEdit(
            path=self._root / step.path,
            old_text=step.current.text,
            new_text=step.target.text or "",
            version=None,
            label=f"Restore {step.path}",
        )
        outcome = await self._editor.deliver_unrecorded(edit)
        if not outcome.applied:
            raise RestoreRefused(f"{step.path} was not put back: {outcome.reason}")


def parse_args(params: dict[str, Any]) -> RestoreTurnArgs:
    """The extension method's params ``{sessionId, turn}``.

    Raises:
        RequestError: Malformed (-32602, the message names the field).
    """
    try:
        return RestoreTurnArgs.model_validate(params)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors()
        )
        raise RequestError(INVALID_PARAMS, f"_cadenza/restoreTurn: {problems}") from None


async def restore_acp_turn(
    live: AcpSession | None, args: RestoreTurnArgs, service: SessionService[None]
) -> RestoreTurnResult:
    """Restore the ACP session ``live`` to before the person's turn ``args.turn``.

    Raises:
        RequestError: -32803 when the session is unknown here, running (here or in another
            server), has no such turn, or its files could not be put back (nothing was cut
            then).
    """
    session_id = args.session_id
    if live is None:
        raise _failed(f"unknown session {session_id!r}: load it first (session/load)")
    if live.run is not None and not live.run.done():
        raise _failed(
            f"session {session_id} is running: wait for its turn to end, or cancel it, "
            "before restoring it"
        )
    editor = live.editor
    async with live.turns:
        try:
            return await service.restore_turn(
                session_id, args.turn, lambda checkpoint: AcpFiles(editor, checkpoint)
            )
        except Unavailable as exc:
            raise _failed(str(exc)) from None


def _failed(message: str) -> RequestError:
    return RequestError(REQUEST_FAILED, message)
