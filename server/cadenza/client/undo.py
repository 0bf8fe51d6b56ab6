"""``cadenza undo SESSION_ID``: put back the files a session changed, and list them."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from rich.console import Console

from cadenza.client.errors import ClientError
from cadenza.client.options import ClientOptions
from cadenza.client.safe_text import line_markup, visible_markup
from cadenza.client.session import HeadlessClient
from cadenza.schema.commands import UndoSessionResult

EXIT_OK = 0
EXIT_ERROR = 1


def undo_main(args: argparse.Namespace) -> int:
    """Run ``cadenza undo SESSION_ID``: start a server, undo the session, list the files.

    Args:
        args: ``session_id`` and ``workspace`` from the parser in :mod:`cadenza.cli`.

    Returns:
        0 when the files were put back (or there was nothing to put back), 1 when the server
        refused (a file changed since, an unknown session) or could not be started.
    """
    console = Console(highlight=False)
    errors = Console(stderr=True, highlight=False)
    options = ClientOptions(workspace=Path(args.workspace))

    async def undo() -> UndoSessionResult:
        async with HeadlessClient(options) as client:
            return await client.undo(args.session_id)

    try:
        result = asyncio.run(undo())
    except ClientError as exc:
        errors.print(f"[red]error:[/] {visible_markup(str(exc))}", soft_wrap=True)
        return EXIT_ERROR
    print_undone(console, result)
    return EXIT_OK


def print_undone(console: Console, result: UndoSessionResult) -> None:
    """One line per file put back or left alone (a name's line break is shown, not made)."""
    for file in result.files:
        moved = f" (from {file.old_path})" if file.old_path else ""
        console.print(f"{file.action} {line_markup(file.path)}{line_markup(moved)}", soft_wrap=True)
    for path in result.unchanged:
        console.print(f"unchanged {line_markup(path)} (already as before)", soft_wrap=True)
    if not result.files and not result.unchanged:
        console.print("the session changed no file")
