"""Headless answers to permission prompts: ``--allow TOOL``, ``--deny TOOL``, ``--allow-all``.

A gated tool (``run_command``, ``delete_file``, ``browse_interactive`` by default) asks before
each call. The headless client does not declare ``cadenza/requestPermission``, so the server
asks with ``window/showMessageRequest``: the text ``Cadenza wants to call TOOL with ARGS`` and
the buttons of ACP's four options (``Allow once``, ``Always allow``, ``Reject``, ``Always
reject``). A :class:`PermissionPolicy` answers those prompts for one run: an allowed tool gets
``Allow once``, a denied one ``Reject``; nothing is remembered (never ``Always …``), so a
policy holds for the run it was given to and no later one. Prompts about other tools, and
every other question, are left to the prompter (declined headlessly, asked on a terminal).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

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
    }
)
"""Tool names ``--allow``/``--deny`` accept: the server's default tool set (any of them can be
gated by ``[permissions] gated`` in ``cadenza.toml``); tests/client check it matches."""

ALLOW_ONCE = "Allow once"
REJECT_ONCE = "Reject"
"""The titles of the server's ``allow_once`` and ``reject_once`` buttons."""

_PROMPT = re.compile(r"Cadenza wants to call (?P<tool>[A-Za-z0-9_.:-]+) with ")
"""The start of the server's fallback permission prompt (``fallback_permission_message``)."""

Decision = Literal["allow", "deny"]


class PolicyError(ValueError):
    """Contradictory or unknown tool names; the message says which and why."""


@dataclass(frozen=True, kw_only=True)
class PermissionPolicy:
    """How one headless run answers permission prompts.

    Attributes:
        allow: Tools whose prompts are answered ``Allow once``.
        deny: Tools whose prompts are answered ``Reject``.
        allow_all: Every prompt is answered ``Allow once`` (dangerous: the model may run any
            command).
    """

    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    allow_all: bool = False

    @classmethod
    def build(
        cls, *, allow: Iterable[str] = (), deny: Iterable[str] = (), allow_all: bool = False
    ) -> PermissionPolicy:
        """Check the names and build the policy.

        Raises:
            PolicyError: A name is not a known tool, a tool is both allowed and denied, or
                ``allow_all`` is combined with ``deny`` (it already allows that tool).
        """
        allowed, denied = frozenset(allow), frozenset(deny)
        for name in sorted(allowed | denied):
            check_tool_name(name)
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

    def decide(self, tool: str) -> Decision | None:
        """``allow``, ``deny`` or None (the policy does not say: ask or decline)."""
        if tool in self.deny:
            return "deny"
        if self.allow_all or tool in self.allow:
            return "allow"
        return None

    def choose(self, message: str, actions: Sequence[str]) -> str | None:
        """The button to press for a permission prompt, or None when the policy has no say.

        Args:
            message: The ``window/showMessageRequest`` text.
            actions: Its button titles.
        """
        tool = prompted_tool(message)
        if tool is None:
            return None
        decision = self.decide(tool)
        if decision is None:
            return None
        title = ALLOW_ONCE if decision == "allow" else REJECT_ONCE
        return title if title in actions else None

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


def prompted_tool(message: str) -> str | None:
    """The tool a ``window/showMessageRequest`` asks permission for, or None (another prompt)."""
    found = _PROMPT.match(message)
    return found["tool"] if found else None


def check_tool_name(name: str) -> str:
    """``name`` when it is a known tool.

    Raises:
        PolicyError: It is not (the message lists the gated tools first).
    """
    if name not in KNOWN_TOOLS:
        others = sorted(KNOWN_TOOLS - set(GATED_TOOLS))
        raise PolicyError(
            f"unknown tool {name!r}: gated tools are {', '.join(GATED_TOOLS)}; "
            f"other tools: {', '.join(others)}"
        )
    return name
