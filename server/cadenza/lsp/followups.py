"""The text a prompt reaches the model as: its text and its context.

The editor may add context to a task (``cadenza.startSession``) or a follow-up prompt
(``cadenza.promptSession``), ``schema.commands.PromptContext``: the selection, files, symbols
and problems. Each becomes a text block after the prompt's text. Files are
read from the client's open buffers when open (unsaved changes count), else from disk; only
files inside the session's workspace are read, each bounded in size, and the whole context
is bounded too (a cut is said in the text, so the model knows to read the rest itself).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pygls.workspace import Workspace

from cadenza.host.commands import Expanded, expand
from cadenza.host.ports import relative_name
from cadenza.lsp.documents import OpenDocuments, buffer_path
from cadenza.schema.commands import (
    PromptContext,
    PromptProblem,
    PromptSelection,
    PromptSymbol,
)
from cadenza.secrets import redact, redact_then_cut
from cadenza.textio import decode_bytes
from cadenza.workspace_files import WorkspaceFileError, read_workspace_file

MAX_FILE_CHARS = 20_000
"""A file given as context is cut after this many characters."""
MAX_CONTEXT_CHARS = 60_000
"""The whole context is cut after this many characters."""
MAX_MENTION_BYTES = 4_000_000
"""A mentioned file larger than this on disk is not read (read_file takes it in parts)."""
SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def expanded_prompt(
    workspace: Workspace, root: Path, text: str, context: PromptContext | None
) -> Expanded:
    """``text`` with a leading ``/command`` expanded (``host.commands``), then its context."""
    expanded = expand(text, root)
    return dataclasses.replace(expanded, text=prompt_text(workspace, root, expanded.text, context))


def prompt_text(workspace: Workspace, root: Path, text: str, context: PromptContext | None) -> str:
    """The prompt's text, then its context's blocks (selection, files, problems), bounded."""
    if context is None:
        return text
    documents = OpenDocuments(workspace, root.resolve())
    blocks: list[str] = []
    if context.selection is not None:
        blocks.append(_selection(documents, context.selection))
    blocks.extend(_file(documents, uri) for uri in dict.fromkeys(context.files))
    blocks.extend(_symbol(documents, symbol) for symbol in context.symbols)
    if context.problems:
        blocks.append(_problems(documents, context.problems))
    if not blocks:
        return text
    added = redact("\n\n".join(blocks))
    if len(added) > MAX_CONTEXT_CHARS:
        added = added[:MAX_CONTEXT_CHARS] + "\n[the context was cut here: it is too long]"
    return f"{text}\n\nContext from the editor:\n\n{added}"


def _name(documents: OpenDocuments, uri: str) -> str:
    path = buffer_path(uri, documents.root)
    return relative_name(documents.root, path) if path is not None else uri


def _fenced(body: str) -> str:
    fence = "```"
    while fence in body:
        fence += "`"
    return f"{fence}\n{body}{'' if body.endswith(chr(10)) else chr(10)}{fence}"


def _selection(documents: OpenDocuments, selection: PromptSelection) -> str:
    where = _name(documents, selection.uri)
    if selection.range is not None:
        start, end = selection.range.start.line + 1, selection.range.end.line + 1
        where += f", line {start}" if start == end else f", lines {start}-{end}"
    return f"The selection in {where}:\n{_fenced(selection.text)}"


def _disk_text(root: Path, path: Path) -> str:
    """A mentioned file's text from disk, under the workspace path rule.

    Raises:
        WorkspaceFileError: A link out of the workspace, not a regular file, too large.
        ValueError: Not text.
    """
    data = read_workspace_file(root, relative_name(root, path), max_bytes=MAX_MENTION_BYTES)
    if data is None:
        raise WorkspaceFileError("no such file")
    return decode_bytes(data).text


def _file(documents: OpenDocuments, uri: str) -> str:
    path = buffer_path(uri, documents.root)
    if path is None or not path.is_relative_to(documents.root):
        return f"File {uri}: not read (not in the workspace)."
    name = relative_name(documents.root, path)
    document = documents.find(path)
    if document is not None:
        body, note = document.source, " (the editor's buffer)"
    else:
        try:
            body, note = _disk_text(documents.root, path), ""
        except (WorkspaceFileError, ValueError) as exc:
            return f"File {name}: not read ({exc})."
    body = redact(body)  # before the cut: a key running past it would no longer match
    if len(body) > MAX_FILE_CHARS:
        body = body[:MAX_FILE_CHARS]
        note += f" (its first {MAX_FILE_CHARS} characters; read_file for the rest)"
    return f"File {name}{note}:\n{_fenced(body)}"


def _symbol(documents: OpenDocuments, symbol: PromptSymbol) -> str:
    """The symbol's lines (its range, whole lines) from the buffer or the file, bounded."""
    path = buffer_path(symbol.uri, documents.root)
    start, end = symbol.range.start.line, symbol.range.end.line
    where = f"{_name(documents, symbol.uri)}, lines {start + 1}-{end + 1}"
    if path is None or not path.is_relative_to(documents.root):
        return f"Symbol {symbol.name} in {symbol.uri}: not read (not in the workspace)."
    document = documents.find(path)
    try:
        body = document.source if document is not None else _disk_text(documents.root, path)
    except (WorkspaceFileError, ValueError) as exc:
        return f"Symbol {symbol.name} in {where}: not read ({exc})."
    lines = body.splitlines(keepends=True)[start : end + 1]
    text = redact_then_cut("".join(lines), MAX_FILE_CHARS, "")
    return f"Symbol {symbol.name} in {where}:\n{_fenced(text)}"


def _problems(documents: OpenDocuments, problems: list[PromptProblem]) -> str:
    lines = ["Problems the editor reports:"]
    for problem in problems:
        where = _name(documents, problem.uri)
        if problem.range is not None:
            where += f":{problem.range.start.line + 1}"
        severity = SEVERITIES.get(problem.severity or 0, "problem")
        lines.append(f"- {where}: {severity}: {problem.message}")
    return "\n".join(lines)
