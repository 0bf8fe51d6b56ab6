"""Priming: the files a task names, and the editor's open document, in the first message.

A loop variant (``LoopSettings.prime``): small models often skip the read or repeat it; with
the text already in the conversation, as ``read_file`` would show it, the first call can be
the edit. Which files: the open document the client sent, then workspace files whose relative
path or file name appears in the task as a whole word (a lookup in the workspace listing, not
a reading of the task's meaning); under the text edit format, whose model cannot edit a file
it was not shown, also the workspace modules those files import (a test file's subject: "the
tests in tests/test_prices.py fail" is about ``prices.py``) and the files that use a name of
code the task holds (``calc_total``).
"""

from __future__ import annotations

import ast
import posixpath
import re
from pathlib import Path, PurePosixPath

from cadenza.engine.overview import workspace_files
from cadenza.messages import UserMessage
from cadenza.secrets import redact
from cadenza.tools.base import ToolError, text_digest
from cadenza.tools.documents import current_document
from cadenza.tools.host import ToolHost
from cadenza.tools.paths import relative_name, resolve_in_workspace
from cadenza.tools.read import READ_LINES, render_read
from cadenza.workspace_files import WorkspaceFileError, read_workspace_file

MAX_PRIMED_FILES = 4
MAX_SCANNED_FILES = 20_000
"""Workspace files looked at for names (the overview shows 40; a named file may be any)."""
MAX_PRIMED_CHARS = 24_000
"""Characters of file text in the priming message, all files together."""

INTRO = "The files this task is about, as they are now (you do not need to read them first):"


MAX_SCANNED_BYTES = 2_000_000
"""Larger files are neither primed nor scanned (the model can still read_file them)."""
_PATHLIKE = re.compile(r"[\w./-]+")
_CODE_NAME = re.compile(r"(?<![\w./-])[A-Za-z_][A-Za-z0-9_]*(?![\w/-]|\.\w)")
_CAMEL = re.compile(r"[a-z][A-Z]")
_QUOTED = re.compile(r"`([A-Za-z_][A-Za-z0-9_.]*)`")
MAX_SYMBOL_SCAN_FILES = 2_000
MAX_SYMBOL_SCAN_BYTES = 20_000_000
"""Bounds of the search for files that use a name the task holds (``files_using``)."""


def mentions(text: str, word: str) -> bool:
    """Whether ``text`` holds ``word`` as a whole word (a sentence's full stop may follow)."""
    return re.search(rf"(?<![\w./-]){re.escape(word)}(?![\w/-]|\.\w)", text) is not None


def named_files(task: str, names: list[str]) -> list[str]:
    """The workspace paths (``names``, relative) that ``task`` names, in task order.

    A path matches when the task holds it as a whole word (``util.py`` matches "fix util.py."
    but not "myutil.py" or "util.py.bak"), or holds its file name and no other workspace file
    has that name (a bare ``__init__.py`` names none of several).
    """
    by_base: dict[str, list[str]] = {}
    for name in names:
        by_base.setdefault(name.rsplit("/", 1)[-1], []).append(name)
    known = set(names)
    found: list[str] = []
    # One pass over the task's path-like words, looked up in sets: a regex per workspace
    # file took seconds on 20,000 files.
    for match in _PATHLIKE.finditer(task):
        word = match.group().rstrip(".")
        if word in known:
            hit = word
        elif len(by_base.get(word, ())) == 1:
            hit = by_base[word][0]
        else:
            continue
        if hit not in found:
            found.append(hit)
    return found


def code_names(task: str) -> list[str]:
    """The names of code the task holds: ``calc_total``, ``parseArgs``, `` `Item` ``.

    A word is a code name when it could not be plain English: it holds an underscore or a
    capital after a lower-case letter, or it is quoted in backticks.
    """
    names = [w for w in _CODE_NAME.findall(task) if "_" in w.strip("_") or _CAMEL.search(w)]
    names += _QUOTED.findall(task)
    return list(dict.fromkeys(n for n in names if len(n) >= 3))


def files_using(root: Path, names: list[str], files: list[str]) -> list[str]:
    """The ``files`` (relative, in order) whose text uses one of ``names`` as a whole word.

    Bounded: at most ``MAX_PRIMED_FILES`` found, ``MAX_SYMBOL_SCAN_FILES`` files and
    ``MAX_SYMBOL_SCAN_BYTES`` read; larger, unreadable and non-regular files are skipped.
    """
    if not names:
        return []
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in names) + rb")\b")
    found: list[str] = []
    read = 0
    for name in files[:MAX_SYMBOL_SCAN_FILES]:
        data = _scanned(root, name)
        if data is None:
            continue
        read += len(data)
        if pattern.search(data):
            found.append(name)
        if len(found) >= MAX_PRIMED_FILES or read > MAX_SYMBOL_SCAN_BYTES:
            break
    return found


_JS_IMPORT = re.compile(
    r"""(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(?\s*)['"](\.{1,2}/[^'"]+)['"]"""
)
_JS_EXTENSIONS = ("", ".js", ".mjs", ".cjs", ".ts", ".jsx", ".tsx", "/index.js", "/index.ts")


def imported_files(root: Path, names: list[str], known: set[str]) -> list[str]:
    """The workspace files (of ``known``) that the files ``names`` import, in order.

    Python's ``import a.b`` / ``from a.b import c`` / ``from . import c`` (read with ``ast``,
    looked up beside the importing file and from the root) and JavaScript's relative
    ``import``/``require`` specifiers. A file that does not parse, or is too large, gives none.
    """
    found: list[str] = []
    for name in names:
        data = _scanned(root, name)
        if data is None:
            continue
        text = data.decode("utf-8", errors="replace")
        folder = PurePosixPath(name).parent
        if name.endswith(".py"):
            candidates = _python_imports(text, folder)
        else:
            candidates = [
                posixpath.normpath(str(folder / spec)) + ext
                for spec in _JS_IMPORT.findall(text)
                for ext in _JS_EXTENSIONS
            ]
        for candidate in candidates:
            if candidate in known and candidate not in found and candidate not in names:
                found.append(candidate)
    return found


def _scanned(root: Path, name: str) -> bytes | None:
    """A workspace file's bytes for a scan, read under the workspace path rule.

    None when it is absent, larger than ``MAX_SCANNED_BYTES``, not a regular file, unreadable,
    or reached through a link that leads out of the workspace.
    """
    try:
        return read_workspace_file(root, name, max_bytes=MAX_SCANNED_BYTES)
    except WorkspaceFileError:
        return None


def _python_imports(text: str, folder: PurePosixPath) -> list[str]:
    """Where the modules ``text`` imports could be, relative to the root (most likely first)."""
    try:
        tree = ast.parse(text)
    # A deeply nested expression overflows the parser (MemoryError) or the building of its
    # tree (RecursionError): the file is skipped like one that does not parse.
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return import_places(tree, folder)


def import_places(tree: ast.Module, folder: PurePosixPath) -> list[str]:
    """Where the modules a file in ``folder`` imports could be (``_python_imports``)."""
    modules: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules += [(0, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            modules += [(node.level, base)] if base else []
            modules += [(node.level, f"{base}.{a.name}".strip(".")) for a in node.names]
    places: list[str] = []
    for level, module in modules:
        relative = module.replace(".", "/")
        if level == 0:  # absolute: beside the importing file (a flat test folder), or the root
            starts = [folder, PurePosixPath(".")]
        elif level - 1 <= len(folder.parts):
            starts = [PurePosixPath(*folder.parts[: len(folder.parts) - (level - 1)])]
        else:
            continue  # above the root
        for start in starts:
            stem = posixpath.normpath(str(start / relative))
            places += [f"{stem}.py", f"{stem}/__init__.py"]
    return places


def task_files(
    root: Path, task: str, open_document: Path | None = None, *, by_code_name: bool = False
) -> list[str]:
    """The workspace files a task is about: the focused document, then the files it names.

    Args:
        root: The workspace root.
        task: The task text.
        open_document: The editor's focused file, if the client sent one; ignored outside
            the workspace.
        by_code_name: Also the files that use a name of code the task holds
            (``code_names``): "rename calc_total" is about the files that use it.
    """
    files, _ = workspace_files(root, limit=MAX_SCANNED_FILES)
    paths = named_files(task, files)
    if by_code_name:
        paths += imported_files(root, paths, set(files))
        paths += [f for f in files_using(root, code_names(task), files) if f not in paths]
    if open_document is not None:
        try:
            focus = relative_name(root, resolve_in_workspace(root, str(open_document)))
        except ToolError:
            focus = None
        if focus is not None:
            paths = [focus, *(p for p in paths if p != focus)]
    return paths


def priming_message(
    root: Path,
    paths: list[str],
    host: ToolHost,
    *,
    numbered: bool = False,
    fenced: bool = False,
    shown: dict[Path, str] | None = None,
) -> UserMessage | None:
    """The user message (tag ``files``) with the files to prime, or None when there are none.

    Args:
        root: The workspace root.
        paths: Workspace-relative files (``task_files``), the first ``MAX_PRIMED_FILES``.
        host: The editor (unsaved buffers are what the model sees).
        numbered: Number the lines (the line-range edit style).
        fenced: Each file in a fenced block after its path (the text edit format).
        shown: Gets the files whose whole text the message shows, with the digest of that
            text (``ToolContext.shown``).
    """
    blocks: list[str] = []
    used = 0
    for name in paths[:MAX_PRIMED_FILES]:
        try:
            path = resolve_in_workspace(root, name)
            if not path.is_file() or path.stat().st_size > MAX_SCANNED_BYTES:
                continue  # a FIFO would block; a huge file would crowd out the rest
            text = current_document(host, path).text
            seen = redact(text)  # before lines are cut
            block, whole = render_read(name, seen, 1, READ_LINES, numbered=numbered, fenced=fenced)
            whole = whole and seen == text  # a redacted secret is not the file's text
        except (ToolError, OSError, ValueError):
            continue  # unreadable or binary: the model can still read_file it and see why
        if used + len(block) > MAX_PRIMED_CHARS:
            continue  # a smaller file later in the list may still fit
        blocks.append(block)
        used += len(block)
        if whole and shown is not None:
            shown[path] = text_digest(text)
    if not blocks:
        return None
    return UserMessage(tag="files", content="\n\n".join([INTRO, *blocks]))
