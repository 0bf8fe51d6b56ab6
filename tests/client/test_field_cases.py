"""Field cases on the headless client's disk path: the real server, ``HeadlessClient`` writing
``workspace/applyEdit`` to disk, a scripted model. Bytes are checked exactly.

Line endings, encodings (GBK, BOM, undecodable), UTF-16 positions on the wire, undo
(from a new server process; the person's untracked file survives), and review mode
``confirm`` (a diff shown, then yes or no).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cadenza.client import ClientError, ClientOptions, HeadlessClient
from cadenza.client.edits import EditReview
from cadenza.client.outcome import RunResult
from cadenza.client.prompts import DecliningPrompter
from cadenza.schema.requests import AskUserParams
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages

TIMEOUT_S = 60
GBK = bytes.fromhex("C4E3BAC30A783D310A")  # 你好 \n x=1 \n


class Reviewer:
    """A prompter that records every edit review and answers from a list."""

    def __init__(self, *answers: bool) -> None:
        self.answers = list(answers)
        self.reviews: list[EditReview] = []

    async def ask(self, request: AskUserParams) -> str | None:
        return None

    async def choose(self, message: str, actions: Sequence[str]) -> str | None:
        return None

    async def confirm_edit(self, review: EditReview) -> bool:
        self.reviews.append(review)
        return self.answers.pop(0)


async def run(opts: ClientOptions, task: str, prompter: Any = None) -> RunResult:
    async with asyncio.timeout(TIMEOUT_S), HeadlessClient(opts, prompter=prompter) as client:
        await client.start_session(task)
        return await client.wait()


def edit_call(path: str, old: str, new: str) -> dict[str, str]:
    return {"path": path, "old_string": old, "new_string": new}


def results(fake: FakeOpenAI) -> list[str]:
    return [str(m["content"]) for m in tool_messages(fake.requests[-1])]


def apply_edit_requests(events: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()]
    return [r["params"] for r in records if r.get("method") == "workspace/applyEdit"]


async def test_crlf_kept(opts: ClientOptions, fake: FakeOpenAI, ws: Path) -> None:
    (ws / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    (ws / "m.txt").write_bytes(b"one\ntwo\r\nthree\r\n")
    fake.script(
        call("edit_file", edit_call("w.txt", "b", "B"), "c1"),
        call("edit_file", edit_call("m.txt", "two", "two\n2.5"), "c2"),
        text("ok"),
    )
    ended = await run(opts, "edit")
    assert ended.outcome.stop_reason == "end_turn"
    assert (ws / "w.txt").read_bytes() == b"a\r\nB\r\nc\r\n"
    assert (ws / "m.txt").read_bytes() == b"one\ntwo\r\n2.5\r\nthree\r\n"


async def test_encodings_kept_and_undecodable_refused(
    opts: ClientOptions, fake: FakeOpenAI, ws: Path
) -> None:
    (ws / "g.txt").write_bytes(GBK)
    (ws / "bom.py").write_bytes(b"\xef\xbb\xbfx = 1\r\n")
    binary = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    (ws / "logo.png").write_bytes(binary)
    fake.script(
        call("edit_file", edit_call("g.txt", "x=1", "x=2"), "c1"),
        call("edit_file", edit_call("bom.py", "x = 1", "x = 2"), "c2"),
        call("edit_file", edit_call("logo.png", "IHDR", "IHDX"), "c3"),
        text("ok"),
    )
    ended = await run(opts, "edit")
    assert ended.outcome.stop_reason == "end_turn"
    assert (ws / "g.txt").read_bytes() == bytes.fromhex("C4E3BAC30A783D320A")  # still GBK
    assert (ws / "bom.py").read_bytes() == b"\xef\xbb\xbfx = 2\r\n"
    assert (ws / "logo.png").read_bytes() == binary
    assert results(fake)[2] == (
        "logo.png is not text Cadenza can edit safely: it does not look like text (it "
        "contains NUL bytes); it was not read or changed"
    )
    assert all("\ufffd" not in (c.before or "") + (c.after or "") for c in ended.changes)


async def test_utf16_positions_on_the_wire(opts: ClientOptions, fake: FakeOpenAI, ws: Path) -> None:
    (ws / "e.py").write_text('s = "😀"; x = 1\n', encoding="utf-8")
    fake.script(call("edit_file", edit_call("e.py", "x = 1", "y = 1"), "c1"), text("ok"))
    await run(opts, "rename x")
    assert (ws / "e.py").read_text(encoding="utf-8") == 's = "😀"; y = 1\n'
    assert opts.events_path is not None
    [params] = apply_edit_requests(opts.events_path)
    [change] = params["edit"]["documentChanges"]
    assert change["edits"] == [
        {
            "range": {"start": {"line": 0, "character": 10}, "end": {"line": 0, "character": 11}},
            "newText": "y",
        }
    ]


async def test_undo_from_a_new_server_keeps_the_persons_file(
    opts: ClientOptions, fake: FakeOpenAI, ws: Path
) -> None:
    (ws / "a.py").write_bytes(b"x = 1\r\n")
    (ws / "g.txt").write_bytes(GBK)
    (ws / "old.py").write_text("name = 'old'\n")
    fake.script(
        call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"),
        call("edit_file", edit_call("g.txt", "x=1", "x=3"), "c2"),
        call("create_file", {"path": "out/new.txt", "content": "made by the agent\n"}, "c3"),
        call("rename_file", {"path": "old.py", "new_path": "new.py"}, "c4"),
        text("done"),
    )
    ended = await run(opts, "change things")
    assert ended.outcome.stop_reason == "end_turn"
    person = ws / "out" / "data.bin"
    person.write_bytes(bytes(range(256)))  # untracked, created by the person afterwards

    async with asyncio.timeout(TIMEOUT_S), HeadlessClient(opts) as client:
        result = await client.undo(ended.session_id)

    assert [(f.path, f.action, f.old_path) for f in result.files] == [
        ("old.py", "moved_back", "new.py"),
        ("a.py", "restored", None),
        ("g.txt", "restored", None),
        ("out/new.txt", "removed", None),
    ]
    assert (ws / "a.py").read_bytes() == b"x = 1\r\n"
    assert (ws / "g.txt").read_bytes() == GBK
    assert (ws / "old.py").read_text() == "name = 'old'\n"
    assert not (ws / "new.py").exists() and not (ws / "out" / "new.txt").exists()
    assert person.read_bytes() == bytes(range(256))

    async with asyncio.timeout(TIMEOUT_S), HeadlessClient(opts) as client:
        with pytest.raises(ClientError, match="was undone already"):
            await client.undo(ended.session_id)


async def test_confirm_shows_each_change_and_writes_only_accepted_ones(
    opts: ClientOptions, fake: FakeOpenAI, ws: Path
) -> None:
    (ws / "a.py").write_text("x = 1\n")
    fake.script(
        call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"),
        call("create_file", {"path": "b.py", "content": "b = 1\n"}, "c2"),
        text("ok"),
    )
    reviewer = Reviewer(False, True)
    confirm = ClientOptions(**{**opts.__dict__, "review": "confirm"})
    ended = await run(confirm, "edit", reviewer)

    first, second = reviewer.reviews
    assert first.label == "edit_file a.py"
    assert first.description == (
        "Cadenza edit_file: replace 1 occurrence(s) of `x = 1` with `x = 2` in a.py"
    )
    [change] = first.changes
    assert (change.path, change.before, change.after) == ("a.py", "x = 1\n", "x = 2\n")
    assert second.label == "create_file b.py"
    assert results(fake) == [
        "a.py was not changed: the person declined the change",
        "created b.py (6 characters)",
    ]
    assert (ws / "a.py").read_text() == "x = 1\n"
    assert (ws / "b.py").read_text() == "b = 1\n"
    assert [c.path for c in ended.changes] == ["b.py"]


@pytest.mark.parametrize(("accept", "expected"), [(True, "x = 2\n"), (False, "x = 1\n")])
async def test_confirm_without_a_terminal_follows_yes(
    opts: ClientOptions, fake: FakeOpenAI, ws: Path, accept: bool, expected: str
) -> None:
    (ws / "a.py").write_text("x = 1\n")
    fake.script(call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"), text("ok"))
    confirm = ClientOptions(**{**opts.__dict__, "review": "confirm"})
    await run(confirm, "edit", DecliningPrompter(accept_edits=accept))
    assert (ws / "a.py").read_text() == expected


async def test_cadenza_undo_command(opts: ClientOptions, fake: FakeOpenAI, ws: Path) -> None:
    (ws / "a.py").write_text("x = 1\n")
    fake.script(
        call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"),
        call("create_file", {"path": "b.py"}, "c2"),
        text("ok"),
    )
    ended = await run(opts, "edit")
    assert opts.env is not None
    command = [sys.executable, "-m", "cadenza", "undo", ended.session_id, "--workspace", str(ws)]
    process = await asyncio.create_subprocess_exec(
        *command,
        env=dict(opts.env),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(TIMEOUT_S):
        out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    assert out.decode().splitlines() == ["restored a.py", "removed b.py"]
    assert (ws / "a.py").read_text() == "x = 1\n" and not (ws / "b.py").exists()
    again = await asyncio.create_subprocess_exec(
        *command, env=dict(opts.env), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    async with asyncio.timeout(TIMEOUT_S):
        _, err = await again.communicate()
    assert again.returncode == 1
    assert f"undo refused: session {ended.session_id} was undone already" in err.decode()
