"""Editors that cannot create, rename or delete files get it done on disk.

A client that declares no ``workspace.workspaceEdit.resourceOperations`` (eglot 1.9) or takes
only the ``changes`` map used to get the tool refused, so the agent could never add a file.
Now Cadenza does the operation on disk, atomically and inside the workspace rules, and the tool
result and the session's ``tool_call_update`` say so. Through the real server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.lsp.conftest import Connect
from tests.lsp.harness import capabilities
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages

ON_DISK = "on disk by Cadenza: the editor takes no"


def no_resource_operations(*, document_changes: bool = True) -> types.ClientCapabilities:
    """eglot's shape: ``workspaceEdit`` without any ``resourceOperations`` key."""
    caps = capabilities(document_changes=document_changes)
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.resource_operations = None
    return caps


def results(fake: FakeOpenAI) -> list[str]:
    return [str(m["content"]) for m in tool_messages(fake.requests[-1])]


def finished(updates: list[dict[str, Any]]) -> dict[str, str]:
    """Each finished call's text, by call id (what an agent panel shows)."""
    return {
        u["toolCallId"]: " ".join(str(c.get("content", {}).get("text", "")) for c in u["content"])
        for u in updates
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") == "completed"
    }


async def test_create_rename_delete_on_disk_without_resource_operations(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "old.py").write_text("x = 1\n")
    (workspace / "gone.py").write_text("y = 2\n")
    editor = await connect(caps=no_resource_operations())
    fake.script(
        call("create_file", {"path": "pkg/new.py", "content": "z = 3\n"}, "c1"),
        call("rename_file", {"path": "old.py", "new_path": "moved/old.py"}, "c2"),
        call("delete_file", {"path": "gone.py"}, "c3"),
        text("done"),
    )
    session_id, end = await editor.run("shuffle files")
    assert end["stopReason"] == "end_turn"
    assert (workspace / "pkg" / "new.py").read_text() == "z = 3\n"
    assert not (workspace / "old.py").exists()
    assert (workspace / "moved" / "old.py").read_text() == "x = 1\n"
    assert not (workspace / "gone.py").exists()
    assert editor.edit_requests == []  # nothing the client cannot take was sent
    told = results(fake)
    assert told[0].startswith("created pkg/new.py (6 characters) (created " + ON_DISK)
    assert told[1].startswith("renamed old.py to moved/old.py (renamed " + ON_DISK)
    assert told[2].startswith("deleted gone.py (deleted " + ON_DISK)
    shown = finished(editor.updates[session_id])
    assert ON_DISK in shown["c1"] and ON_DISK in shown["c2"] and ON_DISK in shown["c3"]


async def test_changes_only_client_gets_new_files_on_disk_and_text_edits_sent(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor = await connect(caps=no_resource_operations(document_changes=False))
    editor.open(path, "x = 1\n")
    fake.script(
        call("create_file", {"path": "b.py", "content": "b = 1\n"}, "c1"),
        call("edit_file", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}, "c2"),
        text("ok"),
    )
    await editor.run("edit and create")
    assert (workspace / "b.py").read_text() == "b = 1\n"
    assert ON_DISK in results(fake)[0]
    [request] = editor.edit_requests  # the text edit still goes to the editor's buffer
    assert request.edit.document_changes is None
    assert editor.text_of(path) == "x = 2\n"
    assert path.read_text() == "x = 1\n"


async def test_open_file_renamed_on_disk_says_its_buffer_is_still_open(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor = await connect(caps=no_resource_operations())
    editor.open(path, "x = 1\n")
    fake.script(call("rename_file", {"path": "a.py", "new_path": "b.py"}, "c1"), text("ok"))
    await editor.run("rename")
    assert (workspace / "b.py").read_text() == "x = 1\n"
    assert "its buffer of a.py is still open, close it" in results(fake)[0]


async def test_disk_operations_stay_inside_the_workspace(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    editor = await connect(caps=no_resource_operations())
    fake.script(
        call("create_file", {"path": "../outside.py", "content": "no\n"}, "c1"),
        call("create_file", {"path": ".git/hooks/post-commit", "content": "no\n"}, "c2"),
        text("ok"),
    )
    await editor.run("escape")
    assert not (workspace.parent / "outside.py").exists()
    assert not (workspace / ".git").exists()
    told = results(fake)
    assert "outside the workspace" in told[0]
    assert "version-control folder" in told[1]


async def test_undo_session_puts_disk_operations_back_on_disk(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    """The undo of files created, renamed and deleted on disk is done on disk too (the editor
    takes no resource operations), and the text edit of the open file goes to the editor."""
    (workspace / "old.py").write_text("x = 1\n")
    (workspace / "gone.py").write_text("y = 2\n")
    path = workspace / "a.py"
    path.write_text("a = 1\n")
    editor = await connect(caps=no_resource_operations())
    editor.open(path, "a = 1\n")
    fake.script(
        call("create_file", {"path": "pkg/new.py", "content": "z = 3\n"}, "c1"),
        call("rename_file", {"path": "old.py", "new_path": "moved/old.py"}, "c2"),
        call("delete_file", {"path": "gone.py"}, "c3"),
        call("edit_file", {"path": "a.py", "old_string": "a = 1", "new_string": "a = 2"}, "c4"),
        text("done"),
    )
    session_id, end = await editor.run("shuffle files")
    assert end["stopReason"] == "end_turn"
    assert editor.text_of(path) == "a = 2\n"
    result = await editor.execute("cadenza.undoSession", {"sessionId": session_id})
    actions = sorted(f["action"] for f in result["files"])
    assert actions == ["moved_back", "recreated", "removed", "restored"], result
    assert not (workspace / "pkg" / "new.py").exists()
    assert (workspace / "old.py").read_text() == "x = 1\n"
    assert not (workspace / "moved" / "old.py").exists()
    assert (workspace / "gone.py").read_text() == "y = 2\n"
    assert editor.text_of(path) == "a = 1\n"
    for request in editor.edit_requests:  # only text changes went to the editor
        for change in request.edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit), change
