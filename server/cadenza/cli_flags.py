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


def tool_name(text: str) -> str:
    """``--allow`` / ``--deny`` value: a known tool or ``mcp__SERVER__TOOL`` (else exit 2)."""
    from cadenza.client.permissions import PolicyError, check_tool_name

    try:
        return check_tool_name(text)
    except PolicyError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_permission_flags(parser: argparse.ArgumentParser) -> None:
    """``--allow TOOL`` (repeatable), ``--deny TOOL`` (repeatable), ``--allow-all``."""
    parser.add_argument(
        "--allow",
        metavar="TOOL",
        action="append",
        type=tool_name,
        default=[],
        help=f"answer this tool's permission requests with 'allow once' for this run only "
        f"(repeatable; gated tools: {GATED}; MCP tools as mcp__SERVER__TOOL), e.g. --allow "
        "run_command to let the agent run the project's tests",
    )
    parser.add_argument(
        "--deny",
        metavar="TOOL",
        action="append",
        type=tool_name,
        default=[],
        help="answer this tool's permission requests with 'reject' without asking (repeatable)",
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
