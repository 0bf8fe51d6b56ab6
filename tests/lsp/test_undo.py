"""``cadenza.undoSession`` beyond ``test_field_cases.py``: buffers, refusals, arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities
from tests.support.fake_openai import FakeOpenAI, Reply, call, text

REQUEST_FAILED = -32803
INVALID_PARAMS = -32602


def edit_call(path: str, old: str, new: str) -> dict[str, str]:
    return {"path": path, "old_string": old, "new_string": new}


async def undo_error(editor: Harness, *arguments: object) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await editor.execute("cadenza.undoSession", *arguments)
    return caught.value


async def test_undo_of_an_open_buffer_carries_its_version(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\ny = 1\n")
    editor.open(path, "x = 1\ny = 1\n", version=1)
    editor.change(path, "x = 1\ny = 1\n# unsaved note\n")  # the state the session starts from
    fake.script(call("edit_file", edit_call("a.py", "y = 1", "y = 2"), "c1"), text("ok"))
    session_id, _ = await editor.run("y to 2")
    assert editor.text_of(path) == "x = 1\ny = 2\n# unsaved note\n"
    editor.edit_requests.clear()

    result = await editor.execute("cadenza.undoSession", {"sessionId": session_id})

    assert result["files"] == [{"path": "a.py", "action": "restored"}]
    [request] = editor.edit_requests
    [change] = request.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.version == 3  # the buffer's version now
    assert editor.text_of(path) == "x = 1\ny = 1\n# unsaved note\n"  # the unsaved note stays
    assert path.read_text() == "x = 1\ny = 1\n"


async def test_files_already_back_are_left_alone(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor.autosave = True
    fake.script(call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"), text("ok"))
    session_id, _ = await editor.run("x to 2")
    path.write_text("x = 1\n")  # the person undid it by hand
    editor.edit_requests.clear()
    result = await editor.execute("cadenza.undoSession", {"sessionId": session_id})
    assert result == {"sessionId": session_id, "files": [], "unchanged": ["a.py"]}
    assert editor.edit_requests == []


async def test_a_running_session_an_unknown_one_and_bad_arguments_are_refused(
    editor: Harness, fake: FakeOpenAI
) -> None:
    fake.script(Reply(content="slow", delay_s=30))
    session_id = await editor.start("wait")
    running = await undo_error(editor, {"sessionId": session_id})
    assert running.code == REQUEST_FAILED
    assert running.message == (
        f"session {session_id} is still running; cancel it (cadenza.cancelSession) before "
        "undoing it"
    )
    await editor.execute("cadenza.cancelSession", {"sessionId": session_id})
    await editor.wait_end(session_id)
    unknown = await undo_error(editor, {"sessionId": "nope"})
    assert unknown.code == REQUEST_FAILED
    assert "no record of session nope" in unknown.message
    sneaky = await undo_error(editor, {"sessionId": "../../etc"})
    assert sneaky.code == REQUEST_FAILED and "is not a session id" in sneaky.message
    malformed = await undo_error(editor, {"session": "x"})
    assert malformed.code == INVALID_PARAMS
    assert "cadenza.undoSession: sessionId: Field required" in malformed.message


async def test_undo_does_on_disk_the_resource_operations_the_editor_lacks(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    """A client without ``delete`` (eglot declares no resourceOperations at all): the file the
    session created is removed on disk, as it was created (``host.edits.resource_on_disk``)."""
    full = await connect()
    full.autosave = True
    fake.script(call("create_file", {"path": "new.py", "content": "n\n"}, "c1"), text("ok"))
    session_id, _ = await full.run("create")
    assert (workspace / "new.py").read_text() == "n\n"
    limited = await connect(caps=capabilities(operations=("create",)))
    result = await limited.execute("cadenza.undoSession", {"sessionId": session_id})
    assert result["files"] == [{"path": "new.py", "action": "removed"}]
    assert not (workspace / "new.py").exists()
    assert limited.edit_requests == []  # nothing the client cannot take was sent
