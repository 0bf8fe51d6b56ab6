"""Flags shared by ``cadenza run``, ``cadenza reply`` and ``cadenza batch``: permissions, output.

This module imports nothing of :mod:`cadenza.client` at import time: the parser is built for
every subcommand, and ``cadenza serve`` / ``cadenza acp`` must not pay for the client's imports
(pygls and lsprotocol: seconds on a busy machine). Tool names are checked against
:mod:`cadenza.client.permissions` only when a flag is given.
"""

from __future__ import annotations

import argparse

GATED = "run_command, delete_file, browse_interactive"
"""The gated tools, for help texts (``cadenza.client.permissions.GATED_TOOLS``)."""


def rule(text: str) -> str:
    """``--allow`` / ``--deny`` value: ``TOOL`` or ``run_command:PATTERN``, else exit 2.

    ``TOOL``: a known tool or ``mcp__SERVER__TOOL``; patterns: ``cadenza.permission_rules``.
    """
    from cadenza.client.permissions import PolicyError, check_rule

    try:
        return check_rule(text)
    except PolicyError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_permission_flags(parser: argparse.ArgumentParser) -> None:
    """``--allow RULE`` (repeatable), ``--deny RULE`` (repeatable), ``--allow-all``."""
    parser.add_argument(
        "--allow",
        metavar="RULE",
        action="append",
        type=rule,
        default=[],
        help=f"answer the permission requests RULE covers with 'allow once' for this run only "
        f"(repeatable): a tool (gated tools: {GATED}; MCP tools as mcp__SERVER__TOOL) or "
        "run_command:PATTERN, e.g. --allow 'run_command:pytest *' to let the agent run pytest "
        "with any arguments (a command with shell syntax such as ; && | $( > is still asked)",
    )
    parser.add_argument(
        "--deny",
        metavar="RULE",
        action="append",
        type=rule,
        default=[],
        help="answer the permission requests RULE covers with 'reject' without asking "
        "(repeatable; deny wins over --allow)",
    )
    parser.add_argument(
        "--allow-all",
        action="store_true",
        help="DANGEROUS: allow every permission request of this run, so the agent may run any "
        "command on this machine with your rights; use it only in a throw-away sandbox",
    )


def add_headless_flags(parser: argparse.ArgumentParser) -> None:
    """The permission flags, ``--trust-workspace`` and ``--output {text,json}``."""
    add_permission_flags(parser)
    parser.add_argument(
        "--trust-workspace",
        action="store_true",
        help="trust the workspace folder for this run: its cadenza.toml may choose the model, "
        "the provider and programs Cadenza runs (its test command, MCP servers); without it "
        "those settings are ignored unless you trusted the folder before (cadenza trust)",
    )
    parser.add_argument(
        "--output",
        choices=["text", "json"],
        default="text",
        help="json: print one JSON object at the end (session id, stop reason, exit status, "
        "files changed with their diffs, usage, wall time) and nothing else on stdout; the "
        "live display goes to stderr",
    )
