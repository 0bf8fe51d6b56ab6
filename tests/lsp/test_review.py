"""Review mode and resource operations through the real server.

``review: "confirm"`` sends every change with a ``ChangeAnnotation`` needing confirmation to
clients that support annotations, and asks first with ``window/showMessageRequest`` otherwise;
``resourceOperations`` decide whether files may be created, renamed or deleted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages


def edit_call(path: str, old: str, new: str) -> dict[str, str]:
    return {"path": path, "old_string": old, "new_string": new}


def results(fake: FakeOpenAI) -> list[str]:
    return [str(m["content"]) for m in tool_messages(fake.requests[-1])]


async def test_confirm_annotates_edits_for_clients_that_review_them(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor = await connect(caps=capabilities(change_annotations=True))
    editor.open(path, "x = 1\n")
    fake.script(
        call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"),
        call("create_file", {"path": "b.py", "content": "b\n"}, "c2"),
        text("ok"),
    )
    _, end = await editor.run("edit", review="confirm")

    assert end["stopReason"] == "end_turn"
    assert editor.confirmations == [
        types.ChangeAnnotation(
            label="edit_file a.py",
            needs_confirmation=True,
            description=(
                "Cadenza edit_file: replace 1 occurrence(s) of `x = 1` with `x = 2` in a.py"
            ),
        ),
        types.ChangeAnnotation(
            label="create_file b.py",
            needs_confirmation=True,
            description="Cadenza create_file: create b.py",
        ),
    ]
    first = editor.edit_requests[0].edit.document_changes or []
    [change] = first
    assert isinstance(change, types.TextDocumentEdit)
    assert all(isinstance(e, types.AnnotatedTextEdit) for e in change.edits)
    assert editor.text_of(path) == "x = 2\n"
    assert editor.message_requests == []


async def test_a_declined_preview_writes_nothing(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor = await connect(
        caps=capabilities(change_annotations=True), init_options={"review": "confirm"}
    )
    editor.decline_confirmations = True
    fake.script(call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"), text("ok"))
    _, end = await editor.run("edit")
    assert results(fake) == ["a.py was not changed: the person declined the change"]
    assert path.read_text() == "x = 1\n"
    # The person's decision: the turn ends with the answer, no check asks for the change.
    assert (end["stopReason"], end["message"]) == ("end_turn", "ok")
    assert len(fake.requests) == 2


@pytest.mark.parametrize("failure", ["stale", "failed change"])
async def test_a_reviewed_edit_that_failed_is_no_decision_of_the_persons(
    connect: Connect, fake: FakeOpenAI, workspace: Path, failure: str
) -> None:
    """Sent for review but not applied because it failed (the person typed in the file
    meanwhile, or the client names the change that failed): the model is told, and the done
    checks do not take its claim of done as if the person had declined the change."""
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor = await connect(
        caps=capabilities(change_annotations=True), init_options={"review": "confirm"}
    )
    editor.open(path, "x = 1\n", version=1)
    real = editor._on_apply_edit

    def failing(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        if failure == "stale":
            editor.change(path, "x = 1\n# typed by the person\n")  # now version 2
            return real(params)
        editor.edit_requests.append(params)
        return types.ApplyWorkspaceEditResult(
            applied=False, failure_reason="the disk is full", failed_change=0
        )

    editor._on_apply_edit = failing  # type: ignore[method-assign]
    answers = [text("ok")] * 3  # each claim after the failed edit is refused: not done
    fake.script(call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"), *answers)
    _, end = await editor.run("edit")

    [request] = editor.edit_requests
    assert request.edit.change_annotations  # it was sent for review
    [refused] = tool_messages(fake.requests[1])
    reason = "version 1 is stale (buffer at 2)" if failure == "stale" else "the disk is full"
    assert refused["content"] == (
        f"the editor refused the edit to a.py: {reason}; nothing was written"
    )
    assert (end["stopReason"], end["message"]) == (
        "failed",
        "Not done: nothing was changed: the edit the agent tried did not apply",
    )
    assert len(fake.requests) == 4
    assert path.read_text() == "x = 1\n"


@pytest.mark.parametrize(("choice", "applied"), [("Apply", True), ("Reject", False), (None, False)])
async def test_confirm_asks_first_when_the_client_has_no_annotations(
    connect: Connect, fake: FakeOpenAI, workspace: Path, choice: str | None, applied: bool
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor = await connect(init_options={"review": "confirm"})
    editor.autosave = True
    editor.message_choice = choice
    fake.script(call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"), text("ok"))
    _, end = await editor.run("edit")
    assert (end["stopReason"], end["message"]) == ("end_turn", "ok")

    [asked] = editor.message_requests
    assert asked.message == (
        "Cadenza edit_file: replace 1 occurrence(s) of `x = 1` with `x = 2` in a.py "
        "(+1 -1 lines). Apply this change?"
    )
    assert [a.title for a in asked.actions or []] == ["Apply", "Reject"]
    if applied:
        assert results(fake) == ["edited a.py: 1 replacement(s)"]
        [request] = editor.edit_requests
        assert request.edit.change_annotations is None
        assert path.read_text() == "x = 2\n"
    else:
        assert results(fake) == ["the person rejected the change to a.py; nothing was written"]
        assert editor.edit_requests == []
        assert path.read_text() == "x = 1\n"


async def test_review_argument_overrides_the_setting_and_is_validated(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    editor = await connect(init_options={"review": "confirm"})
    fake.script(call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"), text("ok"))
    await editor.run("edit", review="auto")
    assert editor.message_requests == []
    assert results(fake) == ["edited a.py: 1 replacement(s)"]
    with pytest.raises(JsonRpcException) as caught:
        await editor.start("edit", review="sometimes")
    assert caught.value.code == -32602
    assert "review: Input should be 'auto' or 'confirm'" in caught.value.message


CANDIDATE_TESTS = """\
import sys

from calc import double

if double(3) != 6:
    print("==== 1 failed in 0.01s ====")
    sys.exit(1)
print("==== 1 passed in 0.01s ====")
"""


@pytest.mark.parametrize(
    ("setting", "argument", "tried"),
    [(None, None, True), ("confirm", None, False), (None, "confirm", False)],
)
async def test_no_candidate_is_tried_when_the_person_reviews_each_change(
    connect: Connect,
    fake: FakeOpenAI,
    workspace: Path,
    setting: str | None,
    argument: str | None,
    tried: bool,
) -> None:
    """Under review mode ``confirm`` (the setting or the session's argument) a candidate
    reply's trial would run code nobody reviewed: after failing tests the next step asks for
    one reply, not several (under ``auto`` it asks for two and tries them)."""
    (workspace / "calc.py").write_text("def double(x):\n    return x\n")
    (workspace / "check_calc.py").write_text(CANDIDATE_TESTS)
    editor = await connect(
        caps=capabilities(change_annotations=True, request_permission=True),
        init_options={"review": setting} if setting else None,
        user_config={
            "loop": {"candidates": 2, "test_feedback": True, "checks": "off"},
            "checks": {"test": f"{sys.executable} -S check_calc.py"},
        },
    )
    editor.autosave = True  # the tests read the disk
    wrong = edit_call("calc.py", "return x", "return x + 1")
    fix = edit_call("calc.py", "return x + 1", "return 2 * x")
    fixes = [call("edit_file", fix, "c1"), call("edit_file", fix, "c2")]
    fake.script(call("edit_file", wrong, "e1"), *fixes[: 2 if tried else 1])
    extra = {"review": argument} if argument else {}
    session_id = await editor.start("fix double", **extra)
    end = await editor.wait_end(session_id, timeout=120.0)

    assert (end["stopReason"], end["message"]) == ("end_turn", "The tests pass: 1 passed.")
    candidates = [u for u in editor.updates[session_id] if u["sessionUpdate"] == "candidates"]
    assert [u["tried"] for u in candidates] == ([2] if tried else [])
    assert len(fake.requests) == (3 if tried else 2)
    assert (workspace / "calc.py").read_text() == "def double(x):\n    return 2 * x\n"


async def test_resource_operations_the_client_lacks_are_done_on_disk(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    """Issue 19: what the client cannot take is done on disk and said (``host.edits``)."""
    (workspace / "a.py").write_text("x = 1\n")
    editor = await connect(caps=capabilities(operations=("rename",)))
    fake.script(
        call("rename_file", {"path": "a.py", "new_path": "c.py"}, "c1"),
        call("delete_file", {"path": "c.py"}, "c2"),
        call("create_file", {"path": "b.py", "content": "b"}, "c3"),
        text("ok"),
    )
    await editor.run("shuffle")
    disk = "on disk by Cadenza: the editor takes no {} operations in workspace edits"
    told = results(fake)
    assert told[0] == "renamed a.py to c.py"
    assert told[1].startswith("deleted c.py (deleted " + disk.format("delete"))
    assert told[2].startswith("created b.py (1 characters) (created " + disk.format("create"))
    [request] = editor.edit_requests  # only the rename, which the client takes
    assert list(request.edit.document_changes or []) == [
        types.RenameFile(
            old_uri=(workspace / "a.py").as_uri(),
            new_uri=(workspace / "c.py").as_uri(),
            options=types.RenameFileOptions(overwrite=False, ignore_if_exists=False),
        )
    ]
    assert not (workspace / "a.py").exists() and not (workspace / "c.py").exists()
    assert (workspace / "b.py").read_text() == "b"


async def test_clients_without_document_changes_get_the_changes_map(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\ny = 2\n")
    editor = await connect(caps=capabilities(document_changes=False))
    editor.open(path, "x = 1\ny = 2\n")
    fake.script(
        call("edit_file", edit_call("a.py", "y = 2", "y = 3"), "c1"),
        call("create_file", {"path": "b.py"}, "c2"),
        text("ok"),
    )
    await editor.run("edit")
    [request] = editor.edit_requests
    assert request.edit.document_changes is None
    assert {uri: list(edits) for uri, edits in (request.edit.changes or {}).items()} == {
        (workspace / "a.py").as_uri(): [
            types.TextEdit(
                range=types.Range(start=types.Position(1, 4), end=types.Position(1, 5)),
                new_text="3",
            )
        ]
    }
    assert editor.text_of(path) == "x = 1\ny = 3\n"
    assert results(fake)[1].startswith("created b.py (0 characters) (created on disk by Cadenza")
    assert (workspace / "b.py").read_text() == ""


async def test_delete_and_rename_refuse_unsaved_buffers_and_existing_targets(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    (workspace / "b.py").write_text("b\n")
    editor.open(workspace / "a.py", "x = 1\n")
    editor.change(workspace / "a.py", "x = 1  # typing\n")
    fake.script(
        call("delete_file", {"path": "a.py"}, "c1"),
        call("rename_file", {"path": "b.py", "new_path": "a.py"}, "c2"),
        call("delete_file", {"path": "."}, "c3"),
        text("ok"),
    )
    await editor.run("tidy")
    assert results(fake) == [
        "a.py has unsaved changes in the editor; ask the person to save or revert it first",
        "a.py exists already; choose another new_path",
        ". is a folder; only files can be deleted or renamed",
    ]
    assert editor.edit_requests == []
