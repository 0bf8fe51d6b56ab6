"""The headless client's options and the first check of its arguments.

How it starts the server and the session (:class:`ClientOptions`), and what is wrong with its
arguments before anything starts (:func:`usage_problem`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DEFAULT_SERVER_COMMAND: tuple[str, ...] = (sys.executable, "-P", "-m", "cadenza", "serve")
"""``-P``: the working folder (often the workspace) is not put on ``sys.path``, so a
repository's ``cadenza/`` or a module named like a dependency is never imported."""


@dataclass(frozen=True, kw_only=True)
class ClientOptions:
    """How to start the server and the session.

    Attributes:
        workspace: The workspace folder (edits outside it are refused).
        model: ``PROVIDER/MODEL`` for the session, or None for the server's configured default.
        workflow: The workflow to run (e.g. ``plan-implement-review``), or None for the
            server's ``default``.
        max_steps: Model requests allowed in the session (``initializationOptions.maxSteps``).
        time_budget_s: Wall time the session's run may take, in seconds
            (``initializationOptions.timeBudgetS``; 0: none), or None: the server's.
        server_command: The command that starts a server speaking LSP framing on stdio.
        env: The server's environment (default: this process's).
        start_timeout: Seconds to wait for the ``initialize`` answer.
        shutdown_timeout: Seconds to wait for ``shutdown`` and for the process to exit after
            ``exit`` before it is terminated.
        stderr_sink: Called with each line the server writes to stderr (default: kept only as
            the tail shown when the server fails).
        events_path: A file to which every request and notification from the server is
            appended as one JSON line (:mod:`cadenza.client.eventlog`), or None.
        review: ``confirm``: every edit is shown to the prompter before it is written;
            ``auto``: edits are written at once; None: the server's configured ``review``.
        open_document: The file the person has open, sent as ``textDocument`` (the server
            primes it into the first message under the local loop variant), or None.
        trust_workspace: The person trusts the workspace folder for this run
            (``--trust-workspace``): its ``cadenza.toml`` may choose the model, the provider
            and programs to run. Nothing is recorded.
        allow: The person's rules whose calls run without asking (``--allow``), passed to the
            server (``cadenza serve --allow``): its own checks (the tests it runs unasked, the
            candidates it tries) then know them too, not only this client's prompter.
        deny: The person's rules whose calls are refused unasked (``--deny``), passed likewise.
    """

    workspace: Path
    model: str | None = None
    workflow: str | None = None
    max_steps: int | None = None
    time_budget_s: float | None = None
    server_command: Sequence[str] = DEFAULT_SERVER_COMMAND
    env: Mapping[str, str] | None = None
    start_timeout: float = 180.0
    shutdown_timeout: float = 5.0
    stderr_sink: Callable[[str], None] | None = None
    events_path: Path | None = None
    review: Literal["auto", "confirm"] | None = None
    open_document: Path | None = None
    trust_workspace: bool = False
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


def usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with ``cadenza run``'s arguments before anything starts, or None."""
    interactive = bool(getattr(args, "interactive", False))
    task = getattr(args, "task", None)
    if isinstance(task, str) and not task.strip() and not interactive:
        return (
            f'the task is empty; say what to do, e.g. cadenza {args.command} "rename '
            'calc_total to compute_total"'
        )
    if interactive and getattr(args, "output", "text") == "json":
        return (
            "--interactive cannot be used with --output json (the JSON report is for a run "
            "that ends on its own)"
        )
    return None
