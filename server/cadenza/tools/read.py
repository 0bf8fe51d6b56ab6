"""Read-only workspace tools: ``read_file``, ``list_files``, ``search``.

Every output is bounded (characters, lines, entries) with a note saying how to read further, so
one huge file cannot overflow the context (field case F12).
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import ClassVar

from pydantic import Field
from typing_extensions import override

from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from cadenza.tools.documents import current_document
from cadenza.tools.freshness import ReadStamp, file_state, tree_state
from cadenza.tools.paths import relative_name, resolve_in_workspace
from cadenza.tools.textfile import LINE_BREAK

MAX_READ_CHARS = 20_000
MAX_LINE_CHARS = 2_000
MAX_LIST_ENTRIES = 500
MAX_SEARCH_MATCHES = 100
MAX_SEARCH_FILE_BYTES = 2_000_000
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".cadenza",
    }
)


class ReadFileArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="File path relative to the workspace root.")
    offset: int = Field(default=1, ge=1, description="First line to read (1-based).")
    limit: int = Field(default=400, ge=1, le=5000, description="Maximum number of lines.")


class ReadFile(Tool[ReadFileArgs]):
    """Read a text file (the editor's unsaved buffer when it is open)."""

    name = "read_file"
    description = (
        "Read a text file of the workspace. Returns the lines from `offset` (1-based), at most "
        "`limit` lines; long output is truncated with a note saying how to read on."
    )
    args_model = ReadFileArgs
    kind: ClassVar[ToolKind] = "read"
    read_only = True

    @override
    def title(self, args: ReadFileArgs) -> str:
        return f"reading {args.path}"

    @override
    def stamp(self, args: ReadFileArgs, ctx: ToolContext) -> ReadStamp:
        return ReadStamp.take(lambda: _path_state(ctx, args.path, contents=None))

    @override
    async def invoke(self, args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
        return await self.read(args, ctx, self.stamp(args, ctx))

    async def read(self, args: ReadFileArgs, ctx: ToolContext, stamp: ReadStamp) -> ToolResult:
        """Read with ``stamp``, this call's ``stamp`` taken before (``StampedRead``)."""
        path = resolve_in_workspace(ctx.root, args.path)
        text = current_document(ctx.host, path).text
        name = relative_name(ctx.root, path)
        return ToolResult(
            content=render_lines(
                name, text, offset=args.offset, limit=args.limit, numbered=ctx.line_numbers
            ),
            stamp=stamp,
        )


def _path_state(ctx: ToolContext, name: str, *, contents: bool | None) -> Hashable:
    """The state of what a read tool reads at ``name``: a file, or the tree of a folder.

    Args:
        ctx: The tool's context.
        name: The tool's ``path`` argument.
        contents: None: ``name`` is a file (``read_file``); False: a folder whose names are
            read (``list_files``); True: a file or a folder whose texts are read (``search``).
    """
    try:
        path = resolve_in_workspace(ctx.root, name)
    except ToolError:
        return ("unresolved",)
    if contents is None or (contents and path.is_file()):
        return file_state(ctx.host, path)
    return tree_state(ctx.host, path, skip=SKIP_DIRS, contents=contents)


def line_count(text: str) -> int:
    """The number of lines of ``text`` by LSP's rules, as ``len(lines_with_ends(text))``.

    Counted with ``str.count`` (C speed, no list): ``read_file`` of 400 lines of a 10 MB file
    split it whole into lines (~0.3 s) only to count them.
    """
    breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
    return breaks + (1 if text and text[-1] not in "\r\n" else 0)


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` with their breaks, lazily (``lines_with_ends``, one at a time)."""
    start = 0
    for match in LINE_BREAK.finditer(text):
        yield text[start : match.end()]
        start = match.end()
    if start < len(text):
        yield text[start:]


def render_lines(
    name: str, text: str, *, offset: int = 1, limit: int = 400, numbered: bool = False
) -> str:
    """A file's text as ``read_file`` shows it: a header, then lines ``offset``.. (1-based).

    At most ``limit`` lines and ``MAX_READ_CHARS`` characters; lines over ``MAX_LINE_CHARS``
    are cut; ``numbered`` prefixes each line with ``N| ``.

    Raises:
        ToolError: ``offset`` is past the last line.
    """
    total = line_count(text)
    if total and offset > total:
        raise ToolError(f"offset {offset} is past the end ({total} lines)")
    start = offset - 1
    out: list[str] = []
    used = 0
    end = start
    for line in itertools.islice(_lines(text), start, start + limit):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"… [line cut at {MAX_LINE_CHARS} characters]\n"
        if numbered:
            line = f"{end + 1}| {line}"
        if used + len(line) > MAX_READ_CHARS and out:
            break
        out.append(line)
        used += len(line)
        end += 1
    header = f"{name} (lines {start + 1}-{end} of {total})" if total else f"{name} (empty)"
    note = ""
    if end < total:
        note = f"\n[truncated: {total - end} more lines; call read_file with offset={end + 1}]"
    return f"{header}\n{''.join(out)}{note}"


class ListFilesArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(default=".", description="Folder relative to the workspace root.")
    glob: str | None = Field(default=None, description="Optional file name pattern, e.g. *.py")


def walk_files(root: Path, folder: Path) -> Iterator[Path]:
    """Files under ``folder``, sorted, ``SKIP_DIRS`` left out; symlinks out of the workspace too.

    Shared by ``list_files``, ``search`` and the engine's workspace-wide checks, so all of
    them look at the same files.
    """
    real_root = root.resolve()
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for filename in sorted(filenames):
            path = Path(dirpath) / filename
            if path.resolve().is_relative_to(real_root):
                yield path


def _glob_matches(glob: str, name: str, rel: str) -> bool:
    """``glob`` against a file's name or relative path; ``**/`` also matches the top folder."""
    patterns = {glob, glob.removeprefix("**/")}
    return any(fnmatch.fnmatch(name, g) or fnmatch.fnmatch(rel, g) for g in patterns)


class ListFiles(Tool[ListFilesArgs]):
    """List the files under a folder, recursively."""

    name = "list_files"
    description = "List files under a folder of the workspace (recursive), optionally by glob."
    args_model = ListFilesArgs
    kind: ClassVar[ToolKind] = "search"
    read_only = True

    @override
    def title(self, args: ListFilesArgs) -> str:
        return f"listing {args.path}"

    @override
    def stamp(self, args: ListFilesArgs, ctx: ToolContext) -> ReadStamp:
        return ReadStamp.take(lambda: _path_state(ctx, args.path, contents=False))

    @override
    async def invoke(self, args: ListFilesArgs, ctx: ToolContext) -> ToolResult:
        return await self.read(args, ctx, self.stamp(args, ctx))

    async def read(self, args: ListFilesArgs, ctx: ToolContext, stamp: ReadStamp) -> ToolResult:
        """List with ``stamp``, this call's ``stamp`` taken before (``StampedRead``)."""
        folder = resolve_in_workspace(ctx.root, args.path)
        if not folder.is_dir():
            raise ToolError(f"{args.path} is not a folder")
        names: list[str] = []
        more = 0
        for path in walk_files(ctx.root, folder):
            rel = relative_name(ctx.root, path)
            if args.glob and not _glob_matches(args.glob, path.name, rel):
                continue
            if len(names) < MAX_LIST_ENTRIES:
                names.append(rel)
            else:
                more += 1
        if not names:
            return ToolResult(content="no files found", stamp=stamp)
        note = f"\n[{more} more files not shown; narrow with path or glob]" if more else ""
        return ToolResult(content="\n".join(names) + note, stamp=stamp)


class SearchArgs(ToolArgs):
    """Arguments of the tool."""

    pattern: str = Field(description="Python regular expression to search for.")
    path: str = Field(default=".", description="File or folder to search, relative to the root.")


class Search(Tool[SearchArgs]):
    """Search workspace files with a regular expression."""

    name = "search"
    description = (
        "Search text files for a pattern (a regular expression; lines that contain the pattern "
        "as plain text match too); returns the matching lines by file."
    )
    args_model = SearchArgs
    kind: ClassVar[ToolKind] = "search"
    read_only = True

    @override
    def title(self, args: SearchArgs) -> str:
        return f"searching {args.pattern!r}"

    @override
    def stamp(self, args: SearchArgs, ctx: ToolContext) -> ReadStamp:
        return ReadStamp.take(lambda: _path_state(ctx, args.path, contents=True))

    @override
    async def invoke(self, args: SearchArgs, ctx: ToolContext) -> ToolResult:
        return await self.read(args, ctx, self.stamp(args, ctx))

    async def read(self, args: SearchArgs, ctx: ToolContext, stamp: ReadStamp) -> ToolResult:
        """Search with ``stamp``, this call's ``stamp`` taken before (``StampedRead``)."""
        # Models often pass code as the pattern (``len(x) - 1``, ``a[0]``): a line that holds
        # the pattern literally matches too, and a pattern that is no valid regex is literal.
        try:
            regex: re.Pattern[str] | None = re.compile(args.pattern)
        except re.error:
            regex = None
        target = resolve_in_workspace(ctx.root, args.path)
        files = [target] if target.is_file() else list(walk_files(ctx.root, target))
        by_file: dict[str, list[str]] = {}
        shown = total = 0
        for path in files:
            for lineno, line in _searchable_lines(ctx, path):
                if args.pattern not in line and not (regex and regex.search(line)):
                    continue
                total += 1
                if shown < MAX_SEARCH_MATCHES:
                    shown += 1
                    lines = by_file.setdefault(relative_name(ctx.root, path), [])
                    lines.append(f"  {lineno}: {line[:MAX_LINE_CHARS]}")
        if not total:
            return ToolResult(content="no matches", stamp=stamp)
        # Grouped by file, with the file count first: the list of files to visit stands out.
        out = [f"{total} matches in {len(by_file)} files: {', '.join(by_file)}"]
        for name, lines in by_file.items():
            out.append(name)
            out.extend(lines)
        if total > shown:
            out.append(f"[{total - shown} more matches not shown; narrow the pattern or path]")
        return ToolResult(content="\n".join(out), stamp=stamp)


def _searchable_lines(ctx: ToolContext, path: Path) -> Iterator[tuple[int, str]]:
    """Lines of a text file (buffer first); binary, huge or undecodable files yield nothing."""
    snapshot = ctx.host.open_document(path)
    if snapshot is not None:
        text = snapshot.text
    else:
        try:
            if path.stat().st_size > MAX_SEARCH_FILE_BYTES:
                return
            data = path.read_bytes()
        except OSError:
            return
        if b"\x00" in data:
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return
    yield from enumerate(text.splitlines(), start=1)
