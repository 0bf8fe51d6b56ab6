"""Property tests of the byte layer: decoding, re-encoding and line endings.

For random texts (mixed LF/CRLF/CR endings, astral characters) and random changes:
- encoding a change keeps every byte outside the changed span, in UTF-8, UTF-8 with BOM and
  legacy encodings, and decodes back to the intended text;
- a replacement written with the model's own line endings lands with the file's: lines that
  replace lines keep their endings, new lines get the dominant one, untouched lines are as they
  were;
- ``edit_file`` through the tool (and the server's disk writer) changes only the intended
  bytes.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cadenza.messages import ToolCall
from cadenza.textio import (
    PLAIN_UTF8,
    TextFormat,
    UnencodableError,
    changed_span,
    decode_bytes,
    encode_change,
    encode_text,
)
from cadenza.tools.base import ToolContext
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.registry import default_tools
from cadenza.tools.textfile import carry_line_endings, dominant_line_ending, split_ending
from tests.doubles import MemoryEditor

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])
WORDS = st.sampled_from(["x = 1", "def f():", "    return", "é", "你好", "😀", "𝄞", "", " "])
LATIN_WORDS = st.sampled_from(["x = 1", "café", "naïve", "", " ", "ÿ"])


@st.composite
def lines(draw: st.DrawFn, words: st.SearchStrategy[str] = WORDS) -> list[tuple[str, str]]:
    """1-12 lines as (content, ending); the last may have no ending.

    Canonical, as LSP splits them: a ``\r`` ending followed by an empty ``\n`` line is one
    CRLF.
    """
    body = draw(st.lists(st.tuples(words, ENDINGS), min_size=1, max_size=12))
    if draw(st.booleans()):
        body[-1] = (body[-1][0], "")
    pieces = split_ending(joined(body))
    return pieces[:-1] if len(pieces) > 1 and pieces[-1] == ("", "") else pieces


def joined(pieces: list[tuple[str, str]]) -> str:
    return "".join(c + e for c, e in pieces)


@PROPERTY
@given(lines(), st.data(), st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))
def test_encode_change_keeps_every_byte_outside_the_change(
    pieces: list[tuple[str, str]], data: st.DataObject, encoding: str
) -> None:
    old = joined(pieces)
    fmt = TextFormat(encoding=encoding)
    old_data = encode_text(old, fmt)
    start = data.draw(st.integers(0, len(old)))
    end = data.draw(st.integers(start, len(old)))
    new = old[:start] + data.draw(WORDS) + old[end:]
    new_data = encode_change(old_data, old, new, fmt)
    assert new_data.decode(encoding) == new
    prefix, old_end, _ = changed_span(old, new)
    head = len(encode_text(old[:prefix], fmt)) if prefix else 0
    tail = len(old_data) - len(encode_text(old[:old_end], fmt))
    assert new_data[:head] == old_data[:head]
    assert new_data[len(new_data) - tail :] == old_data[len(old_data) - tail :]


@PROPERTY
@given(lines(LATIN_WORDS), st.data(), st.sampled_from(["cp1252", "latin-1", "gbk", "shift_jis"]))
def test_legacy_encodings_round_trip_and_refuse_what_they_cannot_hold(
    pieces: list[tuple[str, str]], data: st.DataObject, encoding: str
) -> None:
    old = joined(pieces)
    fmt = TextFormat(encoding=encoding)
    try:
        old_data = encode_text(old, fmt)
    except UnencodableError:
        assume(False)
        return
    index = data.draw(st.integers(0, len(old)))
    inserted = data.draw(st.sampled_from(["ok", "ü", "你", "😀"]))
    new = old[:index] + inserted + old[index:]
    try:
        new_data = encode_change(old_data, old, new, fmt)
    except UnencodableError:
        try:
            inserted.encode(encoding)
        except UnicodeEncodeError:
            return  # refused: the encoding cannot hold the new text
        raise
    assert new_data.decode(encoding) == new
    assert new_data.startswith(old[:index].encode(encoding))
    assert new_data.endswith(old[index:].encode(encoding))


@PROPERTY
@given(lines())
def test_utf8_and_bom_decode_exactly(pieces: list[tuple[str, str]]) -> None:
    text = joined(pieces)
    assert decode_bytes(text.encode()).text == text
    assert decode_bytes(text.encode()).format == PLAIN_UTF8
    with_bom = decode_bytes(b"\xef\xbb\xbf" + text.encode())
    assert (with_bom.text, with_bom.format.bom) == (text, True)


@PROPERTY
@given(lines(), st.data())
def test_replaced_lines_keep_their_endings_and_new_lines_get_the_dominant_one(
    pieces: list[tuple[str, str]], data: st.DataObject
) -> None:
    old = joined(pieces)
    dominant = dominant_line_ending(old)
    first = data.draw(st.integers(0, len(pieces) - 1))
    last = data.draw(st.integers(first, len(pieces) - 1))
    region = pieces[first : last + 1]
    # The model rewrites each line of the region (with LF), then adds a line after it.
    typed = [(content + "!", "\n") for content, _ in region]
    typed[-1] = (typed[-1][0], "\n" if region[-1][1] else "")
    typed.append(("added", "\n" if region[-1][1] else ""))
    typed_text = "".join(c + e for c, e in typed[:-1])
    if typed[-2][1] == "":
        typed_text += "\n"
    typed_text += typed[-1][0] + typed[-1][1]

    result = carry_line_endings(joined(region), typed_text, dominant)

    got = split_ending(result)
    if got[-1] == ("", ""):
        got = got[:-1]
    for (content, ending), (old_content, old_ending) in zip(got, region, strict=False):
        assert content == old_content + "!"
        assert ending == (old_ending or dominant if ending else "")
    assert got[len(region)][0] == "added"


def _edit(root: Path, editor: MemoryEditor, **args: object) -> str:
    call = ToolCall(id="1", name="edit_file", arguments=json.dumps(args))
    prepared = prepare(call, default_tools())
    assert isinstance(prepared, PreparedCall)
    result = asyncio.run(run(prepared, ToolContext(root=root, host=editor)))
    assert not result.is_error, result.content
    return result.content


@PROPERTY
@given(lines(), st.data(), st.sampled_from(["utf-8", "utf-8-sig"]))
def test_edit_file_changes_only_the_line_it_targets(
    pieces: list[tuple[str, str]], data: st.DataObject, encoding: str
) -> None:
    target = data.draw(st.integers(0, len(pieces) - 1))
    pieces = [(f"<{n}>{content}", ending) for n, (content, ending) in enumerate(pieces)]
    old = joined(pieces)
    original = old.encode(encoding)
    content = pieces[target][0]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "f.txt").write_bytes(original)
        _edit(root, MemoryEditor(), path="f.txt", old_string=content, new_string=content + " 😀")
        after = (root / "f.txt").read_bytes()
    expected = joined(
        [(c + " 😀", e) if n == target else (c, e) for n, (c, e) in enumerate(pieces)]
    )
    assert after == expected.encode(encoding)
