"""The permission gate: gated tools ask the person before they run.

Gated tools (``run_command``, ``delete_file`` and ``browse_interactive`` by default) ask the
editor first with ACP's four options (``session/request_permission``; Cadenza sends it as
``cadenza/requestPermission``). ``allow_always`` and ``reject_always`` are remembered per
workspace (``PermissionStore``), so the person is not asked again. For a command the person may
instead allow its program and subcommand in this workspace (``allow_pattern``: "Always allow
`pytest …` in this workspace", remembered as the rule ``run_command:pytest *``; a test runner
or build tool says that it runs the workspace's own code). Rules
(``cadenza.permission_rules``) come from the person's own ``cadenza.toml`` (``[permissions]
allow``/``deny``) and from those remembered answers; deny wins, and a deny rule also refuses
calls of tools that do not ask. A change to a protected path (``tools.protected``; asked by
``engine.protected``) is the exception: it is asked every time, with the once options only, and
no rule answers it; so is ``browse`` reaching this machine or the local network
(``address``). A client that never answers gets a bounded wait (``timeout_s``), then a distinct
``timeout`` outcome: the call is not run, and a late answer is ignored because the request was
withdrawn. A rejected, dismissed or timed-out call still gets its tool message: the
gate returns the error result the model reads.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from hashlib import sha256
from pathlib import Path
from typing import Literal, Protocol

import anyio
import platformdirs
from pydantic import BaseModel, ValidationError

from cadenza.command_kinds import workspace_code
from cadenza.messages import ToolCall
from cadenza.permission_rules import Rule, RuleError, RuleSet, parse_rule, suggest_rule
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

PATTERN_OPTION = "allow_pattern"
"""The option id of "Always allow `pytest …` in this workspace" (its kind: ``allow_always``)."""

ALL_OPTIONS: tuple[PermissionOptionKind, ...] = tuple(OPTION_NAMES)
ONCE_OPTIONS: tuple[PermissionOptionKind, ...] = ("allow_once", "reject_once")
"""The options of a request about a protected path: nothing is remembered."""

DEFAULT_GATED = ("run_command", "delete_file", "browse_interactive")
DEFAULT_TIMEOUT_S = 300.0


def _as_object(raw: str) -> dict[str, object]:
    """The JSON object ``raw`` holds ({} when it is not one)."""
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


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
        address: The local address (``scheme://host:port``) a fetch would reach; asked as a
            protected path is (``once_only``).
        suggested: The rule "Always allow … in this workspace" would remember (the gate sets
            it for a command it can word as one; None: that option is not offered).
    """

    tool_call_id: str
    name: str
    title: str
    kind: ToolKind
    raw_input: str
    protected: tuple[str, ...] = ()
    address: str = ""
    suggested: Rule | None = None

    @property
    def once_only(self) -> bool:
        """Asked every time: the once options only, never answered by a rule."""
        return bool(self.protected or self.address)

    @property
    def arguments(self) -> dict[str, object]:
        """The call's arguments as an object ({} when they are not one)."""
        return _as_object(self.raw_input)

    @property
    def pattern_option_name(self) -> str | None:
        """The title of the ``allow_pattern`` option, or None when it is not offered.

        A test runner or build tool is named for what it runs: "Always allow `pytest …` in
        this workspace (it runs this workspace's conftest.py and tests)".
        """
        if self.suggested is None or self.once_only:
            return None
        name = f"Always allow `{self.suggested.shown}` in this workspace"
        code = workspace_code(self.suggested.words) if self.suggested.words else None
        return f"{name} (it runs this workspace's {code})" if code else name

    @property
    def options(self) -> tuple[PermissionOptionKind, ...]:
        """The option kinds the person is offered, in order."""
        return ONCE_OPTIONS if self.once_only else ALL_OPTIONS


@dataclass(frozen=True, kw_only=True)
class PermissionAnswer:
    """The editor's answer: an option was selected, or the prompt was dismissed/withdrawn.

    Attributes:
        outcome: ``selected`` (ACP ``{outcome: "selected", optionId}``) or ``cancelled``.
        option: The selected option's kind when ``selected``.
        pattern: True when the option was ``allow_pattern`` (its kind: ``allow_always``):
            the request's suggested rule is remembered instead of the whole tool.
    """

    outcome: Literal["selected", "cancelled"]
    option: PermissionOptionKind | None = None
    pattern: bool = False


Verdict = Literal["allowed", "rejected", "cancelled", "timeout"]


class PermissionAsker(Protocol):
    """The part of the editor port the gate needs."""

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        """Ask the person; cancelling the waiter withdraws the prompt."""
        ...


class _Rules(BaseModel):
    root: str
    tools: dict[str, Literal["allow", "reject"]] = {}
    allow: list[str] = []


@dataclass(frozen=True, kw_only=True)
class StoredRule:
    """One remembered rule of a workspace, as listed and revoked.

    Attributes:
        rule: ``TOOL`` (an "always" answer) or ``TOOL:PATTERN`` (``allow_pattern``).
        decision: ``allow`` or ``deny``.
    """

    rule: str
    decision: Literal["allow", "deny"]


class PermissionStore:
    """The "always" answers of one workspace, persisted as JSON in the person's state.

    The file is ``<user state dir>/permissions/<sha256(root)[:16]>.json`` holding
    ``{"root": str, "tools": {tool name: "allow" | "reject"}, "allow": [rule]}`` (``allow``:
    the ``allow_pattern`` answers, e.g. ``run_command:pytest *``); written atomically. It
    lives outside the workspace, so a workspace cannot widen its own permissions.

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

    def rules(self) -> RuleSet:
        """The remembered answers as rules (an unreadable pattern is skipped and logged)."""
        stored = self._load()
        allow: list[Rule] = []
        deny: list[Rule] = []
        for tool, decision in stored.tools.items():
            (allow if decision == "allow" else deny).append(Rule(tool=tool))
        for text in stored.allow:
            try:
                allow.append(parse_rule(text))
            except RuleError as exc:
                log.warning("ignoring a remembered permission in %s: %s", self.path, exc)
        return RuleSet(allow=tuple(allow), deny=tuple(deny))

    def listed(self) -> list[StoredRule]:
        """Every remembered rule, tool-wide answers first."""
        stored = self._load()
        found = [
            StoredRule(rule=tool, decision="allow" if decision == "allow" else "deny")
            for tool, decision in sorted(stored.tools.items())
        ]
        return found + [StoredRule(rule=text, decision="allow") for text in stored.allow]

    def remember(self, tool: str, rule: Literal["allow", "reject"]) -> None:
        """Persist ``rule`` for ``tool``; a write failure is logged (the answer still holds)."""
        rules = self._load()
        rules.tools[tool] = rule
        self._save(rules, tool)

    def remember_rule(self, rule: Rule) -> None:
        """Persist the allow rule ``rule`` (``allow_pattern``); a write failure is logged."""
        rules = self._load()
        if rule.text not in rules.allow:
            rules.allow.append(rule.text)
        self._save(rules, rule.text)

    def revoke(self, rule: str, decision: Literal["allow", "deny"]) -> bool:
        """Forget ``rule``; False when it was not remembered.

        Raises:
            OSError: The file could not be written (the rule still holds).
        """
        rules = self._load()
        kept = "allow" if decision == "allow" else "reject"
        if rules.tools.get(rule) == kept:
            del rules.tools[rule]
        elif decision == "allow" and rule in rules.allow:
            rules.allow.remove(rule)
        else:
            return False
        self._write(rules)
        return True

    def _save(self, rules: _Rules, what: str) -> None:
        try:
            self._write(rules)
        except OSError as exc:
            log.warning("could not remember the permission for %s: %s", what, exc)

    def _write(self, rules: _Rules) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(rules.model_dump(), indent=2), encoding="utf-8")
        os.replace(tmp, self.path)


def refusal(verdict: Verdict, name: str, timeout_s: float, rule: str = "") -> ToolResult:
    """The error result the model reads for a call that was not allowed (``declined``).

    ``rule``: the person's rule that refused it, unasked (``PermissionGate.refusing_rule``).
    """
    if verdict == "rejected" and rule:
        text = (
            f"the person's permission rules refuse this {name} call; it was not run. Do not "
            "retry it: do the task another way, or finish and say what you could not do."
        )
        summary = f"refused by your rule `{rule}`"
        return ToolResult(content=text, is_error=True, declined=True, summary=summary)
    text = {
        "rejected": f"the person rejected this {name} call; it was not run. Do not retry it: "
        "do the task another way, or finish and say what you could not do.",
        "cancelled": f"the person dismissed the permission request; the {name} call was not run.",
        "timeout": f"the permission request timed out after {timeout_s:g} s with no answer; "
        f"the {name} call was not run.",
        "allowed": "",
    }[verdict]
    return ToolResult(content=text, is_error=True, declined=True)


class PermissionGate:
    """Asks before gated tools run; applies rules; remembers ``*_always`` answers.

    Args:
        asker: The editor.
        store: The workspace's remembered decisions (None: nothing is remembered).
        gated: Names of the tools that ask first.
        timeout_s: How long to wait for an answer (seconds) before the ``timeout`` outcome.
        rules: The person's own allow/deny rules (``[permissions]`` of their config).
    """

    def __init__(
        self,
        asker: PermissionAsker,
        *,
        store: PermissionStore | None,
        gated: frozenset[str] = frozenset(DEFAULT_GATED),
        timeout_s: float = DEFAULT_TIMEOUT_S,
        rules: RuleSet | None = None,
    ) -> None:
        self.asker = asker
        self.store = store
        self.gated = gated
        self.timeout_s = timeout_s
        self.rules = rules or RuleSet()
        self.waited_s = 0.0
        """Seconds spent waiting for answers so far (a time budget does not count them)."""

    def needs_asking(self, tool: str) -> bool:
        """Whether a call of ``tool`` goes through ``check`` (gated, or named by a deny rule)."""
        return tool in self.gated or any(rule.tool == tool for rule in self.rules.deny)

    def runs_unasked(self, call: ToolCall) -> bool:
        """Whether ``call`` would run without asking the person.

        Not gated and named by no deny rule, or allowed by a rule (theirs, or an "always"
        answer they gave).
        """
        if not self.needs_asking(call.name):
            return True
        return self._ruled(call.name, _as_object(call.arguments)) == "allowed"

    def denies(self, call: ToolCall) -> bool:
        """Whether a deny rule (or a remembered "never") refuses ``call``."""
        return self._ruled(call.name, _as_object(call.arguments)) == "rejected"

    def refusing_rule(self, call: ToolCall) -> str:
        """The deny rule (or remembered "never") that refuses ``call``, as written; "" none."""
        rules = self.rules if self.store is None else self.rules | self.store.rules()
        found = rules.deciding(call.name, _as_object(call.arguments))
        return found[1].text if found is not None and found[0] == "deny" else ""

    def _ruled(self, name: str, arguments: Mapping[str, object]) -> Verdict | None:
        """The verdict the rules give a call of ``name`` (deny wins), or None: ask.

        The rules are the person's own and their remembered answers ("always", and
        "Always allow … in this workspace"); the one place either settles a call unasked.
        """
        rules = self.rules if self.store is None else self.rules | self.store.rules()
        decision = rules.decide(name, arguments)
        if decision is None:
            return None
        return "allowed" if decision == "allow" else "rejected"

    async def check(self, request: PermissionRequest) -> tuple[Verdict, str | None]:
        """Decide whether the call may run.

        Returns:
            ``(verdict, option)``: ``allowed``/``rejected`` with the selected option kind
            (``allow_pattern`` for that option; ``"remembered"`` for a rule), ``cancelled``
            (dismissed) or ``timeout`` (no answer within ``timeout_s``; the prompt is
            withdrawn) with None.
        """
        if not request.once_only:  # a protected path or a local address: asked every time
            ruled = self._ruled(request.name, request.arguments)
            if ruled is not None:
                return ruled, "remembered"
            if request.name not in self.gated:  # named by a deny rule that did not fit
                return "allowed", None
            if self.store is not None:
                request = replace(request, suggested=suggest_rule(request.name, request.arguments))
        store = None if request.once_only else self.store
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
        if answer.pattern and request.suggested is not None and store is not None:
            store.remember_rule(request.suggested)
            return "allowed", PATTERN_OPTION
        if option.endswith("_always") and store is not None:
            store.remember(request.name, "allow" if option == "allow_always" else "reject")
        return ("allowed" if option.startswith("allow") else "rejected"), option
