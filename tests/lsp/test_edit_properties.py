"""Property tests of the edit engine: the produced TextEdits, applied by an independent
reference applier (``harness.apply_text_edits``), give exactly the intended text.

Texts mix LF, CRLF and lone CR line endings with astral characters (emoji, U+1D11E), other
multi-byte characters, and the line separators LSP does not count (U+2028, U+0085, VT, FF);
changes are random replacements, insertions and deletions at random places, in one or many
spots. Every position encoding is checked: UTF-16 (surrogate pairs), UTF-8 (bytes), UTF-32.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cadenza.lsp.editor import ChangeText, Create, Review, workspace_edit
from cadenza.lsp.edits import minimal_replacements, text_edits
from cadenza.textio import changed_span
from tests.lsp.harness import apply_text_edits, position_to_offset

ENCODINGS = ("utf-16", "utf-8", "utf-32")
PIECES = st.sampled_from(
    ["a", "b", "x = 1", " ", "é", "你", "😀", "𝄞", "\r\n", "\n", "\r", "\u2028", "\x85", "\x0c"]
)
TEXT = st.lists(PIECES, max_size=40).map("".join)
PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def edited(draw: st.DrawFn) -> tuple[str, str]:
    """A text and the text after 1-4 random splices (replace, insert or delete)."""
    old = draw(TEXT)
    new = old
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        start = draw(st.integers(min_value=0, max_value=len(new)))
        end = draw(st.integers(min_value=start, max_value=len(new)))
        new = new[:start] + draw(TEXT) + new[end:]
    return old, new


def _check(old: str, new: str, encoding: str) -> list[types.TextEdit]:
    edits = text_edits(old, new, PositionCodec(encoding))
    plain = [e for e in edits if isinstance(e, types.TextEdit)]
    assert apply_text_edits(old, plain, encoding) == new
    spans = [
        (
            position_to_offset(old, e.range.start, encoding),
            position_to_offset(old, e.range.end, encoding),
        )
        for e in plain
    ]
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end < start, "edits are ordered, apart and never overlap"
    return plain


@PROPERTY
@given(edited(), st.sampled_from(ENCODINGS))
def test_text_edits_rebuild_the_new_text(change: tuple[str, str], encoding: str) -> None:
    old, new = change
    _check(old, new, encoding)


@PROPERTY
@given(edited())
def test_every_encoding_gives_the_same_spans(change: tuple[str, str]) -> None:
    old, new = change
    spans = {
        encoding: [
            (
                position_to_offset(old, e.range.start, encoding),
                position_to_offset(old, e.range.end, encoding),
                e.new_text,
            )
            for e in _check(old, new, encoding)
        ]
        for encoding in ENCODINGS
    }
    assert spans["utf-16"] == spans["utf-8"] == spans["utf-32"]


@PROPERTY
@given(edited())
def test_replacements_are_minimal_at_both_ends(change: tuple[str, str]) -> None:
    old, new = change
    replacements = minimal_replacements(old, new)
    if old == new:
        assert replacements == []
        return
    # Lines outside the changed ones are never touched: every range lies between the start
    # of the line where the common prefix ends and the end of the line where the common
    # suffix begins.
    prefix, old_end, _ = changed_span(old, new)
    if 0 < prefix < len(old) and old[prefix - 1 : prefix + 1] == "\r\n":
        prefix -= 1  # a CRLF is kept whole
    first_line = max(old.rfind("\n", 0, prefix), old.rfind("\r", 0, prefix)) + 1
    tail = re.compile(r"\r\n|\r|\n").search(old, max(old_end - 1, 0))
    last_line = tail.end() if tail else len(old)
    assert replacements[0].start >= first_line
    assert replacements[-1].end <= max(last_line, old_end)
    if "\n" not in old and "\r" not in old:
        assert len(replacements) == 1


@PROPERTY
@given(TEXT, st.sampled_from(ENCODINGS))
def test_a_change_in_two_far_places_is_two_edits(middle: str, encoding: str) -> None:
    lines = [f"line {n}\r\n" for n in range(6)]
    old = "".join(lines) + middle + "".join(lines)
    new = "".join(["LINE 0\r\n", *lines[1:]]) + middle + "".join([*lines[:5], "LINE 5\r\n"])
    edits = _check(old, new, encoding)
    assert len(edits) == 2
    assert [e.new_text for e in edits] == ["LINE", "LINE"]


def test_f06_positions_count_code_units_of_the_negotiated_encoding() -> None:
    old = 's = "😀"; x = 1\n'
    new = 's = "😀"; y = 1\n'
    columns = {}
    for encoding in ENCODINGS:
        [edit] = text_edits(old, new, PositionCodec(encoding))
        assert edit.range.start.line == 0
        columns[encoding] = edit.range.start.character
        assert edit.range.end.character == edit.range.start.character + 1
    assert columns == {"utf-16": 10, "utf-8": 12, "utf-32": 9}


def test_review_annotates_every_operation() -> None:
    edit = workspace_edit(
        [
            ChangeText(uri="file:///w/a.py", version=3, old="x = 1\n", new="x = 2\n"),
            Create(uri="file:///w/b.py", text="b\n"),
        ],
        codec=PositionCodec("utf-16"),
        review=Review(label="edit_file a.py", description="Cadenza edit_file: …"),
    )
    assert edit.change_annotations == {
        "cadenza": types.ChangeAnnotation(
            label="edit_file a.py", needs_confirmation=True, description="Cadenza edit_file: …"
        )
    }
    change, create, fill = edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    assert all(
        isinstance(e, types.AnnotatedTextEdit) and e.annotation_id == "cadenza"
        for e in change.edits
    )
    assert isinstance(create, types.CreateFile) and create.annotation_id == "cadenza"
    assert isinstance(fill, types.TextDocumentEdit)
