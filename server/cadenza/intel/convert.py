"""Between a language server's answers (lsprotocol) and the ``CodeIntel`` port's values.

The port speaks 0-based lines and code-point columns; the server speaks its negotiated
``positionEncoding`` (``utf-16`` unless it chose ``utf-32``). An answer that does not fit the
text it was computed on (a range past the end of a line or file, a URI that is not a file) is
nonsense: ``IntelError``, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types

from cadenza.tools.intel import IntelDiagnostic, IntelError, IntelLocation, Severity
from cadenza.tools.textfile import LINE_BREAK

SEVERITIES: dict[int, Severity] = {1: "error", 2: "warning", 3: "information", 4: "hint"}

TextOf = Callable[[Path], str | None]
"""The text a server was given (or would read) for a file; None: unknown."""


def path_of(uri: str) -> Path:
    """The path of a ``file:`` URI.

    Raises:
        IntelError: Not a ``file:`` URI.
    """
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise IntelError(f"the language server answered with a location that is not a file: {uri}")
    return Path(unquote(parsed.path))


def uri_of(path: Path) -> str:
    """The ``file:`` URI of an absolute path."""
    return path.as_uri()


def to_code_points(line: str, column: int, encoding: str) -> int:
    """A server column on ``line`` as a code-point column (clamped to the line's end)."""
    if encoding == types.PositionEncodingKind.Utf32:
        return min(column, len(line))
    units = 0
    for index, char in enumerate(line):
        if units >= column:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def to_server(line: str, column: int, encoding: str) -> int:
    """A code-point column on ``line`` in the server's encoding."""
    if encoding == types.PositionEncodingKind.Utf32:
        return column
    return sum(2 if ord(c) > 0xFFFF else 1 for c in line[:column])


def _lines(text: str) -> list[str]:
    return LINE_BREAK.split(text)


def offset(text: str, pos: types.Position, encoding: str) -> int:
    """The index in ``text`` of a server position.

    Raises:
        IntelError: The position is past the end of the file.
    """
    lines = _lines(text)
    if pos.line > len(lines) or (pos.line == len(lines) and pos.character > 0):
        raise IntelError("the language server answered with a position past the end of a file")
    starts = [m.end() for m in LINE_BREAK.finditer(text)]
    start = (
        0 if pos.line == 0 else starts[pos.line - 1] if pos.line - 1 < len(starts) else len(text)
    )
    line = lines[pos.line] if pos.line < len(lines) else ""
    return start + to_code_points(line, pos.character, encoding)


def location(path: Path, rng: types.Range, text: str | None, encoding: str) -> IntelLocation:
    """A port location; columns converted when the file's text is known."""
    lines = _lines(text) if text is not None else []

    def column(pos: types.Position) -> int:
        if pos.line < len(lines):
            return to_code_points(lines[pos.line], pos.character, encoding)
        return pos.character

    return IntelLocation(
        path=path,
        line=rng.start.line,
        character=column(rng.start),
        end_line=rng.end.line,
        end_character=column(rng.end),
    )


def locations(answer: object, text_of: TextOf, encoding: str) -> list[IntelLocation]:
    """A ``Location | Location[] | LocationLink[] | None`` answer as port locations.

    Raises:
        IntelError: The answer is none of these.
    """
    if answer is None:
        return []
    items = answer if isinstance(answer, Sequence) else [answer]
    found: list[IntelLocation] = []
    for item in items:
        if isinstance(item, types.Location):
            uri, rng = item.uri, item.range
        elif isinstance(item, types.LocationLink):
            uri, rng = item.target_uri, item.target_selection_range
        else:
            raise IntelError("the language server answered with something that is not a location")
        path = path_of(uri)
        found.append(location(path, rng, text_of(path), encoding))
    return found


def diagnostic(
    path: Path, diag: types.Diagnostic, text: str | None, encoding: str
) -> IntelDiagnostic:
    """A port diagnostic (a missing severity counts as an error, as LSP clients treat it)."""
    start = location(path, diag.range, text, encoding)
    code = None if diag.code is None else str(diag.code)
    return IntelDiagnostic(
        path=path,
        line=start.line,
        character=start.character,
        severity=SEVERITIES.get(int(diag.severity or 1), "error"),
        message=diag.message,
        source=diag.source,
        code=code,
    )


def apply_text_edits(text: str, edits: Sequence[types.TextEdit], encoding: str) -> str:
    """``text`` with the server's ``edits`` applied (LSP: all ranges refer to the original).

    Raises:
        IntelError: A range is past the end, or two edits overlap.
    """
    spans = sorted(
        (
            (offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text)
            for e in edits
        ),
        key=lambda span: (span[0], span[1]),
    )
    out: list[str] = []
    last = 0
    for start, end, new in spans:
        if start < last or end < start:
            raise IntelError("the language server answered with overlapping edits")
        out += [text[last:start], new]
        last = end
    return "".join(out) + text[last:]


def workspace_edit_texts(
    edit: types.WorkspaceEdit | None, text_of: TextOf, encoding: str
) -> dict[Path, str]:
    """Each file a ``WorkspaceEdit`` changes, as its whole new text.

    Raises:
        IntelError: It creates, renames or deletes files, or names a file whose text is
            unknown, or its edits do not fit.
    """
    if edit is None:
        return {}
    per_file: dict[Path, list[types.TextEdit]] = {}
    for uri, changes in (edit.changes or {}).items():
        per_file.setdefault(path_of(uri), []).extend(changes)
    for change in edit.document_changes or []:
        if not isinstance(change, types.TextDocumentEdit):
            raise IntelError("the rename would create, move or delete files; not supported")
        edits = [e for e in change.edits if isinstance(e, types.TextEdit)]
        per_file.setdefault(path_of(change.text_document.uri), []).extend(edits)
    texts: dict[Path, str] = {}
    for path, edits in per_file.items():
        text = text_of(path)
        if text is None:
            raise IntelError(f"the rename names {path.name}, which cannot be read")
        texts[path] = apply_text_edits(text, edits, encoding)
    return texts
