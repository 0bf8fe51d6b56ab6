"""Field cases (buffers, line endings, encodings, positions, undo) through the real server,
with pytest-lsp as the editor (buffers, versions, an independent applier), and through the
server's own disk path (a client without ``workspace.applyEdit``).

The headless client's disk path is in ``tests/client/test_field_cases.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities, file_uri
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages

REQUEST_FAILED = -32803
GBK = bytes.fromhex("C4E3BAC30A783D310A")  # 你好 \n x=1 \n
GBK_AFTER = bytes.fromhex("C4E3BAC30A783D320A")  # 你好 \n x=2 \n


def edit_call(path: str, old: str, new: str) -> dict[str, str]:
    return {"path": path, "old_string": old, "new_string": new}


def last_tool_result(fake: FakeOpenAI) -> str:
    *_, tool = tool_messages(fake.requests[-1])
    return str(tool["content"])


def text_document_edits(harness: Harness) -> list[types.TextDocumentEdit]:
    return [
        change
        for request in harness.edit_requests
        for change in request.edit.document_changes or []
        if isinstance(change, types.TextDocumentEdit)
    ]


def files_in(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


# --- the buffer on disk ------------------------------------------------------------------


async def test_disk_holds_exactly_the_editor_buffer(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "app.py"
    disk = "def f():\n    return 1\n"
    path.write_text(disk)
    editor.open(path, disk, version=1)
    fake.script(call("edit_file", edit_call("app.py", "return 1", "return 2"), "c1"), text("ok"))
    session_id, end = await editor.run("make f return 2")
    assert end["stopReason"] == "end_turn"
    assert path.read_text() == disk  # the agent's edit is in the buffer; the server wrote nothing

    # The person types more, then saves.
    typed = editor.text_of(path) + "print(f())\n"
    editor.change(path, typed)
    editor.save(path)
    saved = path.stat().st_mtime_ns

    # A later session reads the buffer as it is now, and nothing writes the old text back.
    fake.script(call("read_file", {"path": "app.py"}, "r1"), text("read"))
    await editor.run("read app.py")
    assert "print(f())" in last_tool_result(fake)
    # Undo of the first session refuses: the person changed the file since.
    with pytest.raises(JsonRpcException) as caught:
        await editor.execute("cadenza.undoSession", {"sessionId": session_id})
    assert caught.value.code == REQUEST_FAILED
    assert "app.py changed after the session's last change to it" in caught.value.message
    assert path.read_bytes() == typed.encode()
    assert path.stat().st_mtime_ns == saved
    assert files_in(workspace) == {"app.py"}  # no shadow or temporary copy in the workspace


# --- unsaved buffers ---------------------------------------------------------------------


async def test_edit_applies_on_the_unsaved_buffer_at_its_version(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text("x = 1\n")
    editor.open(path, "x = 1\n", version=1)
    editor.change(path, "x = 1\ny = 2\n")  # unsaved: version 2
    fake.script(
        call("read_file", {"path": "app.py"}, "r1"),
        call("edit_file", edit_call("app.py", "y = 2", "y = 3"), "c1"),
        text("ok"),
    )
    _, end = await editor.run("make y 3")
    assert end["stopReason"] == "end_turn"
    [read] = tool_messages(fake.requests[1])
    assert "y = 2" in read["content"]  # the agent reads the unsaved buffer
    [change] = text_document_edits(editor)
    assert change.text_document == types.OptionalVersionedTextDocumentIdentifier(
        uri=file_uri(path), version=2
    )
    assert [(e.range, e.new_text) for e in change.edits] == [
        (types.Range(start=types.Position(1, 4), end=types.Position(1, 5)), "3")
    ]
    assert editor.text_of(path) == "x = 1\ny = 3\n"
    assert path.read_bytes() == b"x = 1\n"  # nothing written behind the editor's back


async def test_untitled_buffers_are_edited_in_the_editor(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    nameless = "untitled:Untitled-1"
    with_path = "untitled:" + str(workspace / "draft.py")
    editor.open(nameless, "hello world\n", version=4)
    editor.open(with_path, "x = 1\n", version=1)
    fake.script(
        call("edit_file", edit_call(nameless, "world", "there"), "c1"),
        call("edit_file", edit_call("draft.py", "x = 1", "x = 2"), "c2"),
        text("ok"),
    )
    _, end = await editor.run("edit the drafts")
    assert end["stopReason"] == "end_turn"
    first, second = text_document_edits(editor)
    assert first.text_document == types.OptionalVersionedTextDocumentIdentifier(
        uri=nameless, version=4
    )
    assert second.text_document.uri == with_path
    assert second.text_document.version == 1
    assert editor.text_of(nameless) == "hello there\n"
    assert editor.text_of(with_path) == "x = 2\n"
    assert files_in(workspace) == set()  # both live only in the editor


# --- line endings ------------------------------------------------------------------------


async def test_crlf_kept(editor: Harness, fake: FakeOpenAI, workspace: Path) -> None:
    path = workspace / "w.txt"
    path.write_bytes(b"a\r\nb\r\nc\r\n")
    editor.autosave = True
    fake.script(call("edit_file", edit_call("w.txt", "b", "B"), "c1"), text("ok"))
    _, end = await editor.run("capitalise b")
    assert end["stopReason"] == "end_turn"
    [change] = text_document_edits(editor)
    assert change.text_document.version is None
    assert [(e.range, e.new_text) for e in change.edits] == [
        (types.Range(start=types.Position(1, 0), end=types.Position(1, 1)), "B")
    ]
    assert path.read_bytes() == b"a\r\nB\r\nc\r\n"


async def test_mixed_endings_untouched_lines_keep_theirs_new_lines_use_the_files(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "m.txt"
    path.write_bytes(b"one\nTwo\r\nthree\r\nfour\r\n")  # dominant CRLF, one LF line
    editor.autosave = True
    fake.script(
        # The model writes LF; the file's lines keep theirs and the new line gets CRLF.
        call("edit_file", edit_call("m.txt", "Two\nthree", "Two\nthree\nthree and a half"), "c1"),
        text("ok"),
    )
    await editor.run("add a line")
    assert path.read_bytes() == b"one\nTwo\r\nthree\r\nthree and a half\r\nfour\r\n"

    editor.edit_requests.clear()
    fake.script(
        call("write_file", {"path": "m.txt", "content": "one\nTwo\nthree\nfour\nfive\n"}, "c2"),
        text("ok"),
    )
    await editor.run("rewrite it")
    assert path.read_bytes() == b"one\nTwo\r\nthree\r\nfour\r\nfive\r\n"
    [change] = text_document_edits(editor)  # two minimal edits, not the whole file
    assert [(e.range.start.line, e.new_text) for e in change.edits] == [(3, ""), (5, "five\r\n")]


async def test_crlf_kept_on_the_servers_disk_path(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "w.txt"
    path.write_bytes(b"a\r\nb\r\nc\r\n")
    editor = await connect(caps=capabilities(apply_edit=False))
    fake.script(
        call("edit_file", edit_call("w.txt", "b", "B\nb2"), "c1"),
        text("ok"),
    )
    await editor.run("edit")
    assert editor.edit_requests == []
    assert path.read_bytes() == b"a\r\nB\r\nb2\r\nc\r\n"


# --- encodings ---------------------------------------------------------------------------


async def test_gbk_closed_file_is_not_sent_to_an_editor_that_decodes_it_itself(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "g.txt"
    path.write_bytes(GBK)
    fake.script(call("edit_file", edit_call("g.txt", "x=1", "x=2"), "c1"), text("ok"))
    await editor.run("x to 2")
    result = last_tool_result(fake)
    assert result.startswith("g.txt was not changed: it is encoded in big5 (or ")
    assert "gb18030" in result
    assert "ask the person to open it in the editor with that encoding" in result
    assert editor.edit_requests == []
    assert path.read_bytes() == GBK


async def test_gbk_file_open_in_the_editor_is_edited_in_its_buffer(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "g.txt"
    path.write_bytes(GBK)
    editor.open(path, GBK.decode("gbk"), version=1, encoding="gbk")  # the person's editor: GBK
    fake.script(call("edit_file", edit_call("g.txt", "x=1", "x=2"), "c1"), text("ok"))
    await editor.run("x to 2")
    assert editor.text_of(path) == "你好\nx=2\n"
    editor.save(path)
    assert path.read_bytes() == GBK_AFTER


async def test_gbk_kept_byte_exact_by_a_client_that_decodes_like_the_server(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "g.txt"
    path.write_bytes(GBK)
    editor = await connect(caps=capabilities(exact_encodings=True))
    editor.exact_encodings = editor.autosave = True
    fake.script(call("edit_file", edit_call("g.txt", "x=1", "x=2"), "c1"), text("ok"))
    await editor.run("x to 2")
    assert path.read_bytes() == GBK_AFTER
    assert b"\xef\xbf\xbd" not in path.read_bytes()  # no U+FFFD anywhere


async def test_gbk_kept_byte_exact_on_the_servers_disk_path(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "g.txt"
    path.write_bytes(GBK)
    editor = await connect(caps=capabilities(apply_edit=False))
    fake.script(call("edit_file", edit_call("g.txt", "x=1", "x=2"), "c1"), text("ok"))
    await editor.run("x to 2")
    assert path.read_bytes() == GBK_AFTER
    # Longer GBK text is recognised as such, and new Chinese text is written in GBK.
    long = workspace / "notes.txt"
    original = "这是一个测试文件\uff0c用来检查编码\u3002\n价格 = 1\n"
    long.write_bytes(original.encode("gbk"))
    fake.script(call("edit_file", edit_call("notes.txt", "价格 = 1", "价格 = 2 # 人民币"), "c2"))
    await editor.run("price")
    assert long.read_bytes() == original.replace("价格 = 1", "价格 = 2 # 人民币").encode("gbk")


@pytest.mark.parametrize("client", ["editor", "disk"])
async def test_utf8_bom_kept(
    connect: Connect, fake: FakeOpenAI, workspace: Path, client: str
) -> None:
    path = workspace / "bom.py"
    path.write_bytes(b"\xef\xbb\xbfx = 1\r\ny = 2\r\n")
    editor = await connect(caps=capabilities(apply_edit=client == "editor"))
    editor.autosave = True
    fake.script(call("edit_file", edit_call("bom.py", "x = 1", "x = 9"), "c1"), text("ok"))
    await editor.run("x to 9")
    assert path.read_bytes() == b"\xef\xbb\xbfx = 9\r\ny = 2\r\n"
    if client == "editor":
        [change] = text_document_edits(editor)
        [edit] = change.edits
        assert edit.range.start == types.Position(0, 4)  # the BOM is not a character


async def test_undecodable_file_is_refused_clearly(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "logo.png"
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x10"
    path.write_bytes(data)
    fake.script(
        call("read_file", {"path": "logo.png"}, "r1"),
        call("edit_file", edit_call("logo.png", "IHDR", "IHDX"), "c1"),
        call("write_file", {"path": "logo.png", "content": "PNG"}, "c2"),
        text("ok"),
    )
    await editor.run("fix the logo")
    refusal = (
        "logo.png is not text Cadenza can edit safely: it does not look like text (it "
        "contains NUL bytes); it was not read or changed"
    )
    assert [m["content"] for m in tool_messages(fake.requests[-1])] == [refusal] * 3
    assert editor.edit_requests == []
    assert path.read_bytes() == data


# --- positions ---------------------------------------------------------------------------


@pytest.mark.parametrize(("encoding", "column"), [("utf-16", 10), ("utf-8", 12), ("utf-32", 9)])
async def test_positions_in_the_negotiated_encoding(
    connect: Connect, fake: FakeOpenAI, workspace: Path, encoding: str, column: int
) -> None:
    path = workspace / "e.py"
    path.write_text('s = "😀"; x = 1\n', encoding="utf-8")
    editor = await connect(caps=capabilities(encodings=[encoding]))
    assert editor.encoding == encoding
    fake.script(call("edit_file", edit_call("e.py", "x = 1", "y = 1"), "c1"))
    await editor.run("rename x")
    [change] = text_document_edits(editor)
    [edit] = change.edits
    assert isinstance(edit, types.TextEdit)
    assert edit.range == types.Range(
        start=types.Position(line=0, character=column),
        end=types.Position(line=0, character=column + 1),
    )
    assert edit.new_text == "y"
    assert editor.text_of(path) == 's = "😀"; y = 1\n'


# --- undo --------------------------------------------------------------------------------


def _f16_workspace(workspace: Path) -> None:
    (workspace / "a.py").write_bytes(b"x = 1\r\n")
    (workspace / "c.py").write_text("gone = True\n")
    (workspace / "d.py").write_text("move = 'me'\n")


def _f16_script(fake: FakeOpenAI) -> None:
    fake.script(
        call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"),
        call("create_file", {"path": "b.py", "content": "b = 1\n"}, "c2"),
        call("delete_file", {"path": "c.py"}, "c3"),
        call("rename_file", {"path": "d.py", "new_path": "sub/e.py"}, "c4"),
        call("edit_file", edit_call("sub/e.py", "me", "moved"), "c5"),
        text("done"),
    )


def _person_creates_untracked_file_mid_session(editor: Harness, path: Path) -> bytes:
    data = bytes(range(256)) * 4
    real = editor._on_apply_edit

    def creating(params: types.ApplyWorkspaceEditParams) -> Any:
        if len(editor.edit_requests) == 2:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return real(params)

    editor._on_apply_edit = creating  # type: ignore[method-assign]
    return data


async def test_undo_restores_the_sessions_files_and_keeps_the_persons(
    editor: Harness, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    _f16_workspace(workspace)
    editor.autosave = True
    untracked = workspace / "out" / "data.bin"
    data = _person_creates_untracked_file_mid_session(editor, untracked)
    _f16_script(fake)
    session_id, end = await editor.run("reorganise")
    assert end["stopReason"] == "end_turn"
    assert [m["content"] for m in tool_messages(fake.requests[-1])] == [
        "edited a.py: 1 replacement(s)",
        "created b.py (6 characters)",
        "deleted c.py",
        "renamed d.py to sub/e.py",
        "edited sub/e.py: 1 replacement(s)",
    ]
    assert files_in(workspace) == {"a.py", "b.py", "sub/e.py", "out/data.bin"}
    state = tmp_path / "home" / "xdg_state_home" / "cadenza" / "checkpoints" / session_id
    assert (state / "manifest.json").is_file()  # outside the workspace

    editor.edit_requests.clear()
    result = await editor.execute("cadenza.undoSession", {"sessionId": session_id})

    assert result == {
        "sessionId": session_id,
        "files": [
            {"path": "d.py", "action": "moved_back", "oldPath": "sub/e.py"},
            {"path": "a.py", "action": "restored"},
            {"path": "b.py", "action": "removed"},
            {"path": "c.py", "action": "recreated"},
        ],
        "unchanged": [],
    }
    [request] = editor.edit_requests
    assert request.label == f"Undo Cadenza session {session_id[:8]}"
    kinds = [type(change).__name__ for change in request.edit.document_changes or []]
    assert kinds == [
        "RenameFile",
        "TextDocumentEdit",
        "TextDocumentEdit",
        "DeleteFile",
        "CreateFile",
        "TextDocumentEdit",
    ]
    assert (workspace / "a.py").read_bytes() == b"x = 1\r\n"
    assert (workspace / "c.py").read_text() == "gone = True\n"
    assert (workspace / "d.py").read_text() == "move = 'me'\n"
    assert not (workspace / "b.py").exists()
    assert not (workspace / "sub" / "e.py").exists()
    assert untracked.read_bytes() == data  # the person's file, byte for byte

    with pytest.raises(JsonRpcException) as again:
        await editor.execute("cadenza.undoSession", {"sessionId": session_id})
    assert again.value.code == REQUEST_FAILED
    assert again.value.message == f"session {session_id} was undone already"


async def test_undo_refuses_and_names_files_the_person_changed(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    _f16_workspace(workspace)
    editor.autosave = True
    _f16_script(fake)
    session_id, _ = await editor.run("reorganise")
    (workspace / "a.py").write_text("x = 2  # mine\n")
    (workspace / "c.py").write_text("back by hand\n")
    editor.edit_requests.clear()

    with pytest.raises(JsonRpcException) as caught:
        await editor.execute("cadenza.undoSession", {"sessionId": session_id})

    assert caught.value.code == REQUEST_FAILED
    assert caught.value.message == (
        f"cannot undo session {session_id}: a.py changed after the session's last change to "
        "it; c.py was created again after the session deleted it. Nothing was undone"
    )
    assert editor.edit_requests == []
    assert (workspace / "b.py").read_text() == "b = 1\n"
    assert (workspace / "sub" / "e.py").read_text() == "move = 'moved'\n"


async def test_undo_on_the_servers_disk_path_and_after_a_restart(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    from tests.lsp.harness import stop_harness

    _f16_workspace(workspace)
    gbk = workspace / "g.txt"
    gbk.write_bytes(GBK)
    first = await connect(caps=capabilities(apply_edit=False))
    untracked = workspace / "out" / "data.bin"
    fake.script(
        call("edit_file", edit_call("g.txt", "x=1", "x=2"), "c0"),
        call("delete_file", {"path": "g.txt"}, "c00"),
    )
    _f16_script(fake)
    session_id, end = await first.run("reorganise")
    assert end["stopReason"] == "end_turn"
    untracked.parent.mkdir()
    untracked.write_bytes(b"\x00\xffperson's")
    await stop_harness(first)

    second = await connect(caps=capabilities(apply_edit=False))
    result = await second.execute("cadenza.undoSession", {"sessionId": session_id})
    assert {f["path"] for f in result["files"]} == {"a.py", "b.py", "c.py", "d.py", "g.txt"}
    assert gbk.read_bytes() == GBK  # re-created with its exact bytes
    assert (workspace / "a.py").read_bytes() == b"x = 1\r\n"
    assert files_in(workspace) == {"a.py", "c.py", "d.py", "g.txt", "out/data.bin"}
    assert untracked.read_bytes() == b"\x00\xffperson's"
