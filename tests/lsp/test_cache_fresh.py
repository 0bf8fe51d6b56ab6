"""No cached read outlives a change, through the real server.

A read repeated after a change must show the change, whoever made it: a command the agent ran
(``touch b.txt``), the person typing in an open buffer (``didChange``), another process writing
the file. The model is scripted; between two reads the test changes the workspace while the
server waits for the person's answer to an ``ask_user`` call (nothing else happens then).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages

ASK = {"question": "may I read it again?"}


def results(fake: FakeOpenAI) -> dict[str, str]:
    """The tool messages of the last request, by call id."""
    return {m["tool_call_id"]: m["content"] for m in tool_messages(fake.requests[-1])}


def on_question(editor: Harness, act: Callable[[], None]) -> None:
    """Run ``act`` when the server asks the person (``cadenza/askUser``), then answer yes."""

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        editor.ask_requests.append(params)
        act()
        return {"answer": "yes"}

    editor._on_ask_user = answer  # type: ignore[method-assign]


@pytest.mark.parametrize("repeats", ["run", "observe"])
async def test_list_files_after_a_command_shows_the_new_file(
    connect: Connect, fake: FakeOpenAI, workspace: Path, repeats: str
) -> None:
    (workspace / "a.txt").write_text("a\n")
    editor = await connect(
        caps=capabilities(request_permission=True), init_options={"loop": {"repeats": repeats}}
    )
    fake.script(
        call("list_files", {}, "c1"),
        call("run_command", {"command": "touch b.txt"}, "c2"),
        call("list_files", {}, "c3"),
        text("done"),
    )
    _, end = await editor.run("list, touch, list")

    assert end["stopReason"] == "end_turn"
    assert (workspace / "b.txt").exists()
    seen = results(fake)
    assert seen["c1"] == "a.txt"
    assert seen["c3"] == "a.txt\nb.txt"


async def test_read_file_of_an_open_buffer_after_did_change_shows_the_new_text(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text("on disk\n")
    editor = await connect(caps=capabilities(ask_user=True))
    editor.open(path, "typed first\n")
    on_question(editor, lambda: editor.change(path, "typed second\n"))
    fake.script(
        call("read_file", {"path": "app.py"}, "c1"),
        call("ask_user", ASK, "c2"),
        call("read_file", {"path": "app.py"}, "c3"),
        text("done"),
    )
    _, end = await editor.run("read it twice")

    assert end["stopReason"] == "end_turn"
    assert len(editor.ask_requests) == 1
    seen = results(fake)
    assert "typed first" in seen["c1"]
    assert "typed second" in seen["c3"] and "typed first" not in seen["c3"]


REWRITE = """
import os, sys
path, text = sys.argv[1], sys.argv[2]
before = os.stat(path)
with open(path, "w") as f:
    f.write(text)
os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
"""
"""Another process rewrites the file with the same size and puts its mtime back (as ``cp -p``
or a file system with a coarse clock would leave it)."""


async def test_read_file_after_another_process_rewrote_the_file_reads_it_again(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text("version = 1\n")
    editor = await connect(caps=capabilities(ask_user=True))

    def rewrite() -> None:
        subprocess.run([sys.executable, "-c", REWRITE, str(path), "version = 2\n"], check=True)

    on_question(editor, rewrite)
    before = os.stat(path)
    fake.script(
        call("read_file", {"path": "app.py"}, "c1"),
        call("ask_user", ASK, "c2"),
        call("read_file", {"path": "app.py"}, "c3"),
        text("done"),
    )
    _, end = await editor.run("read it twice")

    assert end["stopReason"] == "end_turn"
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    seen = results(fake)
    assert "version = 1" in seen["c1"]
    assert "version = 2" in seen["c3"] and "already called" not in seen["c3"]
