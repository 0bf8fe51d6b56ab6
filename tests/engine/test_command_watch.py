"""The pipeline runs a command under the session's ``CommandWatch``, however the command ends.

A recording double stands for the host's checkpointed watch (``host.command_changes``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio

from cadenza.engine.events import FileEdited, WorkspaceWaited
from cadenza.engine.ports import CommandChange
from cadenza.engine.session import Session, SessionSettings
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply


class RecordingWatch:
    def __init__(
        self,
        changes: list[CommandChange] | None = None,
        *,
        busy: str | None = None,
        holder: str | None = None,
    ) -> None:
        self.calls: list[str] = []
        self.changes = changes or []
        self.started = anyio.Event()
        self.busy = busy
        """Why the workspace refuses every call (None: it takes them)."""
        self.holder = holder
        """Whom each call waits for first (None: nobody)."""

    async def before(self, command: str, on_wait: Callable[[str], None]) -> str | None:
        self.calls.append(f"before {command}")
        if self.holder is not None:
            on_wait(self.holder)
        self.started.set()
        return self.busy

    @contextlib.asynccontextmanager
    async def editing(self, on_wait: Callable[[str], None]) -> AsyncIterator[str | None]:
        self.calls.append("editing")
        if self.holder is not None:
            on_wait(self.holder)
        yield self.busy
        self.calls.append("edited")

    async def after(self) -> list[CommandChange]:
        self.calls.append("after")
        return self.changes


def session(root: Path, provider: ScriptedProvider, watch: RecordingWatch) -> Session:
    return Session(
        session_id="s1",
        task="do it",
        root=root,
        provider=provider,
        editor=MemoryEditor(),
        settings=SessionSettings(gated_tools=frozenset()),
        command_watch=watch,
    )  # type: ignore[arg-type]


def edits(made: Session) -> list[FileEdited]:
    editor = made.rt.editor
    assert isinstance(editor, MemoryEditor)
    return [e for e in editor.events if isinstance(e, FileEdited)]


async def test_a_command_is_watched_and_its_changes_published_as_the_calls_edits(
    tmp_path: Path,
) -> None:
    changed = [
        CommandChange(path="app.py", old_text="a = 1\n", new_text="a = 2\n"),
        CommandChange(path="new.txt", old_text=None, new_text="n\n"),
        CommandChange(path="old.txt", old_text="o\n", new_text="", deleted=True),
    ]
    watch = RecordingWatch(changed)
    provider = ScriptedProvider(
        [
            reply(call("list_files", "c0", path=".")),
            reply(call("run_command", "c1", command="make fmt")),
            reply(content="done"),
        ]
    )
    made = session(tmp_path, provider, watch)
    made.rt.written[tmp_path / "app.py"] = "a = 1\n"
    made.rt.written[tmp_path / "old.txt"] = "o\n"
    await made.run()
    assert watch.calls == ["before make fmt", "after"]  # the read-only call is not watched
    shown = [(e.tool_call_id, e.path, e.old_text, e.new_text) for e in edits(made)]
    assert shown == [
        ("c1", "app.py", "a = 1\n", "a = 2\n"),
        ("c1", "new.txt", None, "n\n"),
        ("c1", "old.txt", "o\n", ""),
    ]
    # The test check compares the session's texts with the disk: the command's are the truth.
    assert made.rt.written == {tmp_path / "app.py": "a = 2\n"}


async def test_a_failing_or_late_command_is_compared_too(tmp_path: Path) -> None:
    watch = RecordingWatch()
    provider = ScriptedProvider(
        [
            reply(call("run_command", "c1", command="exit 3")),
            reply(call("run_command", "c2", command="sleep 5", timeout_s=0.2)),
            reply(content="done"),
        ]
    )
    await session(tmp_path, provider, watch).run()
    assert watch.calls == ["before exit 3", "after", "before sleep 5", "after"]


async def test_a_cancelled_command_is_compared_before_the_cancellation_goes_on(
    tmp_path: Path,
) -> None:
    watch = RecordingWatch()
    provider = ScriptedProvider([reply(call("run_command", "c1", command="sleep 30"))])
    made = session(tmp_path, provider, watch)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(made.run)
            await watch.started.wait()
            await anyio.sleep(0.2)
            tg.cancel_scope.cancel()
    assert watch.calls == ["before sleep 30", "after"]


async def test_an_edit_runs_inside_the_watch_and_a_wait_is_published(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("a = 1\n")
    watch = RecordingWatch(holder="session x (process 7) is running `make`")
    provider = ScriptedProvider(
        [
            reply(call("edit_file", "c1", path="app.py", old_string="a = 1", new_string="a = 2")),
            reply(call("run_command", "c2", command="true")),
            reply(content="done"),
        ]
    )
    made = session(tmp_path, provider, watch)
    await made.run()
    assert watch.calls == ["editing", "edited", "before true", "after"]
    editor = made.rt.editor
    assert isinstance(editor, MemoryEditor)
    waits = [e for e in editor.events if isinstance(e, WorkspaceWaited)]
    assert [(e.tool_call_id, e.text) for e in waits] == [
        ("c1", "waiting for the workspace: session x (process 7) is running `make`"),
        ("c2", "waiting for the workspace: session x (process 7) is running `make`"),
    ]
    assert (tmp_path / "app.py").read_text() == "a = 2\n"


async def test_a_busy_workspace_runs_no_command_and_writes_no_edit(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("a = 1\n")
    busy = "the workspace stayed busy for 900 s: session x (process 7) is running `make`"
    watch = RecordingWatch(busy=busy)
    provider = ScriptedProvider(
        [
            reply(call("run_command", "c1", command="touch made.txt")),
            reply(call("edit_file", "c2", path="app.py", old_string="a = 1", new_string="a = 2")),
            reply(content="done"),
        ]
    )
    await session(tmp_path, provider, watch).run()
    assert watch.calls == ["before touch made.txt", "editing", "edited"]  # no after: nothing ran
    assert not (tmp_path / "made.txt").exists()
    assert (tmp_path / "app.py").read_text() == "a = 1\n"
    results = {
        m.tool_call_id: m.content
        for m in provider.requests[-1].messages
        if m.role == "tool" and m.tool_call_id is not None
    }
    assert results == {
        "c1": f"not run: {busy}. Try again later",
        "c2": f"not written: {busy}. Try again later",
    }
