"""``cadenza acp`` driven by the SDK's client side over stdio, against the scripted model."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.acp.conftest import WAIT_S, Start, agent_env
from tests.support.fake_openai import FakeOpenAI, Reply, assert_tool_calls_answered, call, text

QUIET_S = 0.5
"""How long to watch for late updates after a response."""


def edit_call(path: str, old: str, new: str) -> dict[str, str]:
    return {"path": path, "old_string": old, "new_string": new}


async def wait_for_requests(fake: FakeOpenAI, count: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while len(fake.requests) < count:
        assert time.monotonic() < deadline, f"the model got {len(fake.requests)} requests"
        await asyncio.sleep(0.02)


def kinds(updates: list[dict]) -> list[str]:
    return [u["sessionUpdate"] for u in updates]


async def test_initialize_negotiates_and_new_session_lists_modes(
    start: Start, workspace: Path
) -> None:
    agent = await start()
    init = next(m for m in agent.peer.wire if m["dir"] == "in" and m.get("id") == 0)["result"]
    assert init["agentCapabilities"]["loadSession"] is True
    assert init["agentCapabilities"]["sessionCapabilities"] == {"list": {}}
    assert init["agentCapabilities"]["promptCapabilities"] == {
        "image": False,
        "audio": False,
        "embeddedContext": False,
    }
    assert init["agentInfo"]["name"] == "cadenza"
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert session.modes is not None
    modes = [m.id for m in session.modes.available_modes]
    assert modes[0] == "default"
    assert "plan-implement-review" in modes
    assert session.modes.current_mode_id == "default"
    with pytest.raises(RequestError, match="cwd must be an absolute path"):
        await agent.conn.new_session(cwd="relative/dir", mcp_servers=[])
    with pytest.raises(RequestError, match="unknown session"):
        await agent.conn.prompt(session_id="nope", prompt=[text_block("hi")])


async def test_read_edit_through_client_fs_then_follow_up(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    fake.script(
        call("read_file", {"path": "a.py"}, "c1"),
        call("edit_file", edit_call("a.py", "y = 2", "y = 20"), "c2"),
        text("I changed y to 20."),
        text("Nothing else to do."),
    )
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("set y to 20 in a.py")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    path = str(workspace / "a.py")
    assert agent.peer.writes == [(path, "x = 1\ny = 20\n")]
    assert (workspace / "a.py").read_text(encoding="utf-8") == "x = 1\ny = 20\n"
    updates = agent.peer.updates(sid)
    starts = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert [(u["toolCallId"], u["kind"], u["status"]) for u in starts] == [
        ("c1", "read", "in_progress"),
        ("c2", "edit", "in_progress"),
    ]
    assert starts[0]["rawInput"] == {"path": "a.py"}
    progress = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    diff = {"type": "diff", "path": path, "oldText": "x = 1\ny = 2\n", "newText": "x = 1\ny = 20\n"}
    edit_updates = [u for u in progress if u["toolCallId"] == "c2"]
    # The diff while the call runs, then again with the result (content is replaced).
    assert [u["content"][0] for u in edit_updates] == [diff, diff]
    assert [u.get("status") for u in edit_updates] == [None, "completed"]
    assert edit_updates[-1]["content"][1]["content"]["text"].startswith("edited a.py")
    done = {u["toolCallId"]: u["status"] for u in progress if "status" in u}
    assert done == {"c1": "completed", "c2": "completed"}
    read_result = next(u for u in progress if u["toolCallId"] == "c1" and "status" in u)
    assert "x = 1" in read_result["content"][0]["content"]["text"]
    messages = [
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert messages == ["I changed y to 20."]  # streamed once, not repeated as the final message
    assert updates[-1]["sessionUpdate"] == "usage_update"
    assert (
        agent.peer.updates_after(agent.peer.response_index(agent.peer.request_id("session/prompt")))
        == []
    )

    # A later prompt resumes the same conversation.
    again = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("anything else?")]), WAIT_S
    )
    assert again.stop_reason == "end_turn"
    last = fake.requests[-1]
    contents = [m.get("content") for m in last["messages"]]
    assert "set y to 20 in a.py" in contents
    assert "anything else?" in contents
    assert_tool_calls_answered(last)
    agent.peer.show(sid)

    # The session's checkpoint lets `cadenza undo` put the file back.
    undo = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cadenza",
        "undo",
        sid,
        "--workspace",
        str(workspace),
        env=agent_env(fake.base_url, workspace.parent / "home"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(undo.communicate(), WAIT_S)
    assert undo.returncode == 0, output.decode()
    assert (workspace / "a.py").read_text(encoding="utf-8") == "x = 1\ny = 2\n"


async def test_edit_on_disk_without_client_write_capability(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "b.py").write_text("z = 3\n", encoding="utf-8")
    fake.script(
        call("read_file", {"path": "b.py"}, "c1"),
        call("edit_file", edit_call("b.py", "z = 3", "z = 30"), "c2"),
        text("done"),
    )
    agent = await start(write=False)
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("edit b")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    assert agent.peer.writes == []
    assert (workspace / "b.py").read_text(encoding="utf-8") == "z = 30\n"


@pytest.mark.parametrize(("answer", "ran"), [("allow_once", True), ("reject_once", False)])
async def test_gated_run_command_asks_permission(
    start: Start, fake: FakeOpenAI, workspace: Path, answer: str, ran: bool
) -> None:
    fake.script(call("run_command", {"command": "echo hi > out.txt"}, "c1"), text("finished"))
    agent = await start(answer=answer)
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("run it")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    [(tool_call, options)] = agent.peer.permissions
    assert tool_call.tool_call_id == "c1"
    assert tool_call.kind == "execute"
    assert tool_call.raw_input == {"command": "echo hi > out.txt"}
    assert [(o.option_id, o.kind) for o in options] == [
        ("allow_once", "allow_once"),
        ("allow_always", "allow_always"),
        ("reject_once", "reject_once"),
        ("reject_always", "reject_always"),
    ]
    assert (workspace / "out.txt").exists() == ran
    # The tool_call update came before the permission request on the wire.
    wire = agent.peer.wire
    asked = next(i for i, m in enumerate(wire) if m.get("method") == "session/request_permission")
    started = next(
        i
        for i, m in enumerate(wire)
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "tool_call"
    )
    assert started < asked
    finished = [u for u in agent.peer.updates(sid) if u["sessionUpdate"] == "tool_call_update"]
    assert finished[-1]["status"] == ("completed" if ran else "failed")
    # pending while the person decides; in_progress once allowed.
    statuses = [u.get("status") for u in agent.peer.updates(sid) if "toolCallId" in u]
    # The file the command created shows as the call's diff (no status), as an edit's does.
    assert statuses == (
        ["pending", "in_progress", None, "completed"] if ran else ["pending", "failed"]
    )
    if ran:
        [diff] = [c for c in finished[-1]["content"] if c["type"] == "diff"]
        assert (Path(diff["path"]).name, diff.get("oldText"), diff["newText"]) == (
            "out.txt",
            None,
            "hi\n",
        )
    tool_message = next(m for m in fake.requests[-1]["messages"] if m["role"] == "tool")
    if not ran:
        assert "rejected" in tool_message["content"]


async def test_cancel_during_slow_model_reply(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(Reply(content="too late", delay_s=30))
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    prompt = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("slow")]))
    await wait_for_requests(fake, 1)
    began = time.monotonic()
    await agent.conn.cancel(session_id=sid)
    response = await asyncio.wait_for(prompt, WAIT_S)
    assert response.stop_reason == "cancelled"
    assert time.monotonic() - began < 10
    await asyncio.sleep(QUIET_S)
    index = agent.peer.response_index(agent.peer.request_id("session/prompt"))
    assert agent.peer.updates_after(index) == []
    assert "too late" not in str(agent.peer.updates(sid))
    assert agent.peer.updates(sid)[-1]["sessionUpdate"] == "usage_update"


async def test_cancel_while_permission_pending(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(call("run_command", {"command": "echo hi > out.txt"}, "c1"))
    agent = await start(answer=None)
    agent.peer.hold_permission = asyncio.Event()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    prompt = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("run")]))
    await asyncio.wait_for(agent.peer.permission_asked.wait(), WAIT_S)
    await agent.conn.cancel(session_id=sid)
    agent.peer.hold_permission.set()  # the client answers the pending request "cancelled"
    response = await asyncio.wait_for(prompt, WAIT_S)
    assert response.stop_reason == "cancelled"
    assert not (workspace / "out.txt").exists()
    calls = [u for u in agent.peer.updates(sid) if u["sessionUpdate"].startswith("tool_call")]
    assert calls[-1] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "failed",
    }
    await asyncio.sleep(QUIET_S)
    index = agent.peer.response_index(agent.peer.request_id("session/prompt"))
    assert agent.peer.updates_after(index) == []


async def test_cancel_then_prompt_at_once(start: Start, fake: FakeOpenAI, workspace: Path) -> None:
    fake.script(Reply(content="too late", delay_s=30), text("second answer"))
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    first = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("one")]))
    await wait_for_requests(fake, 1)
    await agent.conn.cancel(session_id=sid)
    second = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("two")]))
    assert (await asyncio.wait_for(first, WAIT_S)).stop_reason == "cancelled"
    assert (await asyncio.wait_for(second, WAIT_S)).stop_reason == "end_turn"
    await asyncio.sleep(QUIET_S)
    peer = agent.peer
    first_done = peer.response_index(peer.request_id("session/prompt", 0))
    second_done = peer.response_index(peer.request_id("session/prompt", 1))
    assert first_done < second_done
    assert peer.updates_after(second_done) == []
    between = [m["params"]["update"] for m in peer.updates_after(first_done)]
    assert [
        u["content"]["text"] for u in between if u["sessionUpdate"] == "agent_message_chunk"
    ] == ["second answer"]
    assert "too late" not in str(peer.updates(sid))
    contents = [m.get("content") for m in fake.requests[-1]["messages"]]
    assert "one" in contents and "two" in contents


async def test_load_replays_history_after_restart(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n", encoding="utf-8")
    fake.script(
        call("read_file", {"path": "a.py"}, "c1"),
        call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c2"),
        text("x is 2 now."),
    )
    first = await start()
    session = await first.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    response = await asyncio.wait_for(
        first.conn.prompt(session_id=sid, prompt=[text_block("make x 2")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    live = first.peer.updates(sid)
    await first.conn.close()
    first.process.stdin.close()  # type: ignore[union-attr]
    await asyncio.wait_for(first.process.wait(), WAIT_S)

    second = await start()
    listed = await second.conn.list_sessions(cwd=str(workspace))
    assert [(i.session_id, i.title, i.cwd) for i in listed.sessions] == [
        (sid, "make x 2", str(workspace.resolve()))
    ]
    assert (await second.conn.list_sessions(cwd=str(workspace.parent))).sessions == []
    loaded = await asyncio.wait_for(
        second.conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[]), WAIT_S
    )
    assert loaded.modes is not None and loaded.modes.current_mode_id == "default"
    peer = second.peer
    done = peer.response_index(peer.request_id("session/load"))
    replay = [
        m["params"]["update"] for m in peer.wire[:done] if m.get("method") == "session/update"
    ]
    # Only the slash-command list may follow the response (sent once the session is answered).
    later = [m["params"]["update"]["sessionUpdate"] for m in peer.updates_after(done)]
    assert set(later) <= {"available_commands_update"}, later
    assert replay[0] == {
        "sessionUpdate": "user_message_chunk",
        "content": {"type": "text", "text": "make x 2"},
    }
    assert [u for u in replay if u["sessionUpdate"] == "tool_call"] == [
        u for u in live if u["sessionUpdate"] == "tool_call"
    ]
    assert [u for u in replay if u["sessionUpdate"] == "tool_call_update"] == [
        u for u in live if u["sessionUpdate"] == "tool_call_update"
    ]
    # The answer, then the done checks its edit ran, as thoughts (the same as live).
    [answer] = [u for u in replay if u["sessionUpdate"] == "agent_message_chunk"]
    assert answer["content"]["text"] == "x is 2 now."
    thoughts = [u for u in replay if u["sessionUpdate"] == "agent_thought_chunk"]
    assert thoughts == [u for u in live if u["sessionUpdate"] == "agent_thought_chunk"]
    assert "Check changed passed" in [t["content"]["text"] for t in thoughts]
    assert replay.index(answer) < replay.index(thoughts[0])

    # The loaded session goes on in the same conversation.
    fake.script(text("still 2"))
    again = await asyncio.wait_for(
        second.conn.prompt(session_id=sid, prompt=[text_block("and now?")]), WAIT_S
    )
    assert again.stop_reason == "end_turn"
    contents = [m.get("content") for m in fake.requests[-1]["messages"]]
    assert "make x 2" in contents and "and now?" in contents
    assert_tool_calls_answered(fake.requests[-1])
    with pytest.raises(RequestError, match="unknown session"):
        await second.conn.load_session(cwd=str(workspace), session_id="nosuch", mcp_servers=[])


async def test_set_mode_picks_the_workflow(start: Start, fake: FakeOpenAI, workspace: Path) -> None:
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    with pytest.raises(RequestError, match="unknown workflow"):
        await agent.conn.set_session_mode(session_id=sid, mode_id="nosuch")
    await agent.conn.set_session_mode(session_id=sid, mode_id="plan-implement-review")
    fake.script(text("a plan"), text("implemented"), text("reviewed"))
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("do it")]), WAIT_S
    )
    assert response.stop_reason in ("end_turn", "max_turn_requests")
    first = fake.requests[0]["messages"]
    assert any("Movement 'plan' starts" in (m.get("content") or "") for m in first)
    plans = [
        [(e["content"].split(":")[0], e["status"]) for e in u["entries"]]
        for u in agent.peer.updates(sid)
        if u["sessionUpdate"] == "plan"
    ]
    assert plans[0] == [("plan", "in_progress"), ("implement", "pending"), ("review", "pending")]
    assert plans[1] == [("plan", "completed"), ("implement", "in_progress"), ("review", "pending")]
    if response.stop_reason == "end_turn":
        assert plans[-1] == [(name, "completed") for name in ("plan", "implement", "review")]


async def test_provider_error_ends_the_turn_with_its_text(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(Reply(status=400), text("recovered"))
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("hi")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    said = [
        u["content"]["text"]
        for u in agent.peer.updates(sid)
        if u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert len(said) == 1 and said[0].startswith("Error: ") and "400" in said[0]
    # The session stays usable.
    again = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("again")]), WAIT_S
    )
    assert again.stop_reason == "end_turn"


async def test_question_then_answer_in_the_next_prompt(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(
        call(
            "complete",
            {
                "status": "needs_user_input",
                "summary": "Two files match.",
                "missing_info": "Which file should I edit?",
                "why_no_default": "a.py and b.py both define main",
            },
            "c1",
        ),
        text("Editing b.py then."),
    )
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    asked = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("fix main")]), WAIT_S
    )
    assert asked.stop_reason == "end_turn"
    said = [
        u["content"]["text"]
        for u in agent.peer.updates(sid)
        if u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert said == ["Two files match.\n\nWhich file should I edit?"]
    control = next(u for u in agent.peer.updates(sid) if u["sessionUpdate"] == "tool_call")
    assert control["kind"] == "think"
    answered = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("b.py")]), WAIT_S
    )
    assert answered.stop_reason == "end_turn"
    last_user = [m for m in fake.requests[-1]["messages"] if m["role"] == "user"][-1]
    assert last_user["content"] == (
        "The person answered your question (Which file should I edit?): b.py"
    )
    # The replay shows the person's text, not the engine's wording around it.
    before = len(agent.peer.updates(sid))
    await asyncio.wait_for(
        agent.conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[]), WAIT_S
    )
    replayed = agent.peer.updates(sid)[before:]
    person = [u["content"]["text"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert person == ["fix main", "b.py"]


@pytest.mark.parametrize("raw", ["garbage", {"outcome": {"outcome": "weird"}}])
async def test_malformed_permission_answer_is_dismissed(
    start: Start, fake: FakeOpenAI, workspace: Path, raw: object
) -> None:
    fake.script(call("run_command", {"command": "echo hi > out.txt"}, "c1"), text("went on"))
    agent = await start()
    agent.peer.raw_permission = raw
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("run it")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    assert not (workspace / "out.txt").exists()
    assert len(fake.requests) == 2  # the turn went on after the dismissal
    tool_message = next(m for m in fake.requests[-1]["messages"] if m["role"] == "tool")
    assert "ValidationError" not in tool_message["content"]
    assert "validation error" not in str(agent.peer.updates(sid))
    finished = [u for u in agent.peer.updates(sid) if u["sessionUpdate"] == "tool_call_update"]
    assert finished[-1]["status"] == "failed"


def _tool_results(fake: FakeOpenAI) -> dict[str, str]:
    return {
        m["tool_call_id"]: m["content"]
        for m in fake.requests[-1]["messages"]
        if m["role"] == "tool"
    }


async def test_consecutive_edits_chain_in_an_unsaved_buffer(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    fake.script(
        call("read_file", {"path": "a.txt"}, "c1"),
        call("edit_file", edit_call("a.txt", "one", "ONE"), "c2"),
        call("edit_file", edit_call("a.txt", "two", "TWO"), "c3"),
        text("done"),
    )
    agent = await start()
    agent.peer.buffers = {}  # the editor keeps the writes unsaved
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("upper")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    path = str(workspace / "a.txt")
    assert agent.peer.writes == [(path, "ONE\ntwo\n"), (path, "ONE\nTWO\n")]
    assert agent.peer.buffers == {path: "ONE\nTWO\n"}
    assert (workspace / "a.txt").read_text(encoding="utf-8") == "one\ntwo\n"  # not saved
    assert agent.peer.reads == [path, path, path]  # the editor's text: the read, each edit


async def test_read_file_sees_the_unsaved_buffer_and_the_edit_applies_on_it(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    fake.script(
        call("read_file", {"path": "a.txt"}, "c1"),
        call("edit_file", edit_call("a.txt", "one", "ONE"), "c2"),
        text("done"),
    )
    agent = await start()
    path = str(workspace / "a.txt")
    agent.peer.buffers = {path: "one\ntwo\nmine\n"}  # the person's unsaved change
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("upper")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    results = _tool_results(fake)
    assert "mine" in results["c1"]  # fs/read_text_file, not the disk
    assert agent.peer.writes == [(path, "ONE\ntwo\nmine\n")]  # applied at once, line kept
    assert agent.peer.reads == [path, path]


async def test_edit_refused_over_unsaved_changes_then_redone_on_them(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    fake.script(
        call("read_file", {"path": "a.txt"}, "c1"),
        call("edit_file", edit_call("a.txt", "one", "ONE"), "c2"),
        call("read_file", {"path": "a.txt"}, "c3"),
        # (the very same edit again would be refused as a repeat by the engine's stuck guard)
        call("edit_file", edit_call("a.txt", "one\ntwo", "ONE\ntwo"), "c4"),
        text("done"),
    )
    agent = await start()
    path = str(workspace / "a.txt")
    # The person types after the model's read, before its edit (an unsaved change).
    agent.peer.change_after_read = (1, path, "one\ntwo\nmine\n")
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("upper")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    assert agent.peer.writes == [(path, "ONE\ntwo\nmine\n")]  # the person's line kept
    results = _tool_results(fake)
    assert "editor" in results["c2"] and "nothing was written" in results["c2"]
    assert "mine" in results["c3"]  # the re-read sees the editor's text
    assert "mine" not in results["c1"]


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status  # a zombie waits for its reaper: it is dead


async def test_sigterm_kills_the_running_command(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(call("run_command", {"command": "echo $$ > pid.txt; exec sleep 60"}, "c1"))
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    prompt = asyncio.create_task(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("run")])
    )
    pid_file = workspace / "pid.txt"
    deadline = time.monotonic() + WAIT_S
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline, "the command did not start"
        await asyncio.sleep(0.05)
    pid = int(pid_file.read_text())
    assert _alive(pid)
    agent.process.send_signal(signal.SIGTERM)
    rc = await asyncio.wait_for(agent.process.wait(), WAIT_S)
    assert rc == 143
    deadline = time.monotonic() + 5
    while _alive(pid):
        assert time.monotonic() < deadline, "the command outlived the agent"
        await asyncio.sleep(0.05)
    prompt.cancel()
    await asyncio.gather(prompt, return_exceptions=True)


async def test_write_without_answer_times_out_as_a_failed_edit(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\n", encoding="utf-8")
    fake.script(
        call("read_file", {"path": "a.txt"}, "c1"),
        call("edit_file", edit_call("a.txt", "one", "ONE"), "c2"),
        text("gave up"),
    )
    agent = await start(extra_env={"CADENZA_ACP_FS_TIMEOUT_S": "1"})
    agent.peer.hang_writes = True
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    began = time.monotonic()
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("upper")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    assert time.monotonic() - began < 10
    assert "did not answer the write within 1 s" in _tool_results(fake)["c2"]
    finished = [
        u
        for u in agent.peer.updates(session.session_id)
        if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == "c2" and "status" in u
    ]
    assert finished[-1]["status"] == "failed"


async def test_load_checks_cwd(start: Start, fake: FakeOpenAI, workspace: Path) -> None:
    fake.script(text("hello"))
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=[text_block("hi")]), WAIT_S)
    other = workspace.parent / "other"
    other.mkdir()
    for cwd, expected in [
        (str(workspace.parent / "missing"), "existing folder"),
        ("relative", "absolute path"),
        (str(other), str(workspace.resolve())),
    ]:
        with pytest.raises(RequestError) as raised:
            await asyncio.wait_for(
                agent.conn.load_session(cwd=cwd, session_id=sid, mcp_servers=[]), WAIT_S
            )
        assert raised.value.code == -32602
        assert expected in str(raised.value), cwd
    loaded = await asyncio.wait_for(
        agent.conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[]), WAIT_S
    )
    assert loaded.modes is not None


async def test_refused_workspace_config_keys_are_logged(start: Start, workspace: Path) -> None:
    (workspace / "cadenza.toml").write_text("[permissions]\ngated = []\n", encoding="utf-8")
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    log_text = ""
    deadline = time.monotonic() + WAIT_S
    while "ignored permissions" not in log_text:
        assert time.monotonic() < deadline, log_text
        await asyncio.sleep(0.05)
        log_text = "".join(p.read_text() for p in workspace.parent.glob("agent*.log"))
    assert session.session_id in log_text
