"""Protocol fuzzing of the WebSocket transport: ``cadenza serve --ws`` with hostile frames.

The same hypothesis-made JSON-RPC traffic as ``test_protocol_fuzz`` (LSP over stdio), one
message per frame, text or binary at random; the LSP framings (headers before the body) come
as whole frames, i.e. bodies that are not JSON. After every batch each request of the batch
with a usable id must have been answered, a well-formed ``cadenza.listSessions`` must be
answered within ``BOUND_S``, the process must be alive and every frame it sent must be one
JSON-RPC message in a text frame. Then: more clients while one is connected are refused and
the first one is still served; abrupt disconnects (the TCP connection dropped mid-session,
mid-frame) end the server within ``BOUND_S``, leaving no process behind.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from websockets.exceptions import InvalidStatus

from tests.lsp.harness import server_env
from tests.reliability.knobs import scaled
from tests.reliability.rawserver import initialize_params
from tests.reliability.rawws import RawWs, free_port, open_ws, start_ws_server
from tests.reliability.test_protocol_fuzz import (
    CLIENT_CAPABILITIES,
    MODEL_SCRIPT,
    Ids,
    Msg,
    encode,
    fuzz_message,
    hostile_answer,
)
from tests.support.fake_openai import FakeOpenAI, call, text

TOTAL_MESSAGES = scaled(500, 100_000)
BATCH = scaled(50, 100)
BATCHES = TOTAL_MESSAGES // BATCH
BOUND_S = scaled(15, 60)
"""A hang: no answer within this (more in long mode, which runs for long on a loaded machine)."""
START_S = 120.0
"""The process's first answer (Python starting under load)."""


@dataclass
class Fuzzed:
    client: RawWs
    ids: Ids
    workspace: Path
    port: int
    sessions: list[str] = field(default_factory=list)
    sent: int = 0
    started: float = field(default_factory=time.monotonic)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    tmp = tmp_path_factory.mktemp("ws-fuzz")
    workspace = tmp / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("print('hi')\n")
    with FakeOpenAI(MODEL_SCRIPT * (TOTAL_MESSAGES // 20)) as fake:
        env = server_env(fake.base_url, tmp / "home")
        env["CADENZA_MODEL"] = "openai/test"
        port = free_port()
        proc = start_ws_server(env, port, tmp / "stderr.log")
        rng = random.Random(int(os.environ.get("CADENZA_RELIABILITY_SEED", "7")))
        try:
            client = RawWs(proc, port, answer=hostile_answer(rng))
        except BaseException:
            proc.kill()
            raise
        state = Fuzzed(client=client, ids=Ids(), workspace=workspace, port=port)
        init = client.request(
            state.ids.fresh(),
            "initialize",
            initialize_params(workspace, capabilities=CLIENT_CAPABILITIES),
            START_S,
        )
        assert init is not None and "result" in init, init
        client.send_frame(json.dumps({"jsonrpc": "2.0", "method": "initialized"}).encode())
        yield state
        if client.alive():
            client.kill()
    elapsed = time.monotonic() - state.started
    print(
        f"\nWebSocket fuzz: {state.sent} messages in {elapsed:.1f} s "
        f"({state.sent / elapsed:.0f} messages/s), {len(state.sessions)} sessions"
    )


def _progress(state: Fuzzed) -> None:
    """Messages so far (a long run is watched, and reported when cut short)."""
    elapsed = time.monotonic() - state.started
    line = f"{state.sent} messages, {elapsed:.0f} s, {len(state.sessions)} sessions\n"
    (state.workspace.parent / "progress.txt").write_text(line)


def assert_healthy(state: Fuzzed, expected: list[Any], sent: dict[Any, bytes]) -> None:
    client = state.client
    probe = state.ids.fresh()
    reply = client.request(
        probe, "workspace/executeCommand", {"command": "cadenza.listSessions"}, BOUND_S
    )
    assert reply is not None, f"no answer to listSessions within {BOUND_S} s"
    assert "result" in reply, reply
    missing = client.wait_for(expected, BOUND_S)
    shown = {str(m): sent.get(m, b"")[:600] for m in list(missing)[:3]}
    assert not missing, f"requests never answered: {shown}"
    for msg_id in expected:
        answer = client.responses[msg_id]
        assert answer.get("jsonrpc") == "2.0"
        assert ("result" in answer) != ("error" in answer), answer
        if "error" in answer:
            assert isinstance(answer["error"].get("code"), int), answer
            assert isinstance(answer["error"].get("message"), str), answer
        result = answer.get("result")
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            state.sessions.append(result["sessionId"])
    assert client.alive(), "the server died"
    assert not client.eof, "the server closed the connection"
    assert not client.frame_errors, client.frame_errors[:5]


@settings(
    max_examples=BATCHES,
    deadline=None,
    database=None,
    phases=[Phase.generate],  # shrinking against a live server takes minutes
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)
@given(batch=st.lists(st.tuples(fuzz_message, st.booleans()), min_size=BATCH, max_size=BATCH))
def test_ws_fuzzed_frames_are_answered(fuzzed: Fuzzed, batch: list[tuple[Msg, bool]]) -> None:
    expected = []
    sent: dict[Any, bytes] = {}
    for msg, binary in batch:
        data, msg_id = encode(msg, fuzzed.ids, fuzzed.sessions)
        if msg.framing in ("ok", "extra-headers"):
            data = data.partition(b"\r\n\r\n")[2]  # the body alone: one message per frame
        else:
            msg_id = None  # headers and all in one frame: not JSON
        fuzzed.client.send_frame(data, binary=binary)
        if msg_id is not None:
            expected.append(msg_id)
            sent[msg_id] = data
    fuzzed.sent += len(batch)
    _progress(fuzzed)
    assert_healthy(fuzzed, expected, sent)


def test_ws_garbage_gets_error_answers(fuzzed: Fuzzed) -> None:
    """Frames that are not JSON, or not JSON-RPC, are answered (id null), text or binary."""
    client = fuzzed.client
    before = client.null_id_errors
    frames = [b"{", b"\xff\xfe", b"[" * 100_000, b"[]", b"5"]
    for data in frames:
        client.send_frame(data, binary=False)
        client.send_frame(data, binary=True)
    fuzzed.sent += 2 * len(frames)
    deadline = time.monotonic() + BOUND_S
    while client.null_id_errors < before + 2 * len(frames) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client.null_id_errors >= before + 2 * len(frames)
    assert_healthy(fuzzed, [], {})


def test_ws_more_clients_are_refused_while_one_is_connected(fuzzed: Fuzzed) -> None:
    refused: list[int] = []
    errors: list[BaseException] = []

    def knock() -> None:
        try:
            extra = open_ws(fuzzed.port, BOUND_S)
        except InvalidStatus as exc:
            refused.append(exc.response.status_code)
        except BaseException as exc:
            errors.append(exc)
        else:
            extra.close()
            errors.append(AssertionError("a second client was accepted"))

    knockers = [threading.Thread(target=knock) for _ in range(scaled(20, 200))]
    for thread in knockers:
        thread.start()
    for thread in knockers:
        thread.join(BOUND_S * 2)
    assert not errors, errors[:3]
    assert refused == [409] * len(knockers)
    assert_healthy(fuzzed, [], {})


def test_ws_every_started_session_ended_then_exit(fuzzed: Fuzzed) -> None:
    client = fuzzed.client
    deadline = time.monotonic() + 60
    ended: set[str] = set()
    while time.monotonic() < deadline:
        ended = {
            n["params"]["sessionId"]
            for n in list(client.notifications)
            if n.get("method") == "cadenza/sessionUpdate"
            and n["params"]["update"].get("sessionUpdate") == "session_end"
        }
        if ended >= set(fuzzed.sessions):
            break
        time.sleep(0.1)
    assert set(fuzzed.sessions) <= ended, sorted(set(fuzzed.sessions) - ended)[:5]
    answer = client.request(fuzzed.ids.fresh(), "shutdown", None, BOUND_S)
    assert answer is not None and answer.get("result") is None, answer
    client.send_frame(json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode())
    assert client.proc.wait(BOUND_S) == 0


SLOW_SCRIPT = [call("run_command", {"command": "sleep 600"}, "slow"), text("done")]


@pytest.mark.parametrize("how", ["dropped", "mid-frame", "close-frame"])
def test_ws_abrupt_disconnects_end_the_server(tmp_path: Path, how: str) -> None:
    """A client gone mid-session (a command running): the server and the command end."""
    for round_ in range(scaled(1, 10)):
        with FakeOpenAI(SLOW_SCRIPT) as fake:
            env = server_env(fake.base_url, tmp_path / f"home{round_}")
            env["CADENZA_MODEL"] = "openai/test"
            workspace = tmp_path / f"ws{round_}"
            workspace.mkdir()
            port = free_port()
            proc = start_ws_server(env, port)
            try:
                client = RawWs(proc, port, answer=lambda request: {"title": "Allow once"})
                caps = {"workspace": {"applyEdit": True}}
                init = client.request(
                    1, "initialize", initialize_params(workspace, capabilities=caps), START_S
                )
                assert init is not None and "result" in init, init
                started = client.request(
                    2,
                    "workspace/executeCommand",
                    {"command": "cadenza.startSession", "arguments": [{"task": "sleep"}]},
                    BOUND_S,
                )
                assert started is not None and "result" in started, started
                _wait_for_command(workspace)
                if how == "mid-frame":  # a frame header announcing more than is sent
                    client.ws.socket.sendall(b"\x81\xfe\x10\x00" + b'{"jsonrpc":')
                if how == "close-frame":
                    client.close_stdin()
                else:
                    client.cut()
                assert proc.wait(BOUND_S) in (0, 1)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            _assert_no_sleep_left(workspace)


def _wait_for_command(workspace: Path) -> None:
    """Until the session's ``sleep`` runs (its process has the workspace as cwd)."""
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        if _sleepers(workspace):
            return
        time.sleep(0.05)
    raise AssertionError("the session's command never started")


def _sleepers(workspace: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (
                os.readlink(entry / "cwd") == str(workspace)
                and b"sleep" in (entry / "cmdline").read_bytes()
            ):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _assert_no_sleep_left(workspace: Path) -> None:
    deadline = time.monotonic() + 5
    while _sleepers(workspace) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _sleepers(workspace)
    for pid in left:
        subprocess.run(["kill", "-9", str(pid)], check=False)
    assert not left, f"commands left running after the client left: {left}"
