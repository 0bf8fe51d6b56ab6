"""``cadenza complete PATH LINE COLUMN``: one inline completion, printed to stdout.

It goes the way an editor's request goes: a ``cadenza serve`` is started, the file is opened
with its text (``didOpen``) and ``textDocument/inlineCompletion`` is asked at the position.
Line and column are 1-based and count characters; the cursor stands before that column.
Nothing to add prints nothing and exits 0. When nothing came because something failed (the
model cannot fill in the middle or is not pulled, the model server failed or did not answer
within the time limit), the server says why in an error line of its log: that goes to stderr
and the exit status is 1. The file is read with
Cadenza's bounded reader (a regular file of at most ``MAX_FILE_BYTES``); the completion is
printed without control characters (a model's escape sequences never reach the terminal).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from rich.console import Console

from cadenza.client.errors import ClientError
from cadenza.client.events import ClientEvent, ServerMessage
from cadenza.client.options import ClientOptions
from cadenza.client.safe_text import printable, visible_markup
from cadenza.client.session import HeadlessClient
from cadenza.fileread import FileReadError, read_regular

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
MAX_FILE_BYTES = 16_000_000
"""The largest file completed: its text goes to the server in one message, which must stay
under the server's limit once JSON-escaped."""


class PositionError(ValueError):
    """The file cannot be read or the position is not in it; the message says which."""


@dataclass(frozen=True, kw_only=True)
class Target:
    """The file to complete, its text, and the 0-based cursor (line, column in characters)."""

    path: Path
    text: str
    line: int
    column: int


def read_target(path_arg: str, line: int, column: int) -> Target:
    """Check the file and the 1-based position.

    Raises:
        PositionError: Not a readable regular UTF-8 text file of at most ``MAX_FILE_BYTES``
            (the message says which: not found, a directory or FIFO, a link loop, too large),
            or the position is outside it.
    """
    path = Path(path_arg).expanduser()
    try:
        data = read_regular(path, limit=MAX_FILE_BYTES, label=path_arg)
    except FileReadError as exc:
        raise PositionError(str(exc)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise PositionError(f"{path_arg} is not UTF-8 text") from None
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        count = f"{len(lines)} line" if len(lines) == 1 else f"{len(lines)} lines"
        raise PositionError(f"line {line} is outside {path_arg} (it has {count})")
    length = len(lines[line - 1].rstrip("\r"))
    if not 1 <= column <= length + 1:
        raise PositionError(
            f"column {column} is outside line {line} of {path_arg} (columns 1 to {length + 1})"
        )
    return Target(path=path.resolve(), text=text, line=line - 1, column=column - 1)


def client_position(target: Target, encoding: str) -> types.Position:
    """The cursor in the server's position encoding (UTF-16 code units unless it chose else)."""
    head = target.text.split("\n")[target.line][: target.column]
    if encoding == types.PositionEncodingKind.Utf8:
        units = len(head.encode("utf-8"))
    elif encoding == types.PositionEncodingKind.Utf32:
        units = len(head)
    else:
        units = len(head.encode("utf-16-le")) // 2
    return types.Position(line=target.line, character=units)


@dataclass(frozen=True, kw_only=True)
class Completion:
    """The completion's text ("" for nothing), and the server's messages while it was made.

    Attributes:
        errors: Why nothing came, when it failed (the server's error lines).
        notes: Its warnings.
    """

    text: str
    errors: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


async def complete(target: Target, options: ClientOptions) -> Completion:
    """Start a server, ask for the completion at ``target``, shut the server down."""
    errors: list[str] = []
    notes: list[str] = []

    def observe(event: ClientEvent) -> None:
        if isinstance(event, ServerMessage) and event.level == "error":
            errors.append(event.message)
        elif isinstance(event, ServerMessage) and event.level == "warning":
            notes.append(event.message)

    async with HeadlessClient(options, observer=observe) as client:
        position = client_position(target, client.position_encoding)
        text = await client.inline_completion(target.path, target.text, position)
    return Completion(text=text, errors=tuple(errors), notes=tuple(notes))


def _workspace(arg: str | None, path: Path) -> Path:
    if arg is not None:
        return Path(arg)
    here = Path.cwd().resolve()
    return here if path.is_relative_to(here) else path.parent


def complete_main(args: argparse.Namespace) -> int:
    """Run ``cadenza complete``: print the completion (maybe nothing); errors go to stderr.

    Returns:
        0 when answered (even with nothing to add), 1 when the server or the model failed
        (not pulled, no fill-in-the-middle, no answer in time), 2 for a bad file or position.
    """
    errors = Console(stderr=True, highlight=False)
    try:
        target = read_target(args.path, args.line, args.column)
    except PositionError as exc:
        errors.print(f"[red]error:[/] {visible_markup(str(exc))}", soft_wrap=True)
        return EXIT_USAGE
    options = ClientOptions(workspace=_workspace(args.workspace, target.path))
    try:
        completion = asyncio.run(complete(target, options))
    except ClientError as exc:
        errors.print(f"[red]error:[/] {visible_markup(str(exc))}", soft_wrap=True)
        return EXIT_ERROR
    for note in completion.notes:
        errors.print(f"[yellow]note:[/] {visible_markup(note)}", soft_wrap=True)
    if completion.errors and not completion.text:
        for error in completion.errors:
            errors.print(f"[red]error:[/] {visible_markup(error)}", soft_wrap=True)
        return EXIT_ERROR
    if completion.text:
        sys.stdout.write(printable(completion.text) + "\n")
    return EXIT_OK
