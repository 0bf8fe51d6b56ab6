"""The headless client library against a scripted stub server (no agent, no model)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from cadenza.client import (
    ClientError,
    ClientOptions,
    HeadlessClient,
    ServerExitedError,
    ServerStartError,
    SessionStartError,
    run_task,
)
from cadenza.client.events import ClientEvent, EditRejected, EditWritten, Progress, UserAsked
from cadenza.schema.requests import AskUserParams
from cadenza.schema.updates import (
    AgentMessageChunk,
    Compaction,
    Movement,
    OtherUpdate,
    Plan,
    SessionEnd,
    ToolCall,
    ToolCallUpdate,
)

SESSION_UPDATE = "cadenza/sessionUpdate"
STUB = Path(__file__).with_name("stub_server.py")
TIMEOUT_S = 30


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.txt").write_bytes(b"one\r\ntwo\r\n")
    return root


def options(
    ws: Path, command: Sequence[str] | None = None, *, events_path: Path | None = None
) -> ClientOptions:
    return ClientOptions(
        workspace=ws,
        server_command=tuple(command or (sys.executable, str(STUB))),
        start_timeout=20,
        shutdown_timeout=3,
        events_path=events_path,
    )


class Answers:
    def __init__(self, answer: str | None, choice: str | None) -> None:
        self.answer, self.choice = answer, choice
        self.asked: list[str] = []

    async def ask(self, request: AskUserParams) -> str | None:
        self.asked.append(request.question)
        return self.answer

    async def choose(self, message: str, actions: Sequence[str]) -> str | None:
        self.asked.append(f"{message} {list(actions)}")
        return self.choice


async def test_edit_session_writes_files_and_reports(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        events: list[ClientEvent] = []
        ended = await run_task(options(ws), "edit", observer=events.append)
        assert (ended.outcome.stop_reason, ended.outcome.steps, ended.session_id) == (
            "end_turn",
            2,
            "s-1",
        )
        assert (ws / "app.txt").read_bytes() == b"one\r\nTWO\r\n"
        assert (ws / "new.txt").read_bytes() == b"fresh\n"
        assert {(c.path, c.kind) for c in ended.changes} == {
            ("new.txt", "created"),
            ("app.txt", "modified"),
        }
        kinds = [type(e).__name__ for e in events]
        assert kinds.index("Progress") < kinds.index("EditWritten") < kinds.index("SessionEnd")
        written = [e for e in events if isinstance(e, EditWritten)]
        assert written[0].label == "edit app.txt"
        text = "".join(e.content.text for e in events if isinstance(e, AgentMessageChunk))
        assert text == "Done: edited app.txt\nand created new.txt."
        progress = [e for e in events if isinstance(e, Progress)]
        assert [p.kind for p in progress] == ["begin", "report", "report", "end"]
        failed = [e for e in events if isinstance(e, ToolCallUpdate) and e.status == "failed"]
        assert failed[0].text() == "no such pattern\nmore"
        assert isinstance(events[-2], SessionEnd) or isinstance(events[-1], SessionEnd)


async def test_refused_edit_answers_failure_reason(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        events: list[ClientEvent] = []
        ended = await run_task(options(ws), "refused", observer=events.append)
        assert ended.outcome.stop_reason == "error"
        assert ended.outcome.message.startswith("applied=False:")
        assert "outside the workspace" in ended.outcome.message
        assert not (ws.parent / "outside.txt").exists()
        assert any(isinstance(e, EditRejected) for e in events)
        assert ended.changes == ()


async def test_questions_answered_by_prompter(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        answers = Answers("new_name", "Yes")
        events: list[ClientEvent] = []
        ended = await run_task(options(ws), "ask", observer=events.append, prompter=answers)
        assert ended.outcome.message == "answer='new_name' choice='Yes'"
        assert answers.asked == ["Which name?", "Proceed? ['Yes', 'No']"]
        asked = [e for e in events if isinstance(e, UserAsked)]
        assert [(e.question, e.answer) for e in asked] == [
            ("Which name?", "new_name"),
            ("Proceed?", "Yes"),
        ]


async def test_questions_declined_by_default(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        ended = await run_task(options(ws), "ask")
        assert ended.outcome.message == "answer=None choice=None"


async def test_choice_outside_actions_is_null(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        ended = await run_task(options(ws), "ask", prompter=Answers("x", "Maybe"))
        assert ended.outcome.message == "answer='x' choice=None"


async def test_cancel_ends_session_cancelled(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        async with HeadlessClient(options(ws)) as client:
            await client.start_session("wait")
            assert await client.cancel() is True
            ended = await client.wait()
        assert ended.outcome.stop_reason == "cancelled"


async def test_server_crash_during_session(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        async with HeadlessClient(options(ws)) as client:
            await client.start_session("crash")
            with pytest.raises(ServerExitedError) as info:
                await client.wait()
        assert "status 3" in str(info.value)
        assert "the model ran away" in str(info.value)


async def test_start_session_refused(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        async with HeadlessClient(options(ws)) as client:
            with pytest.raises(SessionStartError, match="unknown stub script"):
                await client.start_session("reject")


async def test_missing_server_command(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        with pytest.raises(ServerStartError, match="cannot start the Cadenza server"):
            await run_task(options(ws, ["/nonexistent/cadenza-serve"]), "edit")


async def test_server_exiting_at_start_shows_its_stderr(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        command = [
            sys.executable,
            "-c",
            "import sys; print('model not pulled', file=sys.stderr); exit(2)",
        ]
        with pytest.raises(ServerStartError) as info:
            await run_task(options(ws, command), "edit")
        assert "exited during start-up" in str(info.value)
        assert "model not pulled" in str(info.value)


async def test_workspace_must_exist(tmp_path: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        with pytest.raises(ServerStartError, match="not a folder"):
            await run_task(options(tmp_path / "missing"), "edit")


async def test_server_gone_after_close(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        client = HeadlessClient(options(ws))
        await client.start()
        process = client._lsp.process if client._lsp else None
        await client.close()
        await client.close()  # idempotent
        assert process is not None and process.returncode == 0


async def test_movements_compaction_and_needs_user_input(ws: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        events: list[ClientEvent] = []
        ended = await run_task(options(ws), "workflow", observer=events.append)
    assert ended.outcome.stop_reason == "needs_user_input"
    assert (ended.outcome.missing_info, ended.outcome.why_no_default) == (
        "the new name",
        "two names fit",
    )
    moves = [e for e in events if isinstance(e, Movement)]
    assert [(m.workflow, m.movement, m.index, m.reason) for m in moves] == [
        ("plan-implement-review", "plan", 1, ""),
        ("plan-implement-review", "implement", 2, "the plan"),
    ]
    [compaction] = [e for e in events if isinstance(e, Compaction)]
    assert (compaction.tokens_before, compaction.tokens_after) == (3000, 1200)
    assert compaction.messages_summarized == 6


async def test_events_file_gets_every_server_message(ws: Path, tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"method": "earlier run", "params": null}\n')  # appended to, not replaced
    async with asyncio.timeout(TIMEOUT_S):
        events: list[ClientEvent] = []
        await run_task(options(ws, events_path=path), "edit", observer=events.append)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines[0] == {"method": "earlier run", "params": None}
    methods = [line["method"] for line in lines[1:]]
    assert methods[0] == "window/workDoneProgress/create"
    assert "id" in lines[1] and lines[1]["params"] == {"token": "progress-1"}
    apply = next(line for line in lines if line["method"] == "workspace/applyEdit")
    assert "id" in apply and apply["params"]["label"] == "edit app.txt"
    updates = [line["params"]["update"] for line in lines if line["method"] == SESSION_UPDATE]
    # raw JSON as the server sent it, unknown kinds included; one line per update observed
    kinds = [u["sessionUpdate"] for u in updates]
    assert "plan" in kinds and kinds[-1] == "session_end"
    assert updates[-1] == {
        "sessionUpdate": "session_end",
        "stopReason": "end_turn",
        "message": "Done: edited app.txt\nand created new.txt.",
        "steps": 2,
    }
    updates_seen = (AgentMessageChunk, ToolCall, ToolCallUpdate, Plan, OtherUpdate, SessionEnd)
    assert len(kinds) == len([e for e in events if isinstance(e, updates_seen)])
    assert all(
        "id" not in line for line in lines[1:] if line["method"] in ("$/progress", SESSION_UPDATE)
    )


async def test_unwritable_events_file_is_a_client_error(ws: Path, tmp_path: Path) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        with pytest.raises(ClientError, match="cannot write the events file"):
            await run_task(options(ws, events_path=tmp_path / "no" / "such" / "x.jsonl"), "edit")
