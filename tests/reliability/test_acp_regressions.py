"""Defects the ACP fuzzing found, each pinned through a real ``cadenza acp`` process.

- A line of JSON nested too deep for the parser (100,000 times ``[``) raised ``RecursionError`` in
  the input check, which ended the agent's reading: every later request went unanswered.
- A response whose ``error`` is not an object (``"error": "x"``) made the SDK's receive loop
  fail (it calls ``.get`` on it): the agent stopped reading, the prompt waited forever.
- The SDK passes the keys of ``params._meta`` as the handler's keyword arguments, after the
  validated params: ``{"_meta": {"cwd": "/"}}`` replaced a checked ``cwd`` with a raw value
  (and ``client_capabilities`` in ``initialize`` gave an internal error).
"""

from __future__ import annotations

import json
import queue
from pathlib import Path
from typing import Any

from cadenza.acp.wire import repaired
from tests.acp.conftest import agent_env
from tests.reliability.rawacp import RawAcp, line
from tests.reliability.rawserver import NO_REPLY
from tests.support.fake_openai import FakeOpenAI, call, text

BOUND_S = 20.0
START_S = 120.0
"""The agent's first answer (Python starting on a loaded machine)."""
CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}


def _start(tmp_path: Path, base_url: str, answer: Any = None) -> tuple[RawAcp, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    agent = RawAcp(
        agent_env(base_url, tmp_path / "home"),
        cwd=workspace,
        stderr_path=tmp_path / "agent.log",
        answer=answer,
    )
    params = {"protocolVersion": 1, "clientCapabilities": CAPS}
    init = agent.request(0, "initialize", params, START_S)
    assert init is not None and "result" in init, init
    return agent, workspace


def test_json_nested_too_deep_is_a_parse_error_and_the_agent_reads_on(tmp_path: Path) -> None:
    agent, workspace = _start(tmp_path, "http://127.0.0.1:9")
    try:
        agent.send(b"[" * 100_000 + b"\n" + b'{"a":' * 5_000 + b"\n")
        listed = agent.request(1, "session/list", {"cwd": str(workspace)}, BOUND_S)
        assert listed is not None and "result" in listed, listed
        errors = [json.loads(body) for body in agent.raw_bodies if b'"id":null' in body]
        assert [e["error"]["code"] for e in errors] == [-32700, -32700]
        assert agent.alive()
    finally:
        agent.stop()


def test_a_malformed_error_answer_fails_the_request_and_the_agent_reads_on(
    tmp_path: Path,
) -> None:
    asked: queue.Queue[dict[str, Any]] = queue.Queue()

    def answer(request: dict[str, Any]) -> Any:
        asked.put(request)
        return NO_REPLY

    script = [call("write_file", {"path": "new.txt", "content": "x\n"}, "c1"), text("done")]
    with FakeOpenAI(script) as fake:
        agent, workspace = _start(tmp_path, fake.base_url, answer)
        try:
            new = agent.request(
                1, "session/new", {"cwd": str(workspace), "mcpServers": []}, BOUND_S
            )
            assert new is not None and "result" in new, new
            session = new["result"]["sessionId"]
            prompt = [{"type": "text", "text": "write"}]
            agent.send(
                line(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "session/prompt",
                        "params": {"sessionId": session, "prompt": prompt},
                    }
                )
            )
            while (request := asked.get(timeout=BOUND_S))["method"] != "fs/write_text_file":
                agent.reply({"jsonrpc": "2.0", "id": request["id"], "result": None})
            agent.send(line({"jsonrpc": "2.0", "id": request["id"], "error": "no"}))
            assert not agent.wait_for([2], BOUND_S), "the prompt never ended"
            assert agent.responses[2]["result"]["stopReason"] == "end_turn"
            failed = [
                n["params"]["update"]
                for n in agent.notifications
                if n.get("method") == "session/update"
                and n["params"]["update"].get("sessionUpdate") == "tool_call_update"
                and n["params"]["update"].get("status") == "failed"
            ]
            assert failed, "the write did not fail"
            assert not (workspace / "new.txt").exists()
        finally:
            agent.stop()


def test_meta_keys_shaped_like_parameters_are_dropped() -> None:
    meta = {"cwd": "/", "session_id": "x", "zed.dev/trace": 1, "x-a": 2, "traceId": 3}
    message = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"_meta": meta}}
    out = json.loads(repaired(json.dumps(message).encode()))
    assert out["params"]["_meta"] == {"zed.dev/trace": 1, "x-a": 2, "traceId": 3}
    plain = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "x", "params": {}}).encode()
    assert repaired(plain) is plain


def test_meta_cannot_replace_a_checked_parameter(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    agent = RawAcp(
        agent_env("http://127.0.0.1:9", tmp_path / "home"),
        cwd=workspace,
        stderr_path=tmp_path / "agent.log",
    )
    try:
        params = {
            "protocolVersion": 1,
            "clientCapabilities": CAPS,
            "_meta": {"client_capabilities": 5},
        }
        init = agent.request(0, "initialize", params, START_S)
        assert init is not None and "result" in init, init
        new = {"cwd": str(workspace), "mcpServers": [], "_meta": {"cwd": "/"}}
        created = agent.request(1, "session/new", new, BOUND_S)
        assert created is not None and "result" in created, created
        sid = created["result"]["sessionId"]
        state = tmp_path / "home" / "xdg_state_home" / "cadenza" / "sessions"
        record = json.loads((state / f"{sid}.unprompted.json").read_text(encoding="utf-8"))
        assert record["root"] == str(workspace.resolve())  # not "/"
        assert agent.alive()
    finally:
        agent.stop()
