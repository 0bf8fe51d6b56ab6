"""The files a command changed are reviewed and undone like an edit's, through the real server.

The scripted model runs ``run_command`` (a real shell in the real ``cadenza serve``); the
review lists what the command modified and created, undoing one puts it back on disk, and the
next model request says it was undone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.harness import Harness, file_uri
from tests.lsp.test_review_changes import changes, review
from tests.lsp.test_waiting import ends, user_texts, wait_for
from tests.support.fake_openai import FakeOpenAI, call, text

ORIGINAL = "a = 1\nb = 2\nc = 3\n"
COMMAND = "sed -i 's/^b = 2$/b = 20/' app.py && printf 'made = True\\n' > made.py"


def diffs(editor: Harness, session_id: str, call_id: str) -> list[dict[str, Any]]:
    return [
        item
        for u in editor.updates[session_id]
        if u["sessionUpdate"] == "tool_call_update" and u.get("toolCallId") == call_id
        for item in u.get("content") or []
        if item.get("type") == "diff"
    ]


async def test_a_commands_changes_are_listed_undone_and_the_next_turn_is_told(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    app, made = workspace / "app.py", workspace / "made.py"
    app.write_text(ORIGINAL)
    editor.autosave = True
    fake.script(call("run_command", {"command": COMMAND}, "c1"), text("Ran it."))
    session_id, end = await editor.run("change b and add made.py with a command")
    assert end["stopReason"] == "end_turn"
    assert app.read_text() == "a = 1\nb = 20\nc = 3\n" and made.exists()

    # The call shows the command's changes as diffs, as an edit tool's call does.
    shown = {
        (Path(d["path"]).name, d.get("oldText"), d["newText"])
        for d in diffs(editor, session_id, "c1")
    }
    assert shown == {
        ("app.py", ORIGINAL, "a = 1\nb = 20\nc = 3\n"),
        ("made.py", None, "made = True\n"),
    }

    listed = await changes(editor, session_id)
    assert listed["unlisted"] == []
    files = {f["path"]: f for f in listed["files"]}
    assert sorted(files) == ["app.py", "made.py"]
    [hunk] = files["app.py"]["hunks"]
    assert (hunk["oldText"], hunk["newText"], hunk["state"]) == ("b = 2\n", "b = 20\n", "pending")
    assert files["made.py"]["hunks"][0]["oldText"] == ""

    result = await review(editor, session_id, "undo", uris=[file_uri(app)])
    assert app.read_text() == ORIGINAL  # back on disk, through workspace/applyEdit
    assert made.read_text() == "made = True\n"  # the other change stays
    states = {f["path"]: [h["state"] for h in f["hunks"]] for f in result["files"]}
    assert states == {"app.py": ["undone"], "made.py": ["pending"]}

    fake.script(text("Understood."))
    await editor.execute("cadenza.promptSession", {"sessionId": session_id, "text": "why?"})
    await ends(editor, session_id, 2)
    told = user_texts(fake.requests[-1])[-1]
    assert told.startswith("The person undid these changes you made in the previous turn")
    assert "app.py, line 2" in told and "b = 20" in told
    assert "made.py" not in told

    # The checkpoint stayed true: undoing the whole session removes the created file.
    undo = await editor.execute("cadenza.undoSession", {"sessionId": session_id})
    assert undo["files"] == [{"path": "made.py", "action": "removed"}]
    assert not made.exists() and app.read_text() == ORIGINAL


async def test_a_binary_file_a_command_wrote_is_named_under_the_review(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(
        call("run_command", {"command": "printf 'x\\000y' > data.bin; echo t > notes.txt"}, "c1"),
        text("ok"),
    )
    session_id, _ = await editor.run("write data")
    listed = await changes(editor, session_id)
    assert [f["path"] for f in listed["files"]] == ["notes.txt"]
    [note] = listed["unlisted"]
    assert note.startswith("Not listed for review: 1 file `printf")
    assert note.endswith("that is not text, over 1 MB or a link (data.bin).")


async def test_two_sessions_of_one_server_keep_their_own_changes(
    editor: Harness, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    """Session A's command runs while session B (same server, same folder) edits: B waits."""
    (workspace / "b.py").write_text("b = 1\n")
    gate = tmp_path / "gate"
    gate.mkdir()
    held = (
        f"touch {gate}/started; while [ ! -f {gate}/release ]; do sleep 0.05; done; "
        "echo made > made.txt"
    )
    editor.autosave = True
    fake.script(call("run_command", {"command": held}, "a1"))
    session_a = await editor.start("make a file")
    await wait_for((gate / "started").exists, timeout=30)
    fake.script(
        call("edit_file", {"path": "b.py", "old_string": "b = 1", "new_string": "b = 2"}, "b1"),
        text("Done."),  # the two sessions' last requests come in either order
        text("Done."),
    )
    session_b = await editor.start("change b")

    def waiting() -> list[str]:
        return [
            item["content"]["text"]
            for u in editor.updates.get(session_b, [])
            if u["sessionUpdate"] == "tool_call_update" and u.get("toolCallId") == "b1"
            for item in u.get("content") or []
            if item.get("type") == "content"
        ]

    await wait_for(lambda: bool(waiting()), timeout=30)
    assert waiting()[0].startswith(f"waiting for the workspace: session {session_a} (process ")
    assert (workspace / "b.py").read_text() == "b = 1\n"  # not inside A's command
    (gate / "release").touch()
    await ends(editor, session_a, 1)
    await ends(editor, session_b, 1)
    assert (workspace / "b.py").read_text() == "b = 2\n"

    assert [f["path"] for f in (await changes(editor, session_a))["files"]] == ["made.txt"]
    assert [f["path"] for f in (await changes(editor, session_b))["files"]] == ["b.py"]
    undo = await editor.execute("cadenza.undoSession", {"sessionId": session_a})
    assert undo["files"] == [{"path": "made.txt", "action": "removed"}]
    assert (workspace / "b.py").read_text() == "b = 2\n"  # B's edit stays
