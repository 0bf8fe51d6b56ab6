"""``cadenza.restoreTurn`` over a real server: the files of that turn and the later ones put
back through ``workspace/applyEdit``, the conversation the model sees cut before the turn, the
person's own words given back; refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities
from tests.lsp.test_waiting import ASK, ends, user_texts, wait_for
from tests.support.fake_openai import FakeOpenAI, Reply, call, text

REQUEST_FAILED = -32803
INVALID_PARAMS = -32602


def edit(path: str, old: str, new: str, call_id: str) -> Reply:
    return call("edit_file", {"path": path, "old_string": old, "new_string": new}, call_id)


async def prompt(editor: Harness, session_id: str, words: str, **extra: Any) -> None:
    await editor.execute("cadenza.promptSession", {"sessionId": session_id, "text": words, **extra})


async def restore_error(editor: Harness, *arguments: object) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await editor.execute("cadenza.restoreTurn", *arguments)
    return caught.value


async def three_turns(editor: Harness, fake: FakeOpenAI, workspace: Path) -> str:
    """Turn 1 edits a.py; turn 2 (with editor context) edits a.py and creates b.py; turn 3
    edits c.py."""
    (workspace / "a.py").write_text("x = 1\ny = 1\n")
    (workspace / "c.py").write_text("c = 1\n")
    editor.autosave = True
    fake.script(edit("a.py", "x = 1", "x = 2", "c1"), text("x is 2"))
    session_id = await editor.start("set x to 2")
    await ends(editor, session_id, 1)
    fake.script(
        edit("a.py", "y = 1", "y = 2", "c2"),
        call("create_file", {"path": "b.py", "content": "b = 1\n"}, "c3"),
        text("y is 2, b made"),
    )
    uri = editor.open(workspace / "a.py", "x = 2\ny = 1\n", version=1)
    await prompt(editor, session_id, "now y, and a b.py", context={"files": [uri]})
    await ends(editor, session_id, 2)
    fake.script(edit("c.py", "c = 1", "c = 2", "c4"), text("c is 2"))
    await prompt(editor, session_id, "and c")
    await ends(editor, session_id, 3)
    assert editor.text_of(workspace / "a.py") == "x = 2\ny = 2\n"
    assert (workspace / "b.py").read_text() == "b = 1\n"
    assert (workspace / "c.py").read_text() == "c = 2\n"
    assert "Context from the editor" in user_texts(fake.requests[-3])[-1]
    return session_id


async def test_restore_puts_back_the_turns_files_and_cuts_the_conversation(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    session_id = await three_turns(editor, fake, workspace)
    editor.edit_requests.clear()

    result = await editor.execute("cadenza.restoreTurn", {"sessionId": session_id, "turn": 2})

    assert result["sessionId"] == session_id and result["turn"] == 2
    assert result["text"] == "now y, and a b.py"  # the person's words, not the context
    assert sorted((f["path"], f["action"]) for f in result["files"]) == [
        ("a.py", "restored"),
        ("b.py", "removed"),
        ("c.py", "restored"),
    ]
    assert result["unchanged"] == [] and result["skipped"] == []
    [request] = editor.edit_requests  # one workspace/applyEdit, as undo sends
    kinds = {type(change) for change in request.edit.document_changes or []}
    assert kinds == {types.TextDocumentEdit, types.DeleteFile}
    assert editor.text_of(workspace / "a.py") == "x = 2\ny = 1\n"  # turn 1's change stays
    assert not (workspace / "b.py").exists()
    assert (workspace / "c.py").read_text() == "c = 1\n"

    # The next turn goes on from the conversation before turn 2.
    fake.script(text("only y then"))
    await prompt(editor, session_id, "only y")
    await ends(editor, session_id, 4)
    texts = user_texts(fake.requests[-1])
    assert texts[0] == "set x to 2" and texts[-1] == "only y"
    assert not any("now y" in t or "and c" in t for t in texts)
    messages = fake.requests[-1]["messages"]
    assert any(m.get("content") == "x is 2" for m in messages)
    assert not any(m.get("content") in ("y is 2, b made", "c is 2") for m in messages)


async def test_a_file_changed_since_is_left_alone_and_named(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    session_id = await three_turns(editor, fake, workspace)
    (workspace / "c.py").write_text("c = 99\n")  # the person's own change

    result = await editor.execute("cadenza.restoreTurn", {"sessionId": session_id, "turn": 2})

    assert result["skipped"] == [
        {"path": "c.py", "reason": "changed after the session's last change to it"}
    ]
    assert (workspace / "c.py").read_text() == "c = 99\n"
    assert not (workspace / "b.py").exists()
    assert editor.text_of(workspace / "a.py") == "x = 2\ny = 1\n"


async def test_restoring_the_first_turn_puts_everything_back(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    session_id = await three_turns(editor, fake, workspace)
    result = await editor.execute("cadenza.restoreTurn", {"sessionId": session_id, "turn": 1})
    assert result["text"] == "set x to 2"
    assert editor.text_of(workspace / "a.py") == "x = 1\ny = 1\n"
    assert (workspace / "c.py").read_text() == "c = 1\n"
    # Sent again, it starts over in the same session: the model sees no earlier turn.
    fake.script(text("x is 3"))
    await prompt(editor, session_id, "set x to 3")
    await ends(editor, session_id, 4)
    assert user_texts(fake.requests[-1]) == ["set x to 3"]


async def test_a_running_session_a_missing_turn_and_bad_arguments_are_refused(
    editor: Harness, fake: FakeOpenAI
) -> None:
    fake.script(text("one"))
    session_id = await editor.start("first")
    await ends(editor, session_id, 1)
    fake.script(Reply(content="slow", delay_s=30))
    await prompt(editor, session_id, "second")
    running = await restore_error(editor, {"sessionId": session_id, "turn": 1})
    assert running.code == REQUEST_FAILED
    assert running.message == (
        f"session {session_id} is running: wait for its turn to end, or cancel it, before "
        "restoring it"
    )
    await editor.execute("cadenza.cancelSession", {"sessionId": session_id})
    await ends(editor, session_id, 2)
    missing = await restore_error(editor, {"sessionId": session_id, "turn": 3})
    assert missing.code == REQUEST_FAILED
    assert missing.message == f"session {session_id} has no turn 3: its turns are 1 to 2"
    unknown = await restore_error(editor, {"sessionId": "f" * 32, "turn": 1})
    assert unknown.code == REQUEST_FAILED and "unknown session" in unknown.message
    zero = await restore_error(editor, {"sessionId": session_id, "turn": 0})
    assert zero.code == INVALID_PARAMS and "turn" in zero.message


async def test_an_answer_is_a_turn_and_a_waiting_session_is_restored(
    connect: Connect, fake: FakeOpenAI
) -> None:
    editor = await connect(caps=capabilities(ask_user=True))
    editor.answers.extend([None, None])  # the person answers later, in the input
    fake.script(call("complete", ASK, "c1"))
    session_id = await editor.start("rename total")
    await ends(editor, session_id, 1)
    fake.script(call("complete", ASK, "c2"))
    await wait_for(lambda: len(editor.ask_requests) == 1)
    await prompt(editor, session_id, "total_of")
    await ends(editor, session_id, 2)
    await wait_for(lambda: len(editor.ask_requests) == 2)  # it asks again: it waits

    result = await editor.execute("cadenza.restoreTurn", {"sessionId": session_id, "turn": 2})

    assert result["text"] == "total_of"  # the answer as typed, not the model's wording of it
    *_, cancelled = await ends(editor, session_id, 3)
    assert cancelled["stopReason"] == "cancelled"  # the wait was ended
    # Back before the answer: the session waits for it again, and takes another.
    fake.script(text("Renamed to sum_of."))
    await prompt(editor, session_id, "sum_of")
    *_, end = await ends(editor, session_id, 4)
    assert end["stopReason"] == "end_turn"
    texts = user_texts(fake.requests[-1])
    assert texts[-1].endswith(": sum_of")
    assert not any("total_of" in t for t in texts)
