"""Suite 1, protocol fuzzing: hypothesis-made JSON-RPC traffic against ONE ``cadenza serve``.

Raw bytes go to the server's stdin in batches (many messages per write); ``rawserver`` reads
its stdout with a parser of its own. After every batch, each request of the batch with a
usable id must have been answered (a result or a JSON-RPC error), a well-formed
``cadenza.listSessions`` must be answered within ``BOUND_S``, the process must be alive and
everything it wrote must be well-formed frames. A ``Content-Length`` longer than its body
swallows whatever follows (the server cannot know where the next message starts), so it is
only sent as the last bytes of the connection.
"""

from __future__ import annotations

import itertools
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

from tests.lsp.harness import server_env
from tests.reliability.knobs import scaled
from tests.reliability.rawserver import ErrorAnswer, RawServer, frame, initialize_params, message
from tests.support.fake_openai import FakeOpenAI, call
from tests.support.fake_openai import text as fake_text

TOTAL_MESSAGES = scaled(5_000, 100_000)
BATCH = 50
BATCHES = TOTAL_MESSAGES // BATCH
BOUND_S = 15.0
COMMANDS = (
    "cadenza.startSession",
    "cadenza.cancelSession",
    "cadenza.replySession",
    "cadenza.listSessions",
    "cadenza.loadSession",
    "cadenza.undoSession",
    "cadenza.steerSession",
    "cadenza.restoreTurn",
)

# --- strategies ---------------------------------------------------------------------------

ID_SLOT = object()
"""Replaced by a fresh integer or string id when the batch is written."""
PREVIOUS_ID = object()
"""Replaced by the id of the message before (``$/cancelRequest`` of a request in flight)."""

json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
tricky_text = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "../../etc/passwd",
            "../x",
            "/",
            "\u202e\u2066evil",
            "\ud800",  # a lone surrogate: json.dumps writes "\ud800"
            "a" * 10_000,
            "é" * 3000,
            "🙂" * 2000,
            "file:///",
            "file:///nonexistent/folder",
            "file:///tmp",
            "http://example.com/x",
            "untitled:Untitled-1",
            "0" * 32,
            "Content-Length: 5",
        ]
    ),
)
huge_text = st.sampled_from([1_000_000, 3_000_000]).map(lambda n: "x" * n)
session_id = st.one_of(tricky_text, st.just("SESSION"))  # SESSION: a real session's id
hostile = st.one_of(json_value, tricky_text)
model_names = st.one_of(
    st.sampled_from(["openai/test", "openai/", "/x", "nope/x", "openai", "OPENAI/TEST", ""]),
    st.text(max_size=20).filter(lambda s: "/" not in s),
    json_value,
)
"""Never a local, ollama or anthropic model: those would start processes or reach out."""


def _args_object(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """An argument object: some of ``fields`` (hostile values), maybe an unknown key."""
    return st.fixed_dictionaries({}, optional={**fields, "extra": json_value, "": json_value})


real_start = st.fixed_dictionaries(
    {
        "task": st.text(min_size=1, max_size=200).filter(str.strip),
        "model": st.just("openai/test"),
    },
    optional={"workflow": st.sampled_from(["default", "plan-implement-review"])},
)
"""A startSession that starts a session (the fake model ends it at once)."""

COMMAND_ARGS: dict[str, st.SearchStrategy[Any]] = {
    "cadenza.startSession": st.one_of(
        real_start,
        _args_object(
            {
                "task": st.one_of(tricky_text, json_value),
                "workflow": st.one_of(
                    st.sampled_from(["default", "plan-implement-review", "nope", "../x"]), hostile
                ),
                "rootUri": st.one_of(tricky_text, json_value),
                "model": model_names,
                "review": st.one_of(st.sampled_from(["auto", "confirm", "never"]), hostile),
            }
        ),
    ),
    "cadenza.cancelSession": _args_object({"sessionId": st.one_of(session_id, json_value)}),
    "cadenza.replySession": _args_object(
        {"sessionId": st.one_of(session_id, json_value), "text": st.one_of(tricky_text, json_value)}
    ),
    "cadenza.listSessions": _args_object(
        {"limit": st.one_of(st.integers(-5, 5), st.integers(), json_value)}
    ),
    "cadenza.loadSession": _args_object({"sessionId": st.one_of(session_id, json_value)}),
    "cadenza.undoSession": _args_object({"sessionId": st.one_of(session_id, json_value)}),
    "cadenza.steerSession": _args_object(
        {"sessionId": st.one_of(session_id, json_value), "text": st.one_of(tricky_text, json_value)}
    ),
    "cadenza.restoreTurn": _args_object(
        {
            "sessionId": st.one_of(session_id, json_value),
            "turn": st.one_of(st.integers(-3, 5), json_value),
        }
    ),
}


@st.composite
def execute_command(draw: st.DrawFn) -> dict[str, Any]:
    command = draw(st.one_of(st.sampled_from(COMMANDS), tricky_text, json_value))
    shape = draw(st.sampled_from(["one", "one", "one", "none", "two", "raw", "missing"]))
    args_strategy = COMMAND_ARGS.get(command, json_value) if isinstance(command, str) else hostile
    params: dict[str, Any] = {"command": command}
    if shape == "one":
        params["arguments"] = [draw(args_strategy)]
    elif shape == "none":
        params["arguments"] = []
    elif shape == "two":
        params["arguments"] = [draw(args_strategy), draw(args_strategy)]
    elif shape == "raw":
        params["arguments"] = draw(hostile)
    if draw(st.booleans()):
        params["workDoneToken"] = draw(hostile)
    return params


KNOWN_METHODS = [
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "textDocument/hover",
    "textDocument/completion",
    "workspace/didChangeWorkspaceFolders",
    "workspace/didChangeConfiguration",
    "window/workDoneProgress/cancel",
    "$/cancelRequest",
    "$/setTrace",
    "initialized",
]
"""Methods whose params are fuzzed (``initialize``, ``shutdown`` and ``exit`` are tested
apart: they change the connection's state)."""


def _doc_params(draw: st.DrawFn) -> Any:
    uri = draw(st.one_of(tricky_text, st.just("file:///tmp/fuzz.py"), json_value))
    return draw(
        st.one_of(
            hostile,
            st.just(
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "python",
                        "version": draw(st.one_of(st.integers(), json_value)),
                        "text": draw(st.one_of(tricky_text, huge_text, json_value)),
                    },
                    "contentChanges": draw(
                        st.one_of(
                            json_value, st.lists(st.fixed_dictionaries({"text": tricky_text}))
                        )
                    ),
                }
            ),
        )
    )


@dataclass
class Msg:
    """One generated message: ``payload`` (JSON) or raw ``body`` bytes, and its framing."""

    payload: Any = None
    body: bytes | None = None
    framing: str = "ok"
    expect_answer: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


@st.composite
def request_like(draw: st.DrawFn) -> Msg:  # noqa: C901
    """A request or notification, well-formed or not."""
    kind = draw(st.sampled_from(["command", "command", "command", "known", "unknown", "envelope"]))
    is_request = draw(st.booleans()) if kind != "command" else draw(st.integers(0, 9)) > 0
    payload: dict[str, Any] = {"jsonrpc": "2.0"}
    if kind == "command":
        payload["method"] = "workspace/executeCommand"
        payload["params"] = draw(st.one_of(execute_command(), execute_command(), hostile))
    elif kind == "known":
        method = draw(st.sampled_from(KNOWN_METHODS))
        payload["method"] = method
        if method.startswith("textDocument/"):
            payload["params"] = _doc_params(draw)
        elif method == "$/cancelRequest":
            payload["params"] = draw(
                st.one_of(
                    st.fixed_dictionaries({"id": hostile}),
                    hostile,
                    st.just({"id": PREVIOUS_ID}),
                    st.just({"id": PREVIOUS_ID}),
                )
            )
        else:
            payload["params"] = draw(hostile)
        if draw(st.booleans()):
            payload.pop("params")
    elif kind == "unknown":
        payload["method"] = draw(st.one_of(tricky_text, st.just("$/unknownThing")))
        if draw(st.booleans()):
            payload["params"] = draw(hostile)
    if is_request:
        payload["id"] = ID_SLOT
    answer = is_request
    if kind == "envelope":
        # break one envelope field: the server answers with id null or the id it could read
        payload = {"jsonrpc": "2.0", "method": "workspace/executeCommand", "id": ID_SLOT}
        payload["params"] = {"command": "cadenza.listSessions", "arguments": []}
        broken = draw(st.sampled_from(["jsonrpc", "no-jsonrpc", "method", "id", "no-method"]))
        if broken == "jsonrpc":
            payload["jsonrpc"] = draw(hostile.filter(lambda v: v != "2.0"))
        elif broken == "no-jsonrpc":
            payload.pop("jsonrpc")
        elif broken == "method":
            payload["method"] = draw(json_value.filter(lambda v: not isinstance(v, str)))
        elif broken == "id":
            payload["id"] = draw(
                st.one_of(
                    st.none(), st.booleans(), st.floats(allow_nan=False), st.lists(json_scalar)
                )
            )
        else:
            payload.pop("method")
        answer = broken in ("jsonrpc", "method", "no-method") or broken == "no-jsonrpc"
        answer = answer and payload.get("id") is ID_SLOT
    return Msg(payload=payload, expect_answer=answer)


@st.composite
def garbage(draw: st.DrawFn) -> Msg:
    """A frame whose body is not a JSON-RPC message (or not JSON, or not UTF-8)."""
    body = draw(
        st.one_of(
            json_value.map(lambda v: json.dumps(v).encode()),
            st.binary(max_size=200).filter(lambda b: b"\n" not in b),
            st.sampled_from(
                [
                    b"",
                    b"{",
                    b"\xff\xfe\xfd",
                    b'{"jsonrpc": "2.0", "id": 1, "method": "x\xff"}',
                    b"[" * 100_000,  # deep nesting
                    b'{"a":' * 5_000,
                    b"null",
                    b"[]",
                ]
            ),
        )
    )
    return Msg(body=body)


@st.composite
def broken_frame(draw: st.DrawFn) -> Msg:
    """A request in a frame with a broken header (never longer than its body)."""
    inner = draw(request_like())
    return Msg(
        payload=inner.payload,
        framing=draw(
            st.sampled_from(
                ["missing", "non-numeric", "negative", "huge", "shorter", "extra-headers"]
            )
        ),
        expect_answer=False,
    )


fuzz_message = st.one_of(
    request_like(), request_like(), request_like(), request_like(), garbage(), broken_frame()
)


# --- writing a batch ------------------------------------------------------------------------


class Ids:
    def __init__(self) -> None:
        self._counter = itertools.count(1000)
        self.previous: int | str = 0

    def fresh(self) -> int | str:
        n = next(self._counter)
        self.previous = n - 1 if (n - 1) % 3 else f"s{n - 1}"
        return n if n % 3 else f"s{n}"


def _fill(value: Any, fresh_id: int | str, real_sessions: list[str], previous: Any = None) -> Any:
    if value is ID_SLOT:
        return fresh_id
    if value is PREVIOUS_ID:
        return previous
    if value == "SESSION":
        return real_sessions[-1] if real_sessions else "0" * 32
    if isinstance(value, dict):
        return {k: _fill(v, fresh_id, real_sessions, previous) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, fresh_id, real_sessions, previous) for v in value]
    return value


def encode(msg: Msg, ids: Ids, real_sessions: list[str]) -> tuple[bytes, int | str | None]:
    """The bytes of ``msg``, and the id whose answer is expected (if any)."""
    msg_id = ids.fresh()
    if msg.body is not None:
        body = msg.body
    else:
        payload = _fill(msg.payload, msg_id, real_sessions, ids.previous)
        body = json.dumps(payload).encode("utf-8", "surrogatepass")
    expected = msg_id if msg.expect_answer else None
    match msg.framing:
        case "ok":
            return frame(body), expected
        case "missing":
            return b"Content-Type: application/json\r\n\r\n" + body, None
        case "non-numeric":
            return b"Content-Length: twelve\r\n\r\n" + body, None
        case "negative":
            return b"Content-Length: -%d\r\n\r\n" % len(body) + body, None
        case "huge":
            return b"Content-Length: 99999999999999999999\r\n\r\n" + body, None
        case "shorter":
            return b"Content-Length: %d\r\n\r\n" % (len(body) // 2) + body, None
        case "extra-headers":
            headers = b"X-Thing: 1\r\nContent-Type: text/plain; charset=latin-1\r\n"
            return headers + b"Content-Length: %d\r\n\r\n" % len(body) + body, expected
    raise AssertionError(msg.framing)


# --- the client's side: hostile answers to the server's requests ------------------------------

CLIENT_CAPABILITIES = {
    # applyEdit: the server never writes a file itself, even for a session whose hostile rootUri
    # is a real folder (file:///tmp): every change goes to this client, which never applies it.
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create", "delete"]},
    },
    "window": {"workDoneProgress": True, "showDocument": {"support": True}},
    "experimental": {"cadenza": {"askUser": True, "requestPermission": True}},
}
HOSTILE_ANSWERS: list[Any] = [
    None,
    {},
    [],
    "Allow once",
    0,
    {"title": "Allow once"},
    {"title": 5},
    {"applied": True},
    {"applied": "yes", "failureReason": 5},
    {"applied": False, "failureReason": "x" * 100_000},
    {"answer": None},
    {"answer": 5},
    {"answer": "an answer \x00 \ud800"},
    {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
    {"outcome": {"outcome": "selected", "optionId": 7}},
    {"outcome": "cancelled"},
    {"action": "continue"},
    {"success": "no"},
    ErrorAnswer(-32603, "the client failed"),
    ErrorAnswer(-32800, "cancelled"),
]
"""What the fuzzed client answers to the server's requests (applyEdit, prompts, progress)."""


def hostile_answer(rng: random.Random) -> Callable[[dict[str, Any]], Any]:
    return lambda request: rng.choice(HOSTILE_ANSWERS)


MODEL_SCRIPT = [
    call("write_file", {"path": "fuzz-out.txt", "content": "x\n"}, "c1"),
    call("run_command", {"command": "true"}, "c2"),
    call("ask_user", {"question": "which?"}, "c3"),
    call("edit_file", {"path": "app.py", "old_string": "hi", "new_string": "ho"}, "c4"),
    call("delete_file", {"path": "app.py"}, "c5"),
    fake_text("done"),
]
"""Replies the fake model gives, in turn, to whichever session asks (then ``done`` forever)."""


# --- the server -------------------------------------------------------------------------------


@dataclass
class Fuzzed:
    server: RawServer
    ids: Ids
    workspace: Path
    stderr: Path
    sessions: list[str] = field(default_factory=list)
    sent: int = 0
    batches: int = 0
    started: float = field(default_factory=time.monotonic)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    tmp = tmp_path_factory.mktemp("protocol-fuzz")
    workspace = tmp / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("print('hi')\n")
    with FakeOpenAI(MODEL_SCRIPT * (TOTAL_MESSAGES // 20)) as fake:
        env = server_env(fake.base_url, tmp / "home")
        env["CADENZA_MODEL"] = "openai/test"
        rng = random.Random(int(os.environ.get("CADENZA_RELIABILITY_SEED", "7")))
        server = RawServer(env, stderr_path=tmp / "stderr.log", answer=hostile_answer(rng))
        state = Fuzzed(server=server, ids=Ids(), workspace=workspace, stderr=tmp / "stderr.log")
        yield state
        if server.alive():
            server.kill()
    print(
        f"\nprotocol fuzz: {state.sent} messages in {state.batches} batches, "
        f"{time.monotonic() - state.started:.1f} s"
    )


def assert_healthy(
    state: Fuzzed, expected: list[Any], sent: dict[Any, bytes] | None = None
) -> None:
    server = state.server
    probe = state.ids.fresh()
    reply = server.request(
        probe, "workspace/executeCommand", {"command": "cadenza.listSessions"}, BOUND_S
    )
    assert reply is not None, f"no answer to listSessions within {BOUND_S} s"
    assert "result" in reply, reply
    missing = server.wait_for(expected, BOUND_S)
    shown = {str(m): (sent or {}).get(m, b"")[:600] for m in list(missing)[:3]}
    assert not missing, f"requests never answered: {shown}"
    for msg_id in expected:
        answer = server.responses[msg_id]
        assert answer.get("jsonrpc") == "2.0"
        assert ("result" in answer) != ("error" in answer), answer
        if "error" in answer:
            assert isinstance(answer["error"].get("code"), int), answer
            assert isinstance(answer["error"].get("message"), str), answer
    assert server.alive(), "the server died"
    assert not server.frame_errors, server.frame_errors[:5]
    for msg_id in expected:
        result = server.responses[msg_id].get("result")
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            state.sessions.append(result["sessionId"])


# --- the tests, in order: before initialize, fuzzing, after shutdown ---------------------------


def test_requests_before_initialize_are_answered(fuzzed: Fuzzed) -> None:
    server = fuzzed.server
    expected = []
    chunks = []
    for command in COMMANDS:
        for argument in ([], [{}], [{"sessionId": "../x"}], [{"task": "t"}]):
            msg_id = fuzzed.ids.fresh()
            expected.append(msg_id)
            chunks.append(
                message(
                    {
                        "jsonrpc": "2.0",
                        "id": msg_id,
                        "method": "workspace/executeCommand",
                        "params": {"command": command, "arguments": argument},
                    }
                )
            )
    msg_id = fuzzed.ids.fresh()
    expected.append(msg_id)
    hover = {"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}}
    chunks.append(
        message({"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover", "params": hover})
    )
    chunks.append(message({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": 5}))
    server.send_all(chunks)
    fuzzed.sent += len(chunks)
    assert not server.wait_for(expected, BOUND_S)
    for msg_id in expected:  # LSP 3.17 §initialize: ServerNotInitialized
        assert server.responses[msg_id]["error"]["code"] == -32002, server.responses[msg_id]
    init = server.request(
        fuzzed.ids.fresh(),
        "initialize",
        initialize_params(
            fuzzed.workspace,
            capabilities=CLIENT_CAPABILITIES,
        ),
        BOUND_S,
    )
    assert init is not None and "result" in init, init
    server.send(message({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    assert_healthy(fuzzed, expected)


@settings(
    max_examples=BATCHES,
    deadline=None,
    database=None,
    phases=[Phase.generate],  # shrinking against a live server takes minutes
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)
@given(batch=st.lists(fuzz_message, min_size=BATCH, max_size=BATCH))
def test_fuzzed_batches_are_answered(fuzzed: Fuzzed, batch: list[Msg]) -> None:
    chunks = []
    expected = []
    sent: dict[Any, bytes] = {}
    for msg in batch:
        data, msg_id = encode(msg, fuzzed.ids, fuzzed.sessions)
        chunks.append(data)
        if msg_id is not None:
            expected.append(msg_id)
            sent[msg_id] = data
    (fuzzed.stderr.parent / "last-batch.json").write_text(
        json.dumps([c.decode("latin-1") for c in chunks])
    )
    fuzzed.server.send_all(chunks)
    fuzzed.sent += len(chunks)
    fuzzed.batches += 1
    assert_healthy(fuzzed, expected, sent)


def test_every_started_session_ended(fuzzed: Fuzzed) -> None:
    """Sessions the fuzzing started (the model writes, runs, asks, edits, deletes; the client
    answers every request of the server with something hostile) all reach ``session_end``."""
    server = fuzzed.server
    deadline = time.monotonic() + 60
    ended: set[str] = set()
    while time.monotonic() < deadline:
        ended = {
            n["params"]["sessionId"]
            for n in list(server.notifications)
            if n.get("method") == "cadenza/sessionUpdate"
            and n["params"]["update"].get("sessionUpdate") == "session_end"
        }
        if ended >= set(fuzzed.sessions):
            break
        time.sleep(0.1)
    assert set(fuzzed.sessions) <= ended, sorted(set(fuzzed.sessions) - ended)[:5]
    assert server.alive()
    print(f"\nprotocol fuzz: {len(fuzzed.sessions)} sessions started and ended")


def test_requests_after_shutdown_are_refused_then_exit(fuzzed: Fuzzed) -> None:
    server = fuzzed.server
    answer = server.request(fuzzed.ids.fresh(), "shutdown", None, BOUND_S)
    assert answer is not None and answer.get("result") is None, answer
    expected = []
    chunks = []
    for command in COMMANDS:
        msg_id = fuzzed.ids.fresh()
        expected.append(msg_id)
        chunks.append(
            message(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "method": "workspace/executeCommand",
                    "params": {"command": command, "arguments": [{"task": "late"}]},
                }
            )
        )
    server.send_all(chunks)
    fuzzed.sent += len(chunks)
    assert not server.wait_for(expected, BOUND_S)
    for msg_id in expected:
        assert server.responses[msg_id]["error"]["code"] == -32600
    # the unrecoverable case last: a Content-Length longer than its body, then end of stream
    server.send(b"Content-Length: 1000\r\n\r\n{}")
    fuzzed.sent += 1
    server.close_stdin()
    assert server.proc.wait(BOUND_S) in (0, 1)
