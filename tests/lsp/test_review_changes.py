"""``cadenza.listChanges`` / ``cadenza.reviewChanges``: the latest turn's hunks kept or undone
one by one through the real server; checkpoints stay true and the next turn is told."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, file_uri
from tests.lsp.test_waiting import ends, user_texts
from tests.support.fake_openai import FakeOpenAI, Reply, call, text

REQUEST_FAILED = -32803
INVALID_PARAMS = -32602
ORIGINAL = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"


def edit(path: str, old: str, new: str) -> dict[str, str]:
    return {"path": path, "old_string": old, "new_string": new}


def line_range(start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": start, "character": 0}, "end": {"line": end, "character": 0}}


async def changes(editor: Harness, session_id: str) -> dict[str, Any]:
    result: dict[str, Any] = await editor.execute("cadenza.listChanges", {"sessionId": session_id})
    return result


async def review(editor: Harness, session_id: str, action: str, **which: Any) -> dict[str, Any]:
    result: dict[str, Any] = await editor.execute(
        "cadenza.reviewChanges", {"sessionId": session_id, "action": action, **which}
    )
    return result


async def refused(editor: Harness, command: str, argument: dict[str, Any]) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await editor.execute(command, argument)
    return caught.value


async def two_hunk_turn(editor: Harness, fake: FakeOpenAI, workspace: Path) -> str:
    (workspace / "app.py").write_text(ORIGINAL)
    editor.autosave = True
    fake.script(
        call("edit_file", edit("app.py", "a = 1", "a = 10"), "c1"),
        call("edit_file", edit("app.py", "e = 5", "e = 50"), "c2"),
        text("Changed a and e."),
    )
    session_id, end = await editor.run("change a and e")
    assert end["stopReason"] == "end_turn"
    return session_id


async def test_keep_one_hunk_undo_another_and_the_next_turn_is_told(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "app.py"
    session_id = await two_hunk_turn(editor, fake, workspace)

    listed = await changes(editor, session_id)
    [changed] = listed["files"]
    assert changed["uri"] == file_uri(path)
    assert changed["path"] == "app.py"
    first, second = changed["hunks"]
    assert (first["oldText"], first["newText"], first["state"]) == (
        "a = 1\n",
        "a = 10\n",
        "pending",
    )
    assert first["range"] == line_range(0, 1)
    assert (second["oldText"], second["newText"]) == ("e = 5\n", "e = 50\n")
    assert second["range"] == line_range(4, 5)
    assert first["id"] != second["id"]

    kept = await review(editor, session_id, "keep", hunks=[first["id"]])
    assert [h["state"] for h in kept["files"][0]["hunks"]] == ["kept", "pending"]
    assert path.read_text() == "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n"  # keep changes no file

    editor.edit_requests.clear()
    undone = await review(editor, session_id, "undo", hunks=[second["id"]])
    assert [h["state"] for h in undone["files"][0]["hunks"]] == ["kept", "undone"]
    assert undone["files"][0]["hunks"][1]["range"] == line_range(4, 5)
    assert len(editor.edit_requests) == 1  # through workspace/applyEdit
    assert path.read_text() == "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n"
    again = await review(editor, session_id, "undo", hunks=[second["id"]])
    assert again == undone  # undoing an undone hunk changes nothing
    assert len(editor.edit_requests) == 1

    fake.script(text("Understood."))
    await editor.execute("cadenza.promptSession", {"sessionId": session_id, "text": "why?"})
    await ends(editor, session_id, 2)
    told = user_texts(fake.requests[-1])[-1]
    assert told.startswith("The person undid these changes you made in the previous turn")
    assert "app.py, line 5" in told and "e = 50" in told
    assert "a = 10" not in told  # the kept change is not mentioned
    assert told.endswith("\n\nwhy?")
    assert (await changes(editor, session_id))["files"] == []  # turn 2 changed nothing

    # The checkpoint stayed true: undoing the whole session still works.
    result = await editor.execute("cadenza.undoSession", {"sessionId": session_id})
    assert result["files"] == [{"path": "app.py", "action": "restored"}]
    assert path.read_text() == ORIGINAL


async def test_a_hunk_the_person_changed_is_refused_the_others_move(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "app.py"
    session_id = await two_hunk_turn(editor, fake, workspace)
    first, second = (await changes(editor, session_id))["files"][0]["hunks"]
    typed = "# top\n# note\na = 10\nb = 2\nc = 3\nd = 4\ne = 51\n"  # the person typed since
    path.write_text(typed)
    editor.buffers[file_uri(path)].text = typed  # the test editor's copy of the closed file

    listed = (await changes(editor, session_id))["files"][0]["hunks"]
    assert listed[0]["range"] == line_range(2, 3)  # moved down by the two lines typed above
    assert "range" not in listed[1]  # the person changed it
    error = await refused(
        editor,
        "cadenza.reviewChanges",
        {"sessionId": session_id, "action": "undo", "hunks": [first["id"], second["id"]]},
    )
    assert error.code == REQUEST_FAILED
    assert "app.py changed at that change since the turn" in error.message
    assert path.read_text().endswith("e = 51\n")  # nothing undone

    result = await review(editor, session_id, "undo", hunks=[first["id"]])
    assert path.read_text() == "# top\n# note\na = 1\nb = 2\nc = 3\nd = 4\ne = 51\n"
    assert [h["state"] for h in result["files"][0]["hunks"]] == ["undone", "pending"]


async def test_undo_all_pending_removes_a_created_file_and_keeps_undo_true(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "app.py").write_text(ORIGINAL)
    editor.autosave = True
    fake.script(
        call("create_file", {"path": "new.py", "content": "print('new')\n"}, "c1"),
        call("edit_file", edit("app.py", "c = 3", "c = 30"), "c2"),
        text("ok"),
    )
    session_id, _ = await editor.run("add a file")
    listed = await changes(editor, session_id)
    assert sorted(f["path"] for f in listed["files"]) == ["app.py", "new.py"]
    created = next(f for f in listed["files"] if f["path"] == "new.py")
    assert created["hunks"][0]["oldText"] == ""

    result = await review(editor, session_id, "undo")  # neither hunks nor uris: all pending
    assert all(h["state"] == "undone" for f in result["files"] for h in f["hunks"])
    assert not (workspace / "new.py").exists()
    assert (workspace / "app.py").read_text() == ORIGINAL
    undo = await editor.execute("cadenza.undoSession", {"sessionId": session_id})
    assert undo["files"] == []
    assert sorted(undo["unchanged"]) == ["app.py", "new.py"]


async def test_a_file_by_uri_and_a_client_without_apply_edit(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    from tests.lsp.harness import capabilities

    editor = await connect(caps=capabilities(apply_edit=False))
    path = workspace / "app.py"
    path.write_text(ORIGINAL)
    fake.script(
        call("edit_file", edit("app.py", "a = 1", "a = 10"), "c1"),
        call("edit_file", edit("app.py", "e = 5", "e = 50"), "c2"),
        text("ok"),
    )
    session_id, _ = await editor.run("change")
    assert path.read_text() == "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n"
    result = await review(editor, session_id, "undo", uris=[file_uri(path)])
    assert [h["state"] for h in result["files"][0]["hunks"]] == ["undone", "undone"]
    assert path.read_text() == ORIGINAL


async def test_bad_requests_are_refused_with_nothing_changed(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    session_id = await two_hunk_turn(editor, fake, workspace)
    before = (workspace / "app.py").read_text()
    unknown = await refused(
        editor,
        "cadenza.reviewChanges",
        {"sessionId": session_id, "action": "undo", "hunks": ["t0-nope-0"]},
    )
    assert unknown.code == REQUEST_FAILED
    assert "no change 't0-nope-0'" in unknown.message
    bad = await refused(
        editor, "cadenza.reviewChanges", {"sessionId": session_id, "action": "revert"}
    )
    assert bad.code == INVALID_PARAMS
    assert (workspace / "app.py").read_text() == before
    assert (await changes(editor, "no-such-session"))["files"] == []

    fake.script(Reply(content="slow", delay_s=30))
    running = await editor.start("wait")
    busy = await refused(editor, "cadenza.reviewChanges", {"sessionId": running, "action": "keep"})
    assert busy.code == REQUEST_FAILED
    assert "review its changes once its turn ends" in busy.message
    await editor.execute("cadenza.cancelSession", {"sessionId": running})
    await editor.wait_end(running)


async def test_hunks_of_an_open_unsaved_buffer(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text(ORIGINAL)
    uri = editor.open(path, ORIGINAL)  # the edits stay unsaved in this buffer
    fake.script(
        call("edit_file", edit("app.py", "a = 1", "a = 10"), "c1"),
        call("edit_file", edit("app.py", "e = 5", "e = 50"), "c2"),
        text("ok"),
    )
    session_id, _ = await editor.run("change a and e")
    assert path.read_text() == ORIGINAL  # nothing saved
    first, second = (await changes(editor, session_id))["files"][0]["hunks"]
    assert (first["range"], second["range"]) == (line_range(0, 1), line_range(4, 5))
    editor.edit_requests.clear()
    await review(editor, session_id, "undo", hunks=[first["id"]])
    [request] = editor.edit_requests
    [change] = request.edit.document_changes or []
    assert change.text_document.uri == uri and change.text_document.version is not None
    assert editor.text_of(path) == "a = 1\nb = 2\nc = 3\nd = 4\ne = 50\n"


@pytest.mark.parametrize("open_at_once", [False, True], ids=["held", "didOpen-first"])
async def test_two_edits_of_a_closed_file_the_editor_reports_late(
    editor: Harness, fake: FakeOpenAI, workspace: Path, open_at_once: bool
) -> None:
    """VS Code with ``saveEdits: never``: an edit opens the closed file's buffer, and the
    client answers ``applyEdit`` before its ``didOpen``/``didChange``; the turn's second edit
    must build on the first, and the review must show both."""
    path = workspace / "app.py"
    path.write_text(ORIGINAL)
    editor.late_open, editor.open_at_once = True, open_at_once
    fake.script(
        call("edit_file", edit("app.py", "a = 1", "a = 10"), "c1"),
        call("edit_file", edit("app.py", "e = 5", "e = 50"), "c2"),
        text("ok"),
    )
    session_id, end = await editor.run("change a and e")
    assert end["stopReason"] == "end_turn"
    ended = [u.get("status") for u in editor.updates[session_id]]
    assert [s for s in ended if s in ("completed", "failed")] == ["completed", "completed"]
    both = "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n"
    uri = file_uri(path)
    assert editor.text_of(path) == both and (uri in editor.open_uris) == open_at_once
    assert path.read_text() == ORIGINAL  # nothing saved
    listed = (await changes(editor, session_id))["files"][0]["hunks"]
    assert [h["range"] for h in listed] == [line_range(0, 1), line_range(4, 5)]
    editor.report_late()
    first, second = (await changes(editor, session_id))["files"][0]["hunks"]
    assert (first["range"], second["range"]) == (line_range(0, 1), line_range(4, 5))
    assert (first["newText"], second["newText"]) == ("a = 10\n", "e = 50\n")
    await review(editor, session_id, "undo", hunks=[second["id"]])
    assert editor.text_of(path) == "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n"
    assert path.read_text() == ORIGINAL
