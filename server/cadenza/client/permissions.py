"""Headless answers to permission prompts: ``--allow RULE``, ``--deny RULE``, ``--allow-all``.

A gated tool (``run_command``, ``delete_file``, ``browse_interactive`` by default) asks before
each call. The headless client declares ``experimental.cadenza.requestPermission``, so the
server asks with ``cadenza/requestPermission`` (ACP's shape: the call's ``toolCallId``, title,
kind and arguments, and four options, each with an ``optionId``, a ``name`` and a ``kind``:
``allow_once``, ``allow_always``, ``reject_once``, ``reject_always``). The request does not
name the tool; the ``tool_call`` session update of the same ``toolCallId``, which the server
sends first, does (:class:`ToolNames`). A :class:`PermissionPolicy` answers those requests for
one run by rules (``cadenza.permission_rules``): ``TOOL``, or ``run_command:PATTERN`` for the
commands whose words begin with the pattern's (``run_command:pytest *``; a command with shell
syntax never fits an allow rule; deny wins). An allowed call gets the option of kind
``allow_once``, a denied one ``reject_once``, chosen by kind, never by title; nothing is
remembered (never ``…_always``),
so a policy holds for the run it was given to and no later one. Requests about other tools are
left to the prompter (declined headlessly, asked on a terminal), and so is every request about
a protected path (``protectedPaths``: a file that configures Cadenza, the editor, git or CI):
no flag answers it, not even ``--allow-all``; only the person on a terminal can allow it.

Names are the server's default tools and MCP tools, ``mcp__SERVER__TOOL`` (``[A-Za-z0-9_-]``,
at most 64 characters, as ``cadenza.mcp.naming`` makes them).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from cadenza.permission_rules import RuleError, RuleSet, parse_rule
from cadenza.schema.requests import PermissionOption, RequestPermissionParams
from cadenza.schema.updates import ToolCall, ToolCallUpdate

GATED_TOOLS = ("run_command", "delete_file", "browse_interactive")
"""The tools that ask first by default (the server's ``DEFAULT_GATED``)."""

KNOWN_TOOLS = frozenset(
    {
        *GATED_TOOLS,
        "read_file",
        "list_files",
        "search",
        "edit_file",
        "write_file",
        "replace_lines",
        "create_file",
        "rename_file",
        "browse",
        "ask_user",
        # Offered when a language server serves the workspace (``tools.registry.intel_tools``).
        "find_references",
        "go_to_definition",
        "rename_symbol",
        "diagnostics",
    }
)
"""Tool names ``--allow``/``--deny`` accept besides MCP tools: the server's default tool set
and its code-intelligence tools (any of them can be gated by ``[permissions] gated`` in
``cadenza.toml``); tests/client check it matches."""

MCP_TOOL = re.compile(r"mcp__[A-Za-z0-9_-]+?__[A-Za-z0-9_-]+")
MCP_NAME_CHARS = 64
"""An MCP tool's name: ``mcp__SERVER__TOOL`` of ``[A-Za-z0-9_-]``, at most 64 characters."""

PROMPT_INPUT_CHARS = 2_000
"""Longest arguments text shown when the terminal asks about a call (characters)."""

Decision = Literal["allow", "deny"]


class PolicyError(ValueError):
    """Contradictory or unknown tool names; the message says which and why."""


@dataclass(frozen=True, kw_only=True)
class PermissionPolicy:
    """How one headless run answers permission prompts.

    Attributes:
        allow: Rules (``TOOL`` or ``TOOL:PATTERN``) whose calls are answered ``allow_once``.
        deny: Rules whose calls are answered ``reject_once`` (deny wins over allow).
        allow_all: Every request is answered ``allow_once`` (dangerous: the model may run any
            command).
    """

    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    allow_all: bool = False

    @property
    def rules(self) -> RuleSet:
        """The allow and deny rules, read (``build`` checked them)."""
        return RuleSet.parse(allow=sorted(self.allow), deny=sorted(self.deny))

    @classmethod
    def build(
        cls, *, allow: Iterable[str] = (), deny: Iterable[str] = (), allow_all: bool = False
    ) -> PermissionPolicy:
        """Check the rules and build the policy.

        Raises:
            PolicyError: A rule cannot be read or names no known tool, a rule is both allowed
                and denied, or ``allow_all`` is combined with ``deny`` (it already allows it).
        """
        allowed = frozenset(check_rule(text) for text in allow)
        denied = frozenset(check_rule(text) for text in deny)
        if allow_all and denied:
            raise PolicyError(
                f"--allow-all allows every tool, so --deny {sorted(denied)[0]} contradicts it; "
                "list the tools to allow with --allow instead"
            )
        both = sorted(allowed & denied)
        if both:
            raise PolicyError(f"{both[0]} is both allowed (--allow) and denied (--deny)")
        return cls(allow=allowed, deny=denied, allow_all=allow_all)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> PermissionPolicy:
        """The policy of parsed ``--allow`` / ``--deny`` / ``--allow-all`` (absent: not given).

        Raises:
            PolicyError: The flags contradict each other.
        """
        return cls.build(
            allow=getattr(args, "allow", None) or (),
            deny=getattr(args, "deny", None) or (),
            allow_all=bool(getattr(args, "allow_all", False)),
        )

    @property
    def is_empty(self) -> bool:
        """True when the policy answers nothing (every prompt goes to the prompter)."""
        return not (self.allow or self.deny or self.allow_all)

    def decide(
        self, tool: str | None, arguments: Mapping[str, object] | None = None
    ) -> Decision | None:
        """``allow``, ``deny`` or None (the policy does not say: ask or decline).

        ``tool`` None (a call no ``tool_call`` update named) is allowed by ``allow_all`` only;
        a pattern rule needs the call's ``arguments``.
        """
        decided = self.rules.decide(tool, arguments or {}) if tool is not None else None
        if decided == "deny":
            return "deny"
        if self.allow_all or decided == "allow":
            return "allow"
        return None

    def choose(
        self,
        tool: str | None,
        options: Sequence[PermissionOption],
        arguments: Mapping[str, object] | None = None,
    ) -> PermissionOption | None:
        """The option to select for a call of ``tool``, or None when the policy has no say.

        Args:
            tool: The tool's name (None: unknown; only ``allow_all`` covers it).
            options: The request's options; the one of kind ``allow_once`` or ``reject_once``
                is chosen (None when the request offers no such option).
            arguments: The call's arguments (``rawInput``), for pattern rules.
        """
        decision = self.decide(tool or None, arguments)
        if decision is None:
            return None
        kind = "allow_once" if decision == "allow" else "reject_once"
        return next((option for option in options if option.kind == kind), None)

    def rule_for(self, tool: str | None, arguments: Mapping[str, object] | None = None) -> str:
        """The person's rule deciding a call, as written (``run_command:rm *``, ``--allow-all``).

        "" when none does.
        """
        found = self.rules.deciding(tool, arguments or {}) if tool is not None else None
        if found is not None and (found[0] == "deny" or not self.allow_all):
            return found[1].text
        return "--allow-all" if self.allow_all else ""

    def describe(self) -> str:
        """One line for the run's header, e.g. ``allow run_command · deny delete_file``."""
        parts = []
        if self.allow_all:
            parts.append("allow ALL tools (--allow-all)")
        elif self.allow:
            parts.append("allow " + ", ".join(sorted(self.allow)))
        if self.deny:
            parts.append("deny " + ", ".join(sorted(self.deny)))
        return " · ".join(parts) if parts else "none given"


@dataclass(frozen=True, kw_only=True)
class PermissionAsk:
    """A ``cadenza/requestPermission`` request and the tool it is about.

    Attributes:
        tool: The tool's name, from the call's ``tool_call`` update (None: no such update was
            seen, e.g. from a server that does not send it first).
        params: The request.
    """

    tool: str | None
    params: RequestPermissionParams

    @property
    def protected(self) -> list[str]:
        """The protected paths the call would change (empty for an ordinary request)."""
        return list(self.params.protected_paths or ())

    def decided_by(self, policy: PermissionPolicy) -> PermissionOption | None:
        """The option ``policy`` picks, or None: it has no say, or the request is protected."""
        if self.protected:
            return None
        raw = self.params.tool_call.raw_input
        arguments = raw if isinstance(raw, dict) else {}
        return policy.choose(self.tool, self.params.options, arguments)

    def ruled_by(self, policy: PermissionPolicy) -> str:
        """The rule of ``policy`` that answered this request ("" when the policy had no say)."""
        if self.protected:
            return ""
        raw = self.params.tool_call.raw_input
        arguments = raw if isinstance(raw, dict) else {}
        if policy.decide(self.tool, arguments) is None:
            return ""
        return policy.rule_for(self.tool, arguments)

    def allow_rule(self) -> str:
        """The ``--allow`` rule that would let this call run ("" for a protected request).

        The server's "Always allow `pytest …` in this workspace" option names the rule's
        words; without one, the tool's name (every call of it).
        """
        if self.protected or self.tool is None:
            return ""
        for option in self.params.options:
            words = option.name.split("`")
            if option.kind == "allow_always" and len(words) == 3 and words[1].strip():
                return f"{self.tool}:{words[1].replace('…', '*')}"
        return self.tool

    def question(self) -> str:
        r"""The prompt's text: the tool, the call's title and its whole arguments.

        The person must see exactly what they allow: a command's second line or its tail must
        not hide behind a shortened title. Arguments are shown as JSON (newlines escaped as
        ``\n``); past ``PROMPT_INPUT_CHARS`` the text is cut with a note.
        """
        call = self.params.tool_call
        shown = json.dumps(call.raw_input, ensure_ascii=False)
        if len(shown) > PROMPT_INPUT_CHARS:
            more = len(shown) - PROMPT_INPUT_CHARS
            shown = shown[:PROMPT_INPUT_CHARS] + f"… ({more} more characters)"
        tool = self.tool or "a tool"
        if self.protected:  # the title names each protected file and what it configures
            return f"Cadenza asks before {call.title} ({tool} with {shown})"
        title = f" ({call.title})" if call.title and call.title != self.tool else ""
        return f"Cadenza wants to call {tool}{title} with {shown}"


class ToolNames:
    """``toolCallId`` → tool name, from the ``tool_call`` session updates the client sees.

    The server sends a call's ``tool_call`` update before any request on its behalf, so a
    ``cadenza/requestPermission`` finds its tool here. A call is forgotten once it completed
    or failed (no request follows that).
    """

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    def see(self, update: object) -> None:
        """Note a ``tool_call``; forget a call whose ``tool_call_update`` ends it."""
        if isinstance(update, ToolCall) and update.name:
            self._names[update.tool_call_id] = update.name
        elif isinstance(update, ToolCallUpdate) and update.status in ("completed", "failed"):
            self._names.pop(update.tool_call_id, None)

    def name(self, tool_call_id: str) -> str | None:
        """The tool of ``tool_call_id``, or None when no ``tool_call`` named it."""
        return self._names.get(tool_call_id)


def is_mcp_tool(name: str) -> bool:
    """``name`` has the form of an MCP tool's name (``mcp__SERVER__TOOL``)."""
    return len(name) <= MCP_NAME_CHARS and MCP_TOOL.fullmatch(name) is not None


def check_rule(text: str) -> str:
    """``text`` as a rule (``TOOL`` or ``TOOL:PATTERN``) of a known tool, normalized.

    Raises:
        PolicyError: It cannot be read, or its tool is not known (``check_tool_name``).
    """
    if ":" not in text:
        return check_tool_name(text)
    try:
        rule = parse_rule(text)
    except RuleError as exc:
        raise PolicyError(str(exc)) from None
    check_tool_name(rule.tool)
    return rule.text


def check_tool_name(name: str) -> str:
    """``name`` when it is a known tool or an MCP tool's name (``mcp__SERVER__TOOL``).

    Raises:
        PolicyError: It is neither (the message lists the gated tools first).
    """
    if name not in KNOWN_TOOLS and not is_mcp_tool(name):
        others = sorted(KNOWN_TOOLS - set(GATED_TOOLS))
        raise PolicyError(
            f"unknown tool {name!r}: gated tools are {', '.join(GATED_TOOLS)}; "
            f"other tools: {', '.join(others)}; MCP tools: mcp__SERVER__TOOL"
        )
    return name
