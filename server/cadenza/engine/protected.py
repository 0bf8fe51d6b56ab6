"""Changes to protected paths ask the person every time, whichever tool makes them.

Every file a tool changes reaches the editor as one ``FileEdit`` through the tool's host
(``ToolHost.apply_edit``); the call pipeline gives each call a host wrapped in
:class:`ProtectedWrites`, so this is the one point every tool's write passes (edit, write,
create, replace lines, delete, rename into or out of a folder, a language server's rename).
When an edit touches a protected path (``tools.protected``), the person is asked first with a
permission request naming the files; the request offers "allow once" and "reject" only, and
neither an earlier "always allow" nor a run's ``--allow`` answers it (the headless client
leaves such a request to the person, and declines it under ``--yes``). Not allowed, nothing
is sent: the tool fails with an error that says the file is protected and the person declined
(a refusal by the person: ``EditOutcome.refused_by``, ``ToolResult.declined``).

A fetch that would reach this machine or the local network (``browse``, ``tools.browse``) is
asked the same way, through :func:`local_fetch_consent`: the call's ``ToolContext.confirm``.

Commands (``run_command``) and MCP tools are programs the person allowed to run: what they
write is not a ``FileEdit`` and is not asked about here (the command watch records it for
review and undo).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from cadenza.engine.events import PermissionDecided, SessionEvent
from cadenza.engine.permissions import PermissionGate, PermissionRequest, Verdict
from cadenza.messages import ToolCall
from cadenza.tools.base import ToolKind
from cadenza.tools.host import DocumentSnapshot, EditKind, EditOutcome, FileEdit, ToolHost
from cadenza.tools.intel import CodeIntel
from cadenza.tools.paths import relative_name
from cadenza.tools.protected import protected_reason

_KINDS: dict[EditKind, ToolKind] = {
    "change": "edit",
    "create": "edit",
    "delete": "delete",
    "rename": "move",
}
"""The ACP tool kind a protected request shows for each kind of change."""


def touched_paths(edit: FileEdit) -> list[Path]:
    """The files ``edit`` changes (a rename: where it comes from and where it goes)."""
    return [edit.path] if edit.new_path is None else [edit.path, edit.new_path]


def protected_files(root: Path, edit: FileEdit) -> list[tuple[str, str]]:
    """``(workspace-relative name, what it configures)`` of each protected file ``edit`` touches."""
    found = []
    for path in touched_paths(edit):
        reason = protected_reason(root, path)
        if reason is not None:
            found.append((relative_name(root, path), reason))
    return found


def protected_title(edit: FileEdit, files: list[tuple[str, str]]) -> str:
    """The prompt's title: the change and each protected file with what it configures.

    A gerund, as every call's title (``creating the protected file .vscode/settings.json
    (VS Code's settings, tasks and launch configurations)``).
    """
    verb = {"change": "changing", "create": "creating", "delete": "deleting", "rename": "renaming"}
    listed = "; ".join(f"{name} ({what})" for name, what in files)
    return f"{verb[edit.kind]} the protected file {listed}"


def _why_not(verdict: Verdict, timeout_s: float) -> str:
    """Why a consent question did not allow it, in the words both refusals use."""
    return {
        "rejected": "the person declined",
        "cancelled": "the person declined (the request was dismissed or could not be shown)",
        "timeout": f"no answer came within {timeout_s:g} s",
        "allowed": "",
    }[verdict]


def refusal_reason(verdict: Verdict, files: list[tuple[str, str]], timeout_s: float) -> str:
    """Why the edit was not applied, for the tool's error (the model reads it)."""
    listed = "; ".join(f"{name} configures {what}" for name, what in files)
    why = _why_not(verdict, timeout_s)
    return (
        f"it is a protected file ({listed}), so changing it needs the person's consent each "
        f"time, and {why}. Do not retry: leave it as it is, do the task without changing it, "
        "or say in your answer what the person should change there themselves"
    )


class ProtectedWrites:
    """A tool host that asks before any change to a protected path (see the module).

    Args:
        host: The session's editor, as tools see it.
        gate: The session's permission gate (asks, and bounds the wait).
        root: The workspace root.
        call: The call whose tool runs with this host (the request carries its id).
        publish: Receives the ``PermissionDecided`` event of each question.
    """

    def __init__(
        self,
        host: ToolHost,
        gate: PermissionGate,
        *,
        root: Path,
        call: ToolCall,
        publish: Callable[[SessionEvent], None],
    ) -> None:
        self._host = host
        self._gate = gate
        self._root = root
        self._call = call
        self._publish = publish

    def open_document(self, path: Path) -> DocumentSnapshot | None:
        """The editor's buffer of ``path`` (the wrapped host's)."""
        return self._host.open_document(path)

    async def ask_user(self, question: str) -> str | None:
        """Ask the person (the wrapped host's)."""
        return await self._host.ask_user(question)

    def code_intel(self) -> CodeIntel | None:
        """The editor's language intelligence (the wrapped host's)."""
        return self._host.code_intel()

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Apply ``edit``; one touching a protected path only once the person allowed it."""
        files = protected_files(self._root, edit)
        if not files:
            return await self._host.apply_edit(edit)
        names = [name for name, _ in files]
        request = PermissionRequest(
            tool_call_id=self._call.id,
            name=self._call.name,
            title=protected_title(edit, files),
            kind=_KINDS[edit.kind],
            raw_input=self._call.arguments,
            protected=tuple(names),
        )
        verdict, option = await self._gate.check(request)
        self._publish(
            PermissionDecided(
                tool_call_id=self._call.id, name=self._call.name, verdict=verdict, option=option
            )
        )
        if verdict != "allowed":
            reason = refusal_reason(verdict, files, self._gate.timeout_s)
            return EditOutcome(applied=False, reason=reason, refused_by="person")
        return await self._host.apply_edit(edit)


def local_refusal(verdict: Verdict, target: str, timeout_s: float) -> str:
    """Why a fetch of a local address did not happen, for the tool's error (the model reads it)."""
    why = _why_not(verdict, timeout_s)
    return (
        f"{target} is on the person's machine or local network, so fetching it needs their "
        f"consent each time, and {why}. Do not retry it: do the task without that page, or "
        "say in your answer what the person could look at themselves"
    )


def local_fetch_consent(
    gate: PermissionGate, call: ToolCall, publish: Callable[[SessionEvent], None]
) -> Callable[[str, str], Awaitable[str | None]]:
    """The call's ``ToolContext.confirm``: asks about ``target`` every time, once options only.

    No "always" answer, rule or ``--allow`` answers it (``PermissionRequest.once_only``);
    returns None when the person allowed it, else the refusal the model reads.
    """

    async def confirm(title: str, target: str) -> str | None:
        request = PermissionRequest(
            tool_call_id=call.id,
            name=call.name,
            title=title,
            kind="fetch",
            raw_input=call.arguments,
            address=target,
        )
        verdict, option = await gate.check(request)
        publish(
            PermissionDecided(tool_call_id=call.id, name=call.name, verdict=verdict, option=option)
        )
        return None if verdict == "allowed" else local_refusal(verdict, target, gate.timeout_s)

    return confirm
