"""File changes become ``workspace/applyEdit``: versions, minimal ranges, creation, refusal."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities, file_uri
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages


def only_document_edit(harness: Harness) -> types.TextDocumentEdit:
    [request] = harness.edit_requests
    [change] = request.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    return change


def edit_call(path: str, old: str, new: str) -> dict[str, str]:
    return {"path": path, "old_string": old, "new_string": new}


async def test_edit_of_open_buffer_carries_its_version(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "a.py"
    on_disk = "x = 1\ny = 2\n"
    path.write_text(on_disk)
    editor.open(path, on_disk, version=1)
    editor.change(path, "x = 1\ny = 2\nz = 3\n")  # unsaved: version 2, disk unchanged
    fake.script(call("edit_file", edit_call("a.py", "z = 3", "z = 30"), "c1"), text("done"))

    session_id, end = await editor.run("make z 30")

    assert end["stopReason"] == "end_turn"
    change = only_document_edit(editor)
    assert change.text_document.uri == file_uri(path)
    assert change.text_document.version == 2
    [edit] = change.edits
    assert isinstance(edit, types.TextEdit)
    assert edit.range == types.Range(
        start=types.Position(line=2, character=5), end=types.Position(line=2, character=5)
    )
    assert edit.new_text == "0"
    assert editor.text_of(path) == "x = 1\ny = 2\nz = 30\n"
    assert path.read_text() == on_disk  # the server never wrote the file
    diff = next(
        u for u in editor.updates[session_id] if u.get("content", [{}])[0].get("type") == "diff"
    )
    assert diff["content"] == [
        {
            "type": "diff",
            "path": str(path.resolve()),
            "oldText": "x = 1\ny = 2\nz = 3\n",
            "newText": "x = 1\ny = 2\nz = 30\n",
        }
    ]
    [tool] = tool_messages(fake.requests[1])
    assert tool["content"] == "edited a.py: 1 replacement(s)"


async def test_edit_of_closed_file_has_null_version(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "b.py"
    path.write_bytes(b"a = 1\r\nb = 2\r\n")
    fake.script(call("edit_file", edit_call("b.py", "a = 1\nb = 2", "a = 1\nb = 20"), "c1"))
    _, end = await editor.run("b to 20")

    assert end["stopReason"] == "end_turn"
    change = only_document_edit(editor)
    assert change.text_document.version is None
    [edit] = change.edits
    assert isinstance(edit, types.TextEdit)
    assert (edit.range.start, edit.range.end, edit.new_text) == (
        types.Position(line=1, character=5),
        types.Position(line=1, character=5),
        "0",
    )
    assert editor.text_of(path) == "a = 1\r\nb = 20\r\n"  # CRLF kept
    assert path.read_bytes() == b"a = 1\r\nb = 2\r\n"


async def test_new_file_is_created_then_filled(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(call("write_file", {"path": "pkg/new.py", "content": "print('hi')\n"}, "c1"))
    _, end = await editor.run("create it")

    assert end["stopReason"] == "end_turn"
    [request] = editor.edit_requests
    create, fill = request.edit.document_changes or []
    target = workspace / "pkg" / "new.py"
    assert create == types.CreateFile(
        uri=file_uri(target.resolve()),
        options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False),
    )
    assert isinstance(fill, types.TextDocumentEdit)
    assert fill.text_document.version is None
    origin = types.Position(line=0, character=0)
    assert list(fill.edits) == [
        types.TextEdit(range=types.Range(start=origin, end=origin), new_text="print('hi')\n")
    ]
    assert editor.text_of(target.resolve()) == "print('hi')\n"
    # The editor created the file (empty, as CreateFile does) and holds the text unsaved.
    assert target.read_bytes() == b""
    [tool] = tool_messages(fake.requests[1])
    assert tool["content"] == "created pkg/new.py (12 characters)"


async def test_refused_edit_becomes_an_error_result(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor.refuse_edits = "the buffer is read-only"
    gave_up = [text("gave up")] * 3  # each claim after the failed edit is refused: not done
    fake.script(call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"), *gave_up)
    session_id, end = await editor.run("edit")

    assert end["stopReason"] == "failed"
    # The end says what happened in the person's words, not what the model was told to do.
    assert end["message"] == "Not done: nothing was changed: the edit the agent tried did not apply"
    assert len(editor.edit_requests) == 1
    [tool] = tool_messages(fake.requests[1])
    assert tool["content"] == (
        "the editor refused the edit to a.py: the buffer is read-only; nothing was written"
    )
    updates = editor.updates[session_id]
    finished = [u for u in updates if u.get("toolCallId") and u.get("status") == "failed"]
    assert [u["toolCallId"] for u in finished] == ["c1"]
    assert path.read_text() == "x = 1\n"


async def test_stale_buffer_version_is_refused_by_the_editor(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor.open(path, "x = 1\n", version=1)

    real = editor._on_apply_edit

    def typing_meanwhile(params: types.ApplyWorkspaceEditParams) -> object:
        editor.change(path, "x = 1\n# typed by the person\n")  # now version 2
        return real(params)

    editor._on_apply_edit = typing_meanwhile  # type: ignore[method-assign]
    answers = [text("ok")] * 3  # each claim after the refused edit is refused: not done
    fake.script(call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"), *answers)
    _, end = await editor.run("edit")

    assert end["stopReason"] == "failed" and "nothing was changed" in end["message"]
    assert only_document_edit(editor).text_document.version == 1
    [tool] = tool_messages(fake.requests[1])
    assert "refused" in tool["content"]
    assert "stale" in tool["content"]
    assert editor.text_of(path) == "x = 1\n# typed by the person\n"


async def test_client_without_apply_edit_gets_disk_writes(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_bytes(b"x = 1\r\n")
    editor = await connect(caps=capabilities(apply_edit=False))
    fake.script(
        call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"),
        call("write_file", {"path": "n.txt", "content": "new\n"}, "c2"),
    )
    _, end = await editor.run("edit")

    assert end["stopReason"] == "end_turn"
    assert editor.edit_requests == []
    assert path.read_bytes() == b"x = 2\r\n"
    assert (workspace / "n.txt").read_bytes() == b"new\n"
