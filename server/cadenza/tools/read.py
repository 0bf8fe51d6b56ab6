"""Read-only workspace tools: ``read_file``, ``list_files``, ``search``.

Every output is bounded (characters, lines, entries) with a note saying how to read further, so
one huge file cannot overflow the context. Every read is bounded too: only
regular files are read (``fileread.read_regular``), ``read_file`` up to ``MAX_TEXT_BYTES``,
``search`` the first ``MAX_SEARCH_FILE_BYTES`` of each file; the disk is read in worker threads,
so a slow read never holds up the server.
"""

from __future__ import annotations

import fnmatch
import itertools
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import ClassVar

from pydantic import Field
from typing_extensions import override

from cadenza.fileread import (
    FileReadError,
    in_worker,
    megabytes,
    read_regular,
    regular_stat,
    walk,
)
from cadenza.messages import fence_for
from cadenza.secrets import redact, redact_then_cut
from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from cadenza.tools.freshness import ReadStamp, file_state, tree_state
from cadenza.tools.fs import read_decoded
from cadenza.tools.paths import listed_name, relative_name, resolve_in_workspace
from cadenza.tools.pattern import LinePattern
from cadenza.tools.textfile import LINE_BREAK

MAX_READ_CHARS = 20_000
READ_LINES = 400
"""Lines ``read_file`` shows when the call does not say."""
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
    limit: int = Field(default=READ_LINES, ge=1, le=5000, description="Maximum number of lines.")


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
        return await self.read(args, ctx, await in_worker(self.stamp, args, ctx))

    async def read(self, args: ReadFileArgs, ctx: ToolContext, stamp: ReadStamp) -> ToolResult:
        """Read with ``stamp``, this call's ``stamp`` taken before (``StampedRead``).

        An open buffer is read on the loop; a file on disk is read and rendered in a worker
        thread (``fileread.in_worker``): only a regular file, at most ``MAX_TEXT_BYTES``.
        Secrets are redacted before lines are cut (``secrets``).
        """
        path = resolve_in_workspace(ctx.root, args.path)
        name = relative_name(ctx.root, path)

        def render(text: str) -> tuple[str, str | None]:
            """The result, and the text it shows when that is the whole file."""
            seen = redact(text)
            content, whole = render_read(
                name, seen, args.offset, args.limit, numbered=ctx.line_numbers, fenced=ctx.fenced
            )
            # A redacted secret is not the file's text.
            return content, text if whole and seen == text else None

        snapshot = ctx.host.open_document(path)
        if snapshot is not None:
            content, whole = render(snapshot.text)
        else:
            content, whole = await in_worker(lambda: render(read_decoded(path, name).text))
        if whole is not None:
            ctx.saw(path, whole)
        return ToolResult(content=content, stamp=stamp)


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
    name: str,
    text: str,
    *,
    offset: int = 1,
    limit: int = READ_LINES,
    numbered: bool = False,
    fenced: bool = False,
) -> str:
    """A file's text as ``read_file`` shows it: a header, then lines ``offset``.. (1-based).

    At most ``limit`` lines and ``MAX_READ_CHARS`` characters; lines over ``MAX_LINE_CHARS``
    are cut; ``numbered`` prefixes each line with ``N| ``. ``fenced``: the lines in a fenced
    block tagged with the file's language, and the header of a whole file only its path, so
    the text reads as a file block of the text edit format.

    Raises:
        ToolError: ``offset`` is past the last line.
    """
    return render_read(name, text, offset, limit, numbered=numbered, fenced=fenced)[0]


def render_read(
    name: str, text: str, offset: int, limit: int, *, numbered: bool, fenced: bool
) -> tuple[str, bool]:
    """``render_lines``'s text, and whether it shows the whole file (every line, none cut)."""
    total = line_count(text)
    if total and offset > total:
        raise ToolError(
            f"offset {offset} is past the end ({total} line{'' if total == 1 else 's'})"
        )
    start = offset - 1
    out: list[str] = []
    used = 0
    end = start
    cut = False
    for line in itertools.islice(_lines(text), start, start + limit):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"… [line cut at {MAX_LINE_CHARS} characters]\n"
            cut = True
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
    whole = start == 0 and end == total and not cut
    if not fenced or not total:
        return f"{header}\n{''.join(out)}{note}", whole
    if start == 0 and end == total:
        header = name
    body = "".join(out)
    fence = fence_for(body)
    ending = "" if body.endswith(("\n", "\r")) else "\n"
    return f"{header}\n{fence}{language_of(name)}\n{body}{ending}{fence}{note}", whole


LANGUAGES = {
    "py": "python",
    "js": "javascript",
    "mjs": "javascript",
    "ts": "typescript",
    "sh": "bash",
    "md": "markdown",
    "yml": "yaml",
    "rs": "rust",
    "rb": "ruby",
}
"""A fence's language tag by file extension, where the two differ."""


def language_of(name: str) -> str:
    """The fence tag for a file named ``name`` (its extension; "" for none)."""
    suffix = name.rsplit("/", 1)[-1].rpartition(".")[2] if "." in name else ""
    return LANGUAGES.get(suffix.lower(), suffix.lower())


class ListFilesArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(default=".", description="Folder relative to the workspace root.")
    glob: str | None = Field(default=None, description="Optional file name pattern, e.g. *.py")


def walk_files(root: Path, folder: Path) -> Iterator[Path]:
    """Files under ``folder``, sorted, ``SKIP_DIRS`` left out; symlinks out of the workspace too.

    Symbolic link loops are left out as well. Entries that are not regular files (a FIFO, a
    socket) are listed: whoever reads them refuses them (``fileread.read_regular``). Shared by
    ``list_files``, ``search`` and the engine's workspace-wide checks, so all of them look at
    the same files.
    """
    real_root = root.resolve()
    for dirpath, dirnames, filenames in walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for filename in sorted(filenames):
            path = Path(dirpath) / filename
            try:
                inside = path.resolve().is_relative_to(real_root)
            except (RuntimeError, OSError):  # a symbolic link loop (RuntimeError before 3.13)
                continue
            if inside:
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
        return await self.read(args, ctx, await in_worker(self.stamp, args, ctx))

    async def read(self, args: ListFilesArgs, ctx: ToolContext, stamp: ReadStamp) -> ToolResult:
        """List with ``stamp``, this call's ``stamp`` taken before (``StampedRead``).

        The walk runs in a worker thread (``fileread.in_worker``).
        """
        folder = resolve_in_workspace(ctx.root, args.path)
        if not folder.is_dir():
            raise ToolError(f"{args.path} is not a folder")
        content = await in_worker(_listing, ctx.root, folder, args.glob)
        return ToolResult(content=content, stamp=stamp)


def _listing(root: Path, folder: Path, glob: str | None) -> str:
    """``list_files``'s answer: the files under ``folder`` (blocking: a walk)."""
    names: list[str] = []
    more = 0
    for path in walk_files(root, folder):
        rel = relative_name(root, path)
        if glob and not _glob_matches(glob, path.name, rel):
            continue
        if len(names) < MAX_LIST_ENTRIES:
            names.append(listed_name(rel))
        else:
            more += 1
    if not names:
        return "no files found"
    note = f"\n[{more} more files not shown; narrow with path or glob]" if more else ""
    return "\n".join(names) + note


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
        return await self.read(args, ctx, await in_worker(self.stamp, args, ctx))

    async def read(self, args: SearchArgs, ctx: ToolContext, stamp: ReadStamp) -> ToolResult:
        """Search with ``stamp``, this call's ``stamp`` taken before (``StampedRead``).

        The files are listed, read and matched in worker threads (``fileread.in_worker``);
        only the editor's open buffers are looked up on the loop.
        """
        target = resolve_in_workspace(ctx.root, args.path)
        files = await in_worker(_search_targets, ctx.root, target)
        buffers: dict[Path, str] = {}
        for path in files:
            snapshot = ctx.host.open_document(path)
            if snapshot is not None:
                buffers[path] = snapshot.text
        content = await in_worker(_search, ctx.root, files, buffers, args.pattern)
        return ToolResult(content=content, stamp=stamp)


def _search_targets(root: Path, target: Path) -> list[Path]:
    """The files ``search`` looks at: the folder's (``walk_files``), or the one file named.

    Raises:
        ToolError: The one file named is missing or not a regular file.
    """
    if target.is_dir():
        return list(walk_files(root, target))
    try:
        regular_stat(target, relative_name(root, target))
    except FileReadError as exc:
        raise ToolError(str(exc)) from None
    return [target]


def _search(root: Path, files: list[Path], buffers: dict[Path, str], pattern: str) -> str:
    """``search``'s answer for ``pattern`` over ``files`` (``buffers``: the open ones' texts).

    Blocking (it reads the files not open): run it in a worker thread.
    """
    matcher = LinePattern(pattern)
    by_file: dict[str, list[str]] = {}
    partly: list[str] = []
    shown = total = 0
    for path in files:
        name = listed_name(relative_name(root, path))
        text, whole = (buffers[path], True) if path in buffers else _disk_text(path)
        if not whole:
            partly.append(name)
        for lineno, line in matcher.lines(text):
            total += 1
            if shown < MAX_SEARCH_MATCHES:
                shown += 1
                shown_line = redact_then_cut(line, MAX_LINE_CHARS, "")
                by_file.setdefault(name, []).append(f"  {lineno}: {shown_line}")
    out = _grouped(by_file, total, shown)
    if partly:
        limit = megabytes(MAX_SEARCH_FILE_BYTES)
        out.append(
            f"[searched only the first {limit} MB of {len(partly)} larger file(s): "
            f"{', '.join(partly[:5])}{' …' if len(partly) > 5 else ''}; read_file reads on]"
        )
    return "\n".join(out)


def _grouped(by_file: dict[str, list[str]], total: int, shown: int) -> list[str]:
    """The matches grouped by file, with the file count first (the files to visit stand out)."""
    if not total:
        return ["no matches"]
    out = [f"{total} matches in {len(by_file)} files: {', '.join(by_file)}"]
    for name, lines in by_file.items():
        out.append(name)
        out.extend(lines)
    if total > shown:
        out.append(f"[{total - shown} more matches not shown; narrow the pattern or path]")
    return out


def _disk_text(path: Path) -> tuple[str, bool]:
    """A file's text for ``search``, and whether it is whole.

    A file over ``MAX_SEARCH_FILE_BYTES`` is searched in its lines within that prefix; a file
    that is not regular (a FIFO), unreadable, binary (NUL bytes) or not UTF-8 gives ``""``
    (nothing to match), as binary files do for ``grep -I``.
    """
    try:
        data = read_regular(path, limit=MAX_SEARCH_FILE_BYTES + 1, prefix=True)
    except OSError:
        return "", True
    whole = len(data) <= MAX_SEARCH_FILE_BYTES
    if not whole:  # the last line is cut: drop it (and never split a UTF-8 sequence)
        data = data[: data.rfind(b"\n", 0, MAX_SEARCH_FILE_BYTES) + 1]
    if b"\x00" in data:
        return "", True
    try:
        return data.decode("utf-8"), whole
    except UnicodeDecodeError:
        return "", True
