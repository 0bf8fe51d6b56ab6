"""The headless client's ``workspace/applyEdit`` applier, on real files in a temp workspace."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path

from cadenza.client.edits import EditApplied, EditRefused, WorkspaceEditApplier


def uri(path: Path) -> str:
    return from_fs_path(str(path))


def rng(l1: int, c1: int, l2: int, c2: int) -> types.Range:
    return types.Range(start=types.Position(l1, c1), end=types.Position(l2, c2))


def text_edit(
    path: Path, *edits: tuple[types.Range, str], version: int | None = None
) -> types.TextDocumentEdit:
    return types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri(path), version=version),
        edits=[types.TextEdit(range=r, new_text=t) for r, t in edits],
    )


def doc_changes(*ops: object) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(document_changes=list(ops))  # type: ignore[arg-type]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def applied(result: object) -> EditApplied:
    assert isinstance(result, EditApplied), result
    return result


def refused(result: object) -> str:
    assert isinstance(result, EditRefused), result
    return result.reason


def test_crlf_kept_exactly(ws: Path) -> None:
    f = ws / "app.py"
    f.write_bytes(b"def old():\r\n    return 1\r\n\r\nold()\r\n")
    edit = text_edit(f, (rng(0, 4, 0, 7), "new"), (rng(3, 0, 3, 3), "new"))
    result = applied(WorkspaceEditApplier(ws).apply(doc_changes(edit)))
    assert f.read_bytes() == b"def new():\r\n    return 1\r\n\r\nnew()\r\n"
    [change] = result.changes
    assert change.path == "app.py" and change.kind == "modified"
    assert change.before == "def old():\r\n    return 1\r\n\r\nold()\r\n"
    assert change.after == "def new():\r\n    return 1\r\n\r\nnew()\r\n"


def test_lone_cr_and_mixed_terminators_are_lines(ws: Path) -> None:
    # LSP lines end at \n, \r\n or \r only; \x0c and U+2028 (which str.splitlines splits on) do not.
    f = ws / "mixed.txt"
    f.write_bytes("a\rb\r\nc\x0cd\u2028e\nf".encode())
    edit = text_edit(f, (rng(1, 0, 1, 1), "B"), (rng(2, 2, 2, 3), "D"), (rng(3, 0, 3, 1), "F"))
    applied(WorkspaceEditApplier(ws).apply(doc_changes(edit)))
    assert f.read_bytes() == "a\rB\r\nc\x0cD\u2028e\nF".encode()


def test_bom_stripped_for_positions_and_written_back(ws: Path) -> None:
    f = ws / "bom.py"
    f.write_bytes(b"\xef\xbb\xbfx = 1\r\n")
    result = applied(
        WorkspaceEditApplier(ws).apply(doc_changes(text_edit(f, (rng(0, 0, 0, 1), "y"))))
    )
    assert f.read_bytes() == b"\xef\xbb\xbfy = 1\r\n"
    assert result.changes[0].before == "x = 1\r\n"


def test_utf16_positions_after_emoji(ws: Path) -> None:
    # "😀" is one code point but two UTF-16 code units; "é" is one of each.
    f = ws / "emoji.py"
    f.write_text('s = "😀é"  # old\n', encoding="utf-8", newline="")
    # In UTF-16 units: s=0 ' '=1 '='=2 ' '=3 '"'=4 😀=5-6 é=7 '"'=8 ' '=9 ' '=10 '#'=11 ' '=12 o=13
    edit = text_edit(f, (rng(0, 13, 0, 16), "new"), (rng(0, 7, 0, 8), "e"))
    applied(WorkspaceEditApplier(ws).apply(doc_changes(edit)))
    assert f.read_text(encoding="utf-8") == 's = "😀e"  # new\n'


def test_position_inside_surrogate_pair_refused(ws: Path) -> None:
    f = ws / "emoji.py"
    f.write_text("😀x\n", encoding="utf-8")
    reason = refused(
        WorkspaceEditApplier(ws).apply(doc_changes(text_edit(f, (rng(0, 1, 0, 2), ""))))
    )
    assert "surrogate" in reason
    assert f.read_text(encoding="utf-8") == "😀x\n"


def test_multi_edit_applied_against_original_text(ws: Path) -> None:
    f = ws / "m.txt"
    f.write_text("one two three\nfour\n", encoding="utf-8")
    edit = text_edit(
        f,
        (rng(1, 0, 1, 4), "FOUR"),  # out of order on purpose
        (rng(0, 0, 0, 3), "1"),
        (rng(0, 8, 0, 13), "3333333"),
        (rng(0, 4, 0, 4), "+"),  # two inserts at one position keep their array order
        (rng(0, 4, 0, 4), "-"),
    )
    applied(WorkspaceEditApplier(ws).apply(doc_changes(edit)))
    assert f.read_text(encoding="utf-8") == "1 +-two 3333333\nFOUR\n"


def test_consecutive_text_document_edits_see_each_other(ws: Path) -> None:
    f = ws / "a.txt"
    f.write_text("abc", encoding="utf-8")
    first = text_edit(f, (rng(0, 0, 0, 0), "xx\n"))
    second = text_edit(f, (rng(1, 0, 1, 1), "A"))
    result = applied(WorkspaceEditApplier(ws).apply(doc_changes(first, second)))
    assert f.read_text(encoding="utf-8") == "xx\nAbc"
    assert len(result.changes) == 1


def test_overlapping_edits_refused(ws: Path) -> None:
    f = ws / "a.txt"
    f.write_text("abcdef", encoding="utf-8")
    edit = text_edit(f, (rng(0, 0, 0, 3), "x"), (rng(0, 2, 0, 4), "y"))
    assert "overlap" in refused(WorkspaceEditApplier(ws).apply(doc_changes(edit)))
    assert f.read_text(encoding="utf-8") == "abcdef"


@pytest.mark.parametrize(
    "bad_range",
    [rng(5, 0, 5, 0), rng(0, 0, 0, 99), rng(1, 0, 2, 0), rng(0, 3, 0, 1)],
    ids=["line-past-end", "char-past-line-end", "end-past-end", "reversed"],
)
def test_bad_range_refused_and_nothing_written(ws: Path, bad_range: types.Range) -> None:
    good, bad = ws / "good.txt", ws / "bad.txt"
    good.write_text("keep me\n", encoding="utf-8")
    bad.write_text("abc", encoding="utf-8")
    edit = doc_changes(
        text_edit(good, (rng(0, 0, 0, 4), "lose")), text_edit(bad, (bad_range, "zzz"))
    )
    reason = refused(WorkspaceEditApplier(ws).apply(edit))
    assert "bad.txt" in reason
    assert good.read_text(encoding="utf-8") == "keep me\n"
    assert bad.read_text(encoding="utf-8") == "abc"


def test_end_of_file_after_final_newline_is_a_position(ws: Path) -> None:
    f = ws / "a.txt"
    f.write_text("x\n", encoding="utf-8")
    applied(WorkspaceEditApplier(ws).apply(doc_changes(text_edit(f, (rng(1, 0, 1, 0), "y\n")))))
    assert f.read_text(encoding="utf-8") == "x\ny\n"


def test_create_file_then_insert(ws: Path) -> None:
    f = ws / "pkg" / "new.py"
    create = types.CreateFile(uri=uri(f))
    result = applied(
        WorkspaceEditApplier(ws).apply(
            doc_changes(create, text_edit(f, (rng(0, 0, 0, 0), "print('hi')\r\n")))
        )
    )
    assert f.read_bytes() == b"print('hi')\r\n"
    [change] = result.changes
    assert (change.path, change.kind, change.before) == ("pkg/new.py", "created", None)
    mode = stat.S_IMODE(f.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # not mkstemp's 0600
    assert not [p for p in f.parent.iterdir() if p.name.endswith(".cadenza-tmp")]


def test_create_existing_file_refused_unless_options(ws: Path) -> None:
    f = ws / "a.txt"
    f.write_text("old", encoding="utf-8")
    applier = WorkspaceEditApplier(ws)
    assert "already exists" in refused(applier.apply(doc_changes(types.CreateFile(uri=uri(f)))))
    ignore = types.CreateFile(uri=uri(f), options=types.CreateFileOptions(ignore_if_exists=True))
    assert applied(applier.apply(doc_changes(ignore))).changes == ()
    assert f.read_text(encoding="utf-8") == "old"
    over = types.CreateFile(uri=uri(f), options=types.CreateFileOptions(overwrite=True))
    applied(applier.apply(doc_changes(over)))
    assert f.read_text(encoding="utf-8") == ""


def test_outside_workspace_refused(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret", encoding="utf-8")
    inside = ws / "in.txt"
    inside.write_text("in", encoding="utf-8")
    applier = WorkspaceEditApplier(ws)
    for target in (outside, ws / ".." / "outside.txt", ws):
        edit = doc_changes(
            text_edit(inside, (rng(0, 0, 0, 2), "changed")),
            text_edit(target, (rng(0, 0, 0, 1), "X")),
        )
        assert "outside the workspace" in refused(applier.apply(edit))
    assert "not a file: URI" in refused(
        applier.apply(doc_changes(types.CreateFile(uri="untitled:Untitled-1")))
    )
    assert outside.read_text(encoding="utf-8") == "secret"
    assert inside.read_text(encoding="utf-8") == "in"


def test_symlink_leading_out_refused(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "target.txt"
    outside.write_text("secret", encoding="utf-8")
    (ws / "link.txt").symlink_to(outside)
    edit = doc_changes(text_edit(ws / "link.txt", (rng(0, 0, 0, 1), "X")))
    assert "outside the workspace" in refused(WorkspaceEditApplier(ws).apply(edit))
    assert outside.read_text(encoding="utf-8") == "secret"


def test_symlink_inside_workspace_edits_target_and_keeps_link(ws: Path) -> None:
    target = ws / "real.txt"
    target.write_text("abc", encoding="utf-8")
    link = ws / "link.txt"
    link.symlink_to(target)
    applied(WorkspaceEditApplier(ws).apply(doc_changes(text_edit(link, (rng(0, 0, 0, 1), "X")))))
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == "Xbc"


def test_version_mismatch_refused(ws: Path) -> None:
    f = ws / "a.txt"
    f.write_text("abc", encoding="utf-8")
    edit = doc_changes(text_edit(f, (rng(0, 0, 0, 1), "X"), version=3))
    assert "version" in refused(WorkspaceEditApplier(ws).apply(edit))
    assert f.read_text(encoding="utf-8") == "abc"
    applier = WorkspaceEditApplier(ws, open_versions={uri(f): 3})
    applied(applier.apply(edit))
    assert f.read_text(encoding="utf-8") == "Xbc"


def test_missing_and_undecodable_files_refused(ws: Path) -> None:
    applier = WorkspaceEditApplier(ws)
    missing = doc_changes(text_edit(ws / "nope.txt", (rng(0, 0, 0, 0), "x")))
    assert "does not exist" in refused(applier.apply(missing))
    binary = ws / "image.png"
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    binary.write_bytes(data)
    bad = doc_changes(text_edit(binary, (rng(0, 0, 0, 1), "C")))
    assert refused(applier.apply(bad)) == (
        "image.png: not text that can be edited safely: it does not look like text (it "
        "contains NUL bytes)"
    )
    assert binary.read_bytes() == data


def test_legacy_encoding_kept_byte_exact(ws: Path) -> None:
    # On the disk path: GBK bytes (你好, x=1); the edit replaces x=1.
    gbk = ws / "gbk.txt"
    gbk.write_bytes(bytes.fromhex("C4E3BAC30A783D310A"))
    edit = doc_changes(text_edit(gbk, (rng(1, 2, 1, 3), "2")))
    result = applied(WorkspaceEditApplier(ws).apply(edit))
    assert gbk.read_bytes() == bytes.fromhex("C4E3BAC30A783D320A")
    assert "\ufffd" not in (result.changes[0].before or "") + (result.changes[0].after or "")
    latin = ws / "latin1.txt"
    latin.write_bytes("café au lait, s'il vous plaît\n".encode("latin-1"))
    applied(WorkspaceEditApplier(ws).apply(doc_changes(text_edit(latin, (rng(0, 0, 0, 1), "C")))))
    assert latin.read_bytes() == "Café au lait, s'il vous plaît\n".encode("latin-1")


def test_text_the_legacy_encoding_cannot_hold_refused(ws: Path) -> None:
    f = ws / "latin1.txt"
    original = "café au lait, s'il vous plaît\n".encode("latin-1")
    f.write_bytes(original)
    edit = doc_changes(text_edit(f, (rng(0, 0, 0, 0), "😀 ")))
    assert "cannot be written" in refused(WorkspaceEditApplier(ws).apply(edit))
    assert f.read_bytes() == original


def test_changes_form(ws: Path) -> None:
    f = ws / "a.txt"
    f.write_text("hello\r\n", encoding="utf-8", newline="")
    edit = types.WorkspaceEdit(
        changes={uri(f): [types.TextEdit(range=rng(0, 0, 0, 5), new_text="howdy")]}
    )
    applied(WorkspaceEditApplier(ws).apply(edit))
    assert f.read_bytes() == b"howdy\r\n"


def test_rename_and_delete(ws: Path) -> None:
    old, new, gone = ws / "old.py", ws / "sub" / "new.py", ws / "gone.txt"
    old.write_text("x = 1\n", encoding="utf-8")
    os.chmod(old, 0o755)
    gone.write_text("bye", encoding="utf-8")
    edit = doc_changes(
        types.RenameFile(old_uri=uri(old), new_uri=uri(new)),
        text_edit(new, (rng(0, 4, 0, 5), "2")),
        types.DeleteFile(uri=uri(gone)),
    )
    result = applied(WorkspaceEditApplier(ws).apply(edit))
    assert not old.exists() and not gone.exists()
    assert new.read_text(encoding="utf-8") == "x = 2\n"
    assert stat.S_IMODE(new.stat().st_mode) == 0o755
    kinds = {(c.path, c.kind, c.old_path) for c in result.changes}
    assert kinds == {("sub/new.py", "renamed", "old.py"), ("gone.txt", "deleted", None)}


def test_rename_onto_existing_and_delete_missing_refused(ws: Path) -> None:
    a, b = ws / "a.txt", ws / "b.txt"
    a.write_text("a", encoding="utf-8")
    b.write_text("b", encoding="utf-8")
    applier = WorkspaceEditApplier(ws)
    rename = types.RenameFile(old_uri=uri(a), new_uri=uri(b))
    assert "already exists" in refused(applier.apply(doc_changes(rename)))
    delete = types.DeleteFile(uri=uri(ws / "missing.txt"))
    assert "does not exist" in refused(applier.apply(doc_changes(delete)))
    quiet = types.DeleteFile(
        uri=uri(ws / "missing.txt"), options=types.DeleteFileOptions(ignore_if_not_exists=True)
    )
    assert applied(applier.apply(doc_changes(quiet))).changes == ()
    assert (a.read_text(encoding="utf-8"), b.read_text(encoding="utf-8")) == ("a", "b")


def test_folder_targets_refused(ws: Path) -> None:
    (ws / "dir").mkdir()
    delete = types.DeleteFile(uri=uri(ws / "dir"), options=types.DeleteFileOptions(recursive=True))
    assert "folder" in refused(WorkspaceEditApplier(ws).apply(doc_changes(delete)))
    assert (ws / "dir").is_dir()


def test_write_failure_rolls_back(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = ws / "1.txt", ws / "2.txt"
    first.write_text("one", encoding="utf-8")
    second.write_text("two", encoding="utf-8")
    import cadenza.client.edits as edits_module

    real = edits_module.write_atomic
    calls: list[Path] = []

    def flaky(path: Path, data: bytes) -> None:
        calls.append(path)
        if path.name == "2.txt" and len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(edits_module, "write_atomic", flaky)
    edit = doc_changes(
        text_edit(first, (rng(0, 0, 0, 3), "ONE")), text_edit(second, (rng(0, 0, 0, 3), "TWO"))
    )
    reason = refused(WorkspaceEditApplier(ws).apply(edit))
    assert "2.txt" in reason and "No space" in reason
    assert first.read_text(encoding="utf-8") == "one"
    assert second.read_text(encoding="utf-8") == "two"


def test_snippet_edit_refused(ws: Path) -> None:
    f = ws / "a.txt"
    f.write_text("abc", encoding="utf-8")
    snippet = types.SnippetTextEdit(
        range=rng(0, 0, 0, 1), snippet=types.StringValue(value="${1:x}")
    )
    op = types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri(f), version=None),
        edits=[snippet],
    )
    assert "snippet" in refused(WorkspaceEditApplier(ws).apply(doc_changes(op)))


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_a_file_swapped_for_a_link_during_the_review_is_not_written(
    ws: Path, tmp_path: Path, where: str
) -> None:
    f = ws / "a.txt"
    f.write_text("abc", encoding="utf-8")
    applier = WorkspaceEditApplier(ws)
    prepared = applier.prepare(doc_changes(text_edit(f, (rng(0, 0, 0, 1), "X"))))
    assert not isinstance(prepared, EditRefused)
    # While the person reads the diff, a link with the same text takes the file's place.
    target = (ws / "b.txt") if where == "inside" else (tmp_path / "b.txt")
    target.write_text("abc", encoding="utf-8")
    f.unlink()
    f.symlink_to(target)
    reason = refused(applier.commit(prepared))
    shown = "to b.txt" if where == "inside" else "outside the workspace"
    assert reason == (
        f"a.txt now leads {shown}: a symbolic link was put in its place while the edit "
        "waited; nothing was written"
    )
    assert f.is_symlink() and target.read_text(encoding="utf-8") == "abc"


def test_a_folder_swapped_for_a_link_during_the_review_is_not_written(
    ws: Path, tmp_path: Path
) -> None:
    (ws / "sub").mkdir()
    new = ws / "sub" / "new.txt"
    applier = WorkspaceEditApplier(ws)
    prepared = applier.prepare(doc_changes(types.CreateFile(uri=uri(new))))
    assert not isinstance(prepared, EditRefused)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (ws / "sub").rmdir()
    (ws / "sub").symlink_to(outside)
    assert "sub/new.txt now leads outside the workspace" in refused(applier.commit(prepared))
    assert list(outside.iterdir()) == []
