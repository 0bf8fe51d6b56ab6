"""The permission gate: gated tools ask the person before they run.

Gated tools (``run_command``, ``delete_file`` and ``browse_interactive`` by default) ask the
editor first with ACP's four options (``session/request_permission``; Cadenza sends it as
``cadenza/requestPermission``). ``allow_always`` and ``reject_always`` are remembered per
workspace (``PermissionStore``), so the person is not asked again. A change to a protected
path (``tools.protected``; asked by ``engine.protected``) is the exception: it is asked every
time, with the once options only, and no remembered rule answers it. A client that never
answers gets a bounded wait (``timeout_s``), then a distinct ``timeout`` outcome: the call is
not run, and a late answer is ignored because the request was withdrawn (field case F13). A
rejected, dismissed or timed-out call still gets its tool message (F10): the gate returns the
error result the model reads.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import Literal, Protocol

import anyio
import platformdirs
from pydantic import BaseModel, ValidationError

from cadenza.tools.base import ToolKind, ToolResult

log = logging.getLogger(__name__)

PermissionOptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
"""ACP's ``PermissionOptionKind``; Cadenza uses the kind as the option id too."""

OPTION_NAMES: dict[PermissionOptionKind, str] = {
    "allow_once": "Allow once",
    "allow_always": "Always allow",
    "reject_once": "Reject",
    "reject_always": "Always reject",
}
"""Each option's title, in the order the person sees them."""

ALL_OPTIONS: tuple[PermissionOptionKind, ...] = tuple(OPTION_NAMES)
ONCE_OPTIONS: tuple[PermissionOptionKind, ...] = ("allow_once", "reject_once")
"""The options of a request about a protected path: nothing is remembered."""

DEFAULT_GATED = ("run_command", "delete_file", "browse_interactive")
DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True, kw_only=True)
class PermissionRequest:
    """What the person is asked about: one tool call (ACP ``ToolCallUpdate`` fields).

    Attributes:
        tool_call_id: The model's ``tool_call_id``.
        name: The tool's name.
        title: A short human line, e.g. ``running `pytest -q```.
        kind: ACP's tool kind (``execute``, ``delete``, ``fetch``...).
        raw_input: The call's arguments as the model sent them (JSON text).
        protected: The protected paths the call would change (workspace-relative); such a
            request offers the once options only and is never answered by a stored rule.
    """

    tool_call_id: str
    name: str
    title: str
    kind: ToolKind
    raw_input: str
    protected: tuple[str, ...] = ()

    @property
    def options(self) -> tuple[PermissionOptionKind, ...]:
        """The option kinds the person is offered, in order."""
        return ONCE_OPTIONS if self.protected else ALL_OPTIONS


@dataclass(frozen=True, kw_only=True)
class PermissionAnswer:
    """The editor's answer: an option was selected, or the prompt was dismissed/withdrawn.

    Attributes:
        outcome: ``selected`` (ACP ``{outcome: "selected", optionId}``) or ``cancelled``.
        option: The selected option's kind when ``selected``.
    """

    outcome: Literal["selected", "cancelled"]
    option: PermissionOptionKind | None = None


Verdict = Literal["allowed", "rejected", "cancelled", "timeout"]


class PermissionAsker(Protocol):
    """The part of the editor port the gate needs."""

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        """Ask the person; cancelling the waiter withdraws the prompt."""
        ...


class _Rules(BaseModel):
    root: str
    tools: dict[str, Literal["allow", "reject"]] = {}


class PermissionStore:
    """``allow_always``/``reject_always`` decisions of one workspace, persisted as JSON.

    The file is ``<user state dir>/permissions/<sha256(root)[:16]>.json`` holding
    ``{"root": str, "tools": {tool name: "allow" | "reject"}}``; written atomically.

    Args:
        root: The workspace root.
        directory: The folder (default: ``<user state dir>/permissions``).
    """

    def __init__(self, root: Path, directory: Path | None = None) -> None:
        folder = directory or Path(platformdirs.user_state_dir("cadenza")) / "permissions"
        digest = sha256(str(root).encode("utf-8")).hexdigest()[:16]
        self.root = root
        self.path = folder / f"{digest}.json"

    def _load(self) -> _Rules:
        try:
            return _Rules.model_validate_json(self.path.read_bytes())
        except FileNotFoundError:
            return _Rules(root=str(self.root))
        except (OSError, ValidationError) as exc:
            log.warning("ignoring unreadable permission rules %s: %s", self.path, exc)
            return _Rules(root=str(self.root))

    def rule(self, tool: str) -> Literal["allow", "reject"] | None:
        """The remembered decision for ``tool``, or None (ask)."""
        return self._load().tools.get(tool)

    def remember(self, tool: str, rule: Literal["allow", "reject"]) -> None:
        """Persist ``rule`` for ``tool``; a write failure is logged (the answer still holds)."""
        rules = self._load()
        rules.tools[tool] = rule
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(rules.model_dump(), indent=2), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("could not remember the permission for %s: %s", tool, exc)


def refusal(verdict: Verdict, name: str, timeout_s: float) -> ToolResult:
    """The error result the model reads for a call that was not allowed."""
    text = {
        "rejected": f"the person rejected this {name} call; it was not run. Do not retry it: "
        "do the task another way, or finish and say what you could not do.",
        "cancelled": f"the person dismissed the permission request; the {name} call was not run.",
        "timeout": f"the permission request timed out after {timeout_s:g} s with no answer; "
        f"the {name} call was not run.",
        "allowed": "",
    }[verdict]
    return ToolResult(content=text, is_error=True)


class PermissionGate:
    """Asks before gated tools run; remembers ``*_always`` answers.

    Args:
        asker: The editor.
        store: The workspace's remembered decisions (None: nothing is remembered).
        gated: Names of the tools that ask first.
        timeout_s: How long to wait for an answer (seconds) before the ``timeout`` outcome.
    """

    def __init__(
        self,
        asker: PermissionAsker,
        *,
        store: PermissionStore | None,
        gated: frozenset[str] = frozenset(DEFAULT_GATED),
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.asker = asker
        self.store = store
        self.gated = gated
        self.timeout_s = timeout_s
        self.waited_s = 0.0
        """Seconds spent waiting for answers so far (a time budget does not count them)."""

    def needs_asking(self, tool: str) -> bool:
        """Whether a call of ``tool`` goes through ``check``."""
        return tool in self.gated

    async def check(self, request: PermissionRequest) -> tuple[Verdict, str | None]:
        """Decide whether the call may run.

        Returns:
            ``(verdict, option)``: ``allowed``/``rejected`` with the selected option kind (or
            ``"remembered"`` for a stored rule), ``cancelled`` (dismissed) or ``timeout`` (no
            answer within ``timeout_s``; the prompt is withdrawn) with None.
        """
        store = None if request.protected else self.store
        remembered = store.rule(request.name) if store is not None else None
        if remembered is not None:
            return ("allowed" if remembered == "allow" else "rejected"), "remembered"
        answer: PermissionAnswer | None = None
        asked = time.monotonic()
        try:
            with anyio.move_on_after(self.timeout_s):
                answer = await self.asker.request_permission(request)
        finally:
            self.waited_s += time.monotonic() - asked
        if answer is None:
            return "timeout", None
        if answer.outcome != "selected" or answer.option is None:
            return "cancelled", None
        option = answer.option
        if option not in request.options:  # an "always" answer to a once-only request: once
            option = "allow_once" if option.startswith("allow") else "reject_once"
        if option.endswith("_always") and store is not None:
            store.remember(request.name, "allow" if option == "allow_always" else "reject")
        return ("allowed" if option.startswith("allow") else "rejected"), option
