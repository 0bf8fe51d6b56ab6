"""Which language intelligence answers a call, and asking it with a bound.

The editor's own language servers (``ToolHost.code_intel()``) come first: they know the
person's setup. For a file the editor has no language server for (it answers "not
available"), the language servers Cadenza starts itself answer (``ToolContext.intel``), per
call and per file (``tools.intel_chain``). Every request is bounded; a server that fails, hangs
or answers nonsense becomes a ``ToolError`` the model reads, and the session goes on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import anyio

from cadenza.fileread import walk
from cadenza.tools.base import ToolContext, ToolError
from cadenza.tools.documents import current_document, read_document
from cadenza.tools.intel import (
    CodeIntel,
    IntelError,
    IntelFeature,
    IntelLocation,
    IntelUnavailable,
)
from cadenza.tools.intel_chain import chain
from cadenza.tools.paths import relative_name
from cadenza.tools.read import SKIP_DIRS
from cadenza.tools.symbols import SymbolPosition, line_text, locate

INTEL_TIMEOUT_S = 30.0
"""Seconds one code-intelligence request may take (a cold server indexes first)."""

_INSTEAD = "use search and read_file instead"
"""What a model can do when code intelligence cannot answer."""

T = TypeVar("T")


def intel_of(ctx: ToolContext) -> CodeIntel | None:
    """The code intelligence a call may use: the editor's, falling back per file to Cadenza's."""
    return chain(ctx.root, ctx.host.code_intel(), ctx.intel)


def source_for(ctx: ToolContext, path: Path, feature: IntelFeature) -> CodeIntel:
    """The code intelligence to ask for ``feature`` of ``path``.

    Raises:
        ToolError: No source offers it (no language server for the file's language).
    """
    source = intel_of(ctx)
    if source is not None and feature in source.features(path):
        return source
    name = relative_name(ctx.root, path)
    raise ToolError(f"no language server is available for {name}; {_INSTEAD}")


async def ask(request: Callable[[], Awaitable[T]], what: str) -> T:
    """``request()`` within ``INTEL_TIMEOUT_S``; a failure is a ``ToolError`` naming ``what``."""
    try:
        with anyio.fail_after(INTEL_TIMEOUT_S):
            return await request()
    except TimeoutError:
        raise ToolError(
            f"the language server did not answer {what} within {INTEL_TIMEOUT_S:.0f} s; {_INSTEAD}"
        ) from None
    except IntelUnavailable as exc:
        raise ToolError(f"{exc}; {_INSTEAD}") from None
    except IntelError as exc:
        raise ToolError(f"the language server could not answer {what}: {exc}") from None


def line_reader(ctx: ToolContext) -> Callable[[Path, int], str | None]:
    """Reads a 0-based line of a workspace file as Cadenza sees it (None: unreadable)."""
    texts: dict[Path, str | None] = {}

    def line_of(path: Path, line: int) -> str | None:
        if path not in texts:
            try:
                texts[path] = current_document(ctx.host, path).text
            except ToolError:
                texts[path] = None
        text = texts[path]
        return None if text is None else line_text(text, line)

    return line_of


def _definition(
    source: CodeIntel, path: Path, line: int, column: int
) -> Callable[[], Awaitable[list[IntelLocation]]]:
    return lambda: source.definition(path, line, column)


async def symbol_at(
    ctx: ToolContext, source: CodeIntel, path: Path, line: int, symbol: str
) -> SymbolPosition:
    """Where ``symbol`` is on ``line`` (1-based) of ``path``, in the text Cadenza reads.

    A name written more than once on the line is ambiguous only when its places mean
    different things: when the source knows definitions, every place's definition is
    compared (``x = x + 1`` is one ``x``; ``f(f)`` with two different ``f`` is not).

    Raises:
        ToolError: The symbol is not on that line (the message names where it is), or is
            ambiguous there.
    """
    name = relative_name(ctx.root, path)
    text = (await read_document(ctx.host, path, name)).text
    pos = locate(text, line, symbol, name)
    if len(pos.columns) == 1 or "definition" not in source.features(path):
        return pos
    meanings: set[frozenset[tuple[Path, int, int]]] = set()
    for column in pos.columns:
        found = await ask(_definition(source, path, pos.line, column), "where it is defined")
        meanings.add(frozenset((loc.path, loc.line, loc.character) for loc in found))
    if len(meanings) > 1:
        raise ToolError(
            f"`{symbol}` occurs {len(pos.columns)} times on line {line} of {name} with "
            "different meanings; call again with a line where it occurs once (for example "
            "where it is defined)"
        )
    return pos


SCAN_FILES = 2_000
"""Workspace files looked at to decide whether any source serves the workspace."""


def serves_workspace(root: Path, candidates: list[CodeIntel]) -> bool:
    """Whether one of ``candidates`` offers anything for some file of the workspace.

    Looks at up to ``SCAN_FILES`` files (version-control, dependency and cache folders
    skipped): a Python server is no use in a Go workspace.
    """
    if not candidates:
        return False
    seen = 0
    for folder, dirs, files in walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
        for file in files:
            path = Path(folder) / file
            if any(source.features(path) for source in candidates):
                return True
            seen += 1
            if seen >= SCAN_FILES:
                return False
    return False
