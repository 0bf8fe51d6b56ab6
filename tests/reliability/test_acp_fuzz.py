"""Protocol fuzzing of the ACP face: hypothesis-made lines against ONE ``cadenza acp``.

As ``test_protocol_fuzz`` does for LSP over stdio: lines go to the agent's stdin in batches
(many messages per write): malformed JSON, lines that are not UTF-8, wrong types, deep and
huge payloads, unknown methods, valid-looking ``session/*`` calls on real and made-up
sessions (prompts run a scripted model that writes, runs, asks, edits and deletes; every
request of the agent gets a hostile answer), notifications sent with ids, responses to
requests never made. After every batch each request of the batch (a string ``method`` and a
usable id) must have been answered, a well-formed ``session/new`` must be answered within
``BOUND_S``, the process must be alive and everything it wrote must be one JSON object a line.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.acp.conftest import agent_env
from tests.reliability.knobs import scaled
from tests.reliability.rawacp import RawAcp, line
from tests.reliability.rawserver import ErrorAnswer
from tests.reliability.test_protocol_fuzz import (
    ID_SLOT,
    MODEL_SCRIPT,
    Ids,
    hostile,
    json_scalar,
    json_value,
    tricky_text,
)
from tests.support.fake_openai import FakeOpenAI

TOTAL_MESSAGES = scaled(500, 100_000)
BATCH = scaled(50, 100)
BATCHES = TOTAL_MESSAGES // BATCH
BOUND_S = scaled(20, 60)
"""A hang: no answer within this (more in long mode, which runs for long on a loaded machine)."""
START_S = 120.0
"""The process's first answer (Python starting under load)."""
WORKSPACE = "WORKSPACE"
"""Replaced by the fuzzed workspace's absolute path."""
SESSION = "SESSION"
"""Replaced by a real session's id (the newest one)."""

# --- strategies ---------------------------------------------------------------------------

cwd = st.one_of(
    st.just(WORKSPACE),
    st.just(WORKSPACE),
    st.sampled_from(["WORKSPACE/missing", "ws", ".", "", "relative/x", "/nonexistent/folder"]),
    tricky_text.filter(lambda s: not s.startswith("/")),
    json_value.filter(lambda v: not (isinstance(v, str) and v.startswith("/"))),
)
"""Never a real folder outside the workspace: prompts there would edit real files."""
session_id = st.one_of(st.just(SESSION), st.just(SESSION), tricky_text, json_value)
content_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(tricky_text, hostile)}),
    st.fixed_dictionaries(
        {"type": st.just("resource_link"), "uri": tricky_text, "name": tricky_text}
    ),
    st.fixed_dictionaries({"type": st.just("image"), "data": tricky_text, "mimeType": hostile}),
    st.fixed_dictionaries({"type": hostile}),
    hostile,
)
prompt = st.one_of(
    st.just([{"type": "text", "text": "do the thing"}]),
    st.lists(content_block, max_size=3),
    st.sampled_from([[{"type": "text", "text": "x" * 1_000_000}]]),
    hostile,
)
client_caps = st.one_of(
    st.just({"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}),
    st.fixed_dictionaries(
        {}, optional={"fs": hostile, "terminal": hostile, "elicitation": hostile}
    ),
    hostile,
)


safe_meta = st.one_of(
    st.dictionaries(st.text(max_size=10).map(lambda k: "x-" + k), json_value, max_size=3),
    json_scalar,
)
"""The SDK spreads ``_meta``'s keys into the handler's arguments (``{"_meta": {"cwd": "/"}}``
would override ``cwd``): keys here never name a parameter (see docs/lab/reliability.md §1b)."""


def _params(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Params: the fields (each maybe missing), an unknown key maybe; or anything at all."""
    shaped = st.fixed_dictionaries({}, optional={**fields, "_meta": safe_meta, "extra": json_value})
    return st.one_of(shaped, shaped, shaped, hostile)


METHOD_PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "initialize": _params(
        {"protocolVersion": st.one_of(st.just(1), hostile), "clientCapabilities": client_caps}
    ),
    "authenticate": _params({"methodId": hostile}),
    "session/new": _params({"cwd": cwd, "mcpServers": st.one_of(st.just([]), hostile)}),
    "session/load": _params(
        {"cwd": cwd, "sessionId": session_id, "mcpServers": st.one_of(st.just([]), hostile)}
    ),
    "session/list": _params({"cwd": cwd, "cursor": hostile}),
    "session/prompt": _params({"sessionId": session_id, "prompt": prompt}),
    "session/cancel": _params({"sessionId": session_id}),
    "session/set_mode": _params(
        {
            "sessionId": session_id,
            "modeId": st.one_of(st.sampled_from(["default", "plan-implement-review"]), hostile),
        }
    ),
    "session/set_model": _params({"sessionId": session_id, "modelId": hostile}),
    "session/set_config_option": _params(
        {"sessionId": session_id, "configId": hostile, "value": hostile}
    ),
}
REAL_PROMPT = {"sessionId": SESSION, "prompt": [{"type": "text", "text": "go"}]}
REAL_NEW = {"cwd": WORKSPACE, "mcpServers": []}


@dataclass
class Line:
    """One generated line: ``payload`` (JSON, slots filled at writing) or raw ``body``."""

    payload: Any = None
    body: bytes | None = None
    expect_answer: bool = False


@st.composite
def request_like(draw: st.DrawFn) -> Line:
    """A request, a notification, or a notification sent with an id."""
    kind = draw(st.sampled_from(["known"] * 6 + ["real"] * 2 + ["unknown", "client-method"]))
    payload: dict[str, Any] = {"jsonrpc": "2.0"}
    if kind == "known":
        method = draw(st.sampled_from(sorted(METHOD_PARAMS)))
        payload["method"] = method
        payload["params"] = draw(METHOD_PARAMS[method])
    elif kind == "real":  # well-formed: the sessions the fuzzing drives
        method, params = draw(
            st.sampled_from(
                [("session/new", REAL_NEW), ("session/prompt", REAL_PROMPT)] * 3
                + [
                    ("session/load", {**REAL_NEW, "sessionId": SESSION}),
                    ("session/cancel", {"sessionId": SESSION}),
                ]
            )
        )
        payload["method"] = method
        payload["params"] = params
    elif kind == "unknown":
        payload["method"] = draw(st.one_of(tricky_text, st.just("_cadenza/unknown")))
        if draw(st.booleans()):
            payload["params"] = draw(hostile)
    else:  # methods the client serves, sent to the agent
        payload["method"] = draw(
            st.sampled_from(["fs/read_text_file", "session/update", "terminal/create"])
        )
        payload["params"] = draw(hostile)
    if draw(st.booleans()) and "params" in payload:
        payload.pop("params")
    if draw(st.integers(0, 9)) > 1:  # mostly requests; session/cancel with an id too
        payload["id"] = ID_SLOT
    if draw(st.integers(0, 9)) == 0:
        payload["jsonrpc"] = draw(hostile)
    return Line(payload=payload, expect_answer="id" in payload)


@st.composite
def response_to_nothing(draw: st.DrawFn) -> Line:
    """A response to a request the agent never made (or one it made, answered twice)."""
    payload: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(st.one_of(st.integers(0, 50), hostile))}
    shape = draw(st.sampled_from(["result", "error", "both", "neither"]))
    if shape in ("result", "both"):
        payload["result"] = draw(hostile)
    if shape in ("error", "both"):
        payload["error"] = draw(
            st.one_of(
                st.fixed_dictionaries({"code": st.integers(), "message": st.text(max_size=20)}),
                hostile,
            )
        )
    if not isinstance(payload["id"], str | int) or isinstance(payload["id"], bool):
        payload["id"] = draw(st.integers(0, 50))
    return Line(payload=payload)


@st.composite
def garbage(draw: st.DrawFn) -> Line:
    """A line that is not a JSON-RPC message (or not JSON, or not UTF-8)."""
    body = draw(
        st.one_of(
            json_value.map(lambda v: json.dumps(v).encode()),
            st.lists(json_scalar, max_size=3).map(lambda v: json.dumps(v).encode()),
            st.binary(max_size=200).filter(lambda b: b"\n" not in b),
            st.sampled_from(
                [
                    b"{",
                    b"\xff\xfe\xfd",
                    b'{"jsonrpc": "2.0", "id": 1, "method": "x\xff"}',
                    b"[" * 100_000,
                    b'{"a":' * 5_000,
                    b'{"jsonrpc":"2.0","id":{"a":1},"method":"session/list"}',
                    b'{"jsonrpc":"2.0","id":true,"method":"session/list"}',
                    b'{"jsonrpc":"2.0","id":5,"method":null}',
                    b'{"jsonrpc":"2.0","id":5,"error":"not an object"}',
                    b"null",
                    b"[]",
                    b"\r",
                    b"x" * 3_000_000,
                ]
            ),
        )
    )
    return Line(body=body)


fuzz_line = st.one_of(
    request_like(),
    request_like(),
    request_like(),
    request_like(),
    response_to_nothing(),
    garbage(),
)


# --- writing a batch ------------------------------------------------------------------------


def _fill(value: Any, fresh_id: int | str, sessions: list[str], workspace: Path) -> Any:
    if value is ID_SLOT:
        return fresh_id
    if value == SESSION:
        return sessions[-1] if sessions else "0" * 32
    if isinstance(value, str) and value.startswith(WORKSPACE):
        return str(workspace) + value[len(WORKSPACE) :]
    if isinstance(value, dict):
        return {k: _fill(v, fresh_id, sessions, workspace) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, fresh_id, sessions, workspace) for v in value]
    return value


def encode(msg: Line, ids: Ids, sessions: list[str], workspace: Path) -> tuple[bytes, Any]:
    """The line's bytes, and the id whose answer is expected (if any)."""
    msg_id = ids.fresh()
    if msg.body is not None:
        return msg.body + b"\n", None
    return line(_fill(msg.payload, msg_id, sessions, workspace)), (
        msg_id if msg.expect_answer else None
    )


# --- the client's side: hostile answers to the agent's requests -----------------------------

HOSTILE_ANSWERS: list[Any] = [
    None,
    {},
    [],
    "x",
    {"content": 5},
    {"content": "the buffer's text"},
    {"content": "x" * 100_000},
    {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
    {"outcome": {"outcome": "selected", "optionId": 7}},
    {"outcome": {"outcome": "cancelled"}},
    {"outcome": "cancelled"},
    {"terminalId": "t1"},
    {"terminalId": 5},
    {"output": "out", "truncated": False},
    {"output": 5, "truncated": "no", "exitStatus": {"exitCode": "x"}},
    {"exitCode": 0, "signal": None},
    {"action": "accept"},
    ErrorAnswer(-32603, "the client failed"),
    ErrorAnswer(-32800, "cancelled"),
]


def hostile_answer(rng: random.Random) -> Callable[[dict[str, Any]], Any]:
    return lambda request: rng.choice(HOSTILE_ANSWERS)


# --- the agent -------------------------------------------------------------------------------


@dataclass
class Fuzzed:
    agent: RawAcp
    ids: Ids
    workspace: Path
    stderr: Path
    sessions: list[str] = field(default_factory=list)
    prompted: set[str] = field(default_factory=set)
    sent: int = 0
    started: float = field(default_factory=time.monotonic)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    tmp = tmp_path_factory.mktemp("acp-fuzz")
    workspace = tmp / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("print('hi')\n")
    with FakeOpenAI(MODEL_SCRIPT * (TOTAL_MESSAGES // 10)) as fake:
        env = agent_env(fake.base_url, tmp / "home")
        rng = random.Random(int(os.environ.get("CADENZA_RELIABILITY_SEED", "7")))
        agent = RawAcp(
            env, cwd=workspace, stderr_path=tmp / "stderr.log", answer=hostile_answer(rng)
        )
        state = Fuzzed(agent=agent, ids=Ids(), workspace=workspace, stderr=tmp / "stderr.log")
        yield state
        if agent.alive():
            agent.kill()
    elapsed = time.monotonic() - state.started
    print(
        f"\nACP fuzz: {state.sent} messages in {elapsed:.1f} s "
        f"({state.sent / elapsed:.0f} messages/s), {len(state.sessions)} sessions"
    )


def _progress(state: Fuzzed) -> None:
    """Messages so far (a long run is watched, and reported when cut short)."""
    elapsed = time.monotonic() - state.started
    line = f"{state.sent} messages, {elapsed:.0f} s, {len(state.sessions)} sessions\n"
    (state.workspace.parent / "progress.txt").write_text(line)


def assert_healthy(state: Fuzzed, expected: list[Any], sent: dict[Any, bytes]) -> None:
    agent = state.agent
    probe = state.ids.fresh()
    reply = agent.request(
        probe, "session/new", {"cwd": str(state.workspace), "mcpServers": []}, BOUND_S
    )
    assert reply is not None, f"no answer to session/new within {BOUND_S} s"
    assert "result" in reply, reply
    state.sessions.append(reply["result"]["sessionId"])
    missing = agent.wait_for(expected, BOUND_S)
    shown = {str(m): sent.get(m, b"")[:600] for m in list(missing)[:3]}
    assert not missing, f"requests never answered: {shown}"
    for msg_id in expected:
        answer = agent.responses[msg_id]
        assert answer.get("jsonrpc") == "2.0"
        assert ("result" in answer) != ("error" in answer), answer
        if "error" in answer:
            assert isinstance(answer["error"].get("code"), int), answer
            assert isinstance(answer["error"].get("message"), str), answer
        else:
            result = answer["result"]
            if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
                state.sessions.append(result["sessionId"])
    assert agent.alive(), "the agent died"
    assert not agent.frame_errors, agent.frame_errors[:5]


# --- the tests, in order --------------------------------------------------------------------


def test_acp_initialize_then_a_prompt_runs(fuzzed: Fuzzed) -> None:
    agent = fuzzed.agent
    caps = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
    init = agent.request(
        0, "initialize", {"protocolVersion": 1, "clientCapabilities": caps}, START_S
    )
    assert init is not None and "result" in init, init
    assert_healthy(fuzzed, [], {})
    done = agent.request(
        fuzzed.ids.fresh(),
        "session/prompt",
        {"sessionId": fuzzed.sessions[-1], "prompt": [{"type": "text", "text": "go"}]},
        BOUND_S,
    )
    assert done is not None and "result" in done, done


@settings(
    max_examples=BATCHES,
    deadline=None,
    database=None,
    phases=[Phase.generate],  # shrinking against a live agent takes minutes
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)
@given(batch=st.lists(fuzz_line, min_size=BATCH, max_size=BATCH))
def test_acp_fuzzed_batches_are_answered(fuzzed: Fuzzed, batch: list[Line]) -> None:
    chunks = []
    expected = []
    sent: dict[Any, bytes] = {}
    for msg in batch:
        data, msg_id = encode(msg, fuzzed.ids, fuzzed.sessions, fuzzed.workspace)
        chunks.append(data)
        if msg_id is not None:
            expected.append(msg_id)
            sent[msg_id] = data
    (fuzzed.stderr.parent / "last-batch.json").write_text(
        json.dumps([c.decode("latin-1") for c in chunks])
    )
    fuzzed.agent.send_all(chunks)
    fuzzed.sent += len(chunks)
    _progress(fuzzed)
    assert_healthy(fuzzed, expected, sent)


def test_acp_every_prompt_was_answered_and_the_agent_exits(fuzzed: Fuzzed) -> None:
    agent = fuzzed.agent
    prompts = [n for n in list(agent.notifications) if n.get("method") == "session/update"]
    assert prompts, "no session ever sent an update: the prompts never ran"
    agent.send(b'{"jsonrpc":"2.0","id":"unterminated","method":"session/list"')
    agent.close_stdin()
    assert agent.proc.wait(BOUND_S) == 0
