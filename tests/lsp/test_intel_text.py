"""Positions and rename edits between the editor's language servers and Cadenza's texts."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cadenza.lsp.intel_text import FileText, PositionError, apply_text_edits
from cadenza.lsp.intel_workspace_edit import rename_texts
from cadenza.tools.intel import IntelError

UTF8, UTF16, UTF32 = (
    PositionCodec(types.PositionEncodingKind(e)) for e in ("utf-8", "utf-16", "utf-32")
)
TEXT = "s = '😀é'; calc_total()\r\nx\rcalc_total\n"


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


@pytest.mark.parametrize(("codec", "units"), [(UTF8, 14), (UTF16, 11), (UTF32, 10)])
def test_columns_round_trip_in_each_encoding(codec: PositionCodec, units: int) -> None:
    text = FileText(TEXT, codec)
    column = TEXT.index("calc_total")
    assert text.to_client(0, column) == pos(0, units)
    assert text.from_client(pos(0, units), clamp=False) == (0, column)
    # Lines end at \r\n, \r and \n only.
    assert text.to_client(2, 0) == pos(2, 0)
    assert text.offset(pos(2, 0)) == TEXT.index("\rcalc") + 1


def test_a_position_inside_a_surrogate_pair_is_refused_for_edits_and_floored_for_locations() -> (
    None
):
    text = FileText(TEXT, UTF16)
    inside = pos(0, 6)  # between the two UTF-16 units of the emoji
    with pytest.raises(PositionError, match="inside a character"):
        text.from_client(inside, clamp=False)
    assert text.from_client(inside, clamp=True)[0] == 0


def test_past_the_end_is_clamped_for_locations_only() -> None:
    text = FileText("ab\ncd", UTF16)
    assert text.from_client(pos(0, 9), clamp=True) == (0, 2)
    assert text.from_client(pos(7, 0), clamp=True) == (1, 2)
    with pytest.raises(PositionError):
        text.offset(pos(0, 9))
    with pytest.raises(PositionError):
        text.to_client(0, 3)


def test_edits_apply_from_the_last_and_refuse_overlaps() -> None:
    text = FileText("one two three", UTF16)
    edits = [
        types.TextEdit(range=types.Range(pos(0, 0), pos(0, 3)), new_text="1"),
        types.TextEdit(range=types.Range(pos(0, 8), pos(0, 13)), new_text="3"),
    ]
    assert apply_text_edits(text, edits) == "1 two 3"
    overlapping = [*edits, types.TextEdit(range=types.Range(pos(0, 2), pos(0, 5)), new_text="x")]
    with pytest.raises(PositionError, match="overlap"):
        apply_text_edits(text, overlapping)


def _edit(uri: str, version: int | None, start: int, end: int, new: str) -> types.TextDocumentEdit:
    return types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=[types.TextEdit(range=types.Range(pos(0, start), pos(0, end)), new_text=new)],
    )


def _rename(edit: types.WorkspaceEdit, files: dict[str, tuple[str, int | None]]):  # type: ignore[no-untyped-def]
    return rename_texts(
        edit,
        inside=lambda uri: Path(uri[len("file://") :]) if uri.startswith("file:///ws/") else None,
        current=lambda path: files[str(path)],
        codec=UTF16,
    )


def test_a_rename_gives_whole_texts_with_their_versions() -> None:
    files = {"/ws/a.ts": ("let é = f();", 4), "/ws/b.ts": ("f();", None)}
    edit = types.WorkspaceEdit(
        document_changes=[
            _edit("file:///ws/a.ts", 4, 8, 9, "g"),
            _edit("file:///ws/b.ts", None, 0, 1, "g"),
        ]
    )
    rename = _rename(edit, files)
    assert rename.texts == {Path("/ws/a.ts"): "let é = g();", Path("/ws/b.ts"): "g();"}
    assert rename.versions == {Path("/ws/a.ts"): 4, Path("/ws/b.ts"): None}
    changes = types.WorkspaceEdit(
        changes={"file:///ws/b.ts": _edit("file:///ws/b.ts", None, 0, 1, "h").edits}
    )
    assert _rename(changes, files).texts == {Path("/ws/b.ts"): "h();"}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            types.WorkspaceEdit(document_changes=[_edit("file:///ws/a.ts", 3, 8, 9, "g")]),
            "another version",
        ),
        (
            types.WorkspaceEdit(document_changes=[_edit("file:///etc/x.ts", None, 0, 1, "g")]),
            "outside",
        ),
        (
            types.WorkspaceEdit(document_changes=[_edit("file:///ws/a.ts", 4, 8, 99, "g")]),
            "does not fit",
        ),
        (
            types.WorkspaceEdit(
                document_changes=[
                    types.RenameFile(old_uri="file:///ws/a.ts", new_uri="file:///ws/c.ts")
                ]
            ),
            "rename or delete files",
        ),
        (types.WorkspaceEdit(changes={}), "changes nothing"),
    ],
)
def test_unusable_renames_are_errors(edit: types.WorkspaceEdit, message: str) -> None:
    with pytest.raises(IntelError, match=message):
        _rename(edit, {"/ws/a.ts": ("let é = f();", 4)})
