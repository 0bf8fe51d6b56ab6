"""Regression tests for the protocol bugs the fuzzing suite found (docs/lab/reliability.md)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.harness import server_env
from tests.reliability.rawserver import RawServer, initialize_params, message
from tests.support.fake_openai import FakeOpenAI, call
from tests.support.fake_openai import text as fake_text

LIST = {"command": "cadenza.listSessions"}


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[RawServer]:
    (tmp_path / "ws").mkdir()
    env = server_env("http://127.0.0.1:9/v1", tmp_path / "home")
    server = RawServer(env, stderr_path=tmp_path / "stderr.log")
    yield server
    if server.alive():
        server.kill()


def _initialize(raw: RawServer, root: Path) -> None:
    answer = raw.request("init", "initialize", initialize_params(root))
    assert answer is not None and "result" in answer


def test_request_before_initialize_is_server_not_initialized(
    raw: RawServer, tmp_path: Path
) -> None:
    # Found by the fuzzer: startSession before initialize raised RuntimeError inside pygls
    # (an internal error); LSP 3.17 says -32002 for every request before initialize.
    start = {"command": "cadenza.startSession", "arguments": [{"task": "t"}]}
    answer = raw.request(1, "workspace/executeCommand", start)
    assert answer is not None and answer["error"]["code"] == -32002, answer
    answer = raw.request(2, "workspace/executeCommand", LIST)
    assert answer is not None and answer["error"]["code"] == -32002, answer
    _initialize(raw, tmp_path / "ws")
    answer = raw.request(3, "workspace/executeCommand", LIST)
    assert answer is not None and answer["result"] == {"sessions": []}, answer


def test_notification_method_sent_with_an_id_is_answered(raw: RawServer, tmp_path: Path) -> None:
    # Found by the fuzzer: pygls dropped the id and handled a notification; never answered.
    _initialize(raw, tmp_path / "ws")
    params = {"textDocument": {"uri": "file:///x.py", "languageId": "python", "version": 1}}
    answer = raw.request(7, "textDocument/didOpen", {**params, "text": ""})
    assert answer is not None and answer["error"]["code"] == -32600, answer
    assert "notification" in answer["error"]["message"]


def test_request_after_shutdown_is_invalid_request(raw: RawServer, tmp_path: Path) -> None:
    # Found by the fuzzer: pygls logged "No more requests!" and never answered.
    _initialize(raw, tmp_path / "ws")
    assert raw.request(1, "shutdown", None) is not None
    answer = raw.request(2, "workspace/executeCommand", LIST)
    assert answer is not None and answer["error"]["code"] == -32600, answer
    raw.send(message({"jsonrpc": "2.0", "method": "exit"}))
    assert raw.proc.wait(10) == 0


def test_content_length_split_across_header_pieces_is_found(raw: RawServer, tmp_path: Path) -> None:
    # Found by the fuzzer: a frame shorter than its body leaves a stray tail glued to the next
    # header; when the tail ended near a 64 KiB piece boundary, "Content-Length" was split
    # between two pieces and the next message was lost.
    _initialize(raw, tmp_path / "ws")
    for n, half in enumerate([65_536 - 30, 65_536 - 20, 65_536 - 3, 65_536 + 5]):
        body = b'"' + b"x" * (2 * half) + b'"'
        raw.send(b"Content-Length: %d\r\n\r\n" % (len(body) // 2) + body)
        raw.send(
            message(
                {
                    "jsonrpc": "2.0",
                    "id": 50 + n,
                    "method": "workspace/executeCommand",
                    "params": LIST,
                }
            )
        )
        assert not raw.wait_for([50 + n], 10), f"lost after a stray tail of {half} bytes"
        assert "result" in raw.responses[50 + n]


def test_stray_body_holding_content_length_text_does_not_swallow_the_next(
    raw: RawServer, tmp_path: Path
) -> None:
    # Found by the fuzzer: a skipped frame's body glued to the next header line, and holding
    # the text "Content-Length: 5" itself, made the reader take the first (wrong) occurrence.
    _initialize(raw, tmp_path / "ws")
    body = b'{"jsonrpc": "2.0", "method": "x", "params": "Content-Length: 5 here"}'
    raw.send(b"Content-Length: 99999999999999999999\r\n\r\n" + body)
    raw.send(b"Content-Length: 12\r\n\r\n" + body)  # shorter than its body
    raw.send(
        message({"jsonrpc": "2.0", "id": 9, "method": "workspace/executeCommand", "params": LIST})
    )
    assert not raw.wait_for([9], 10)
    assert "result" in raw.responses[9]


def _session_end(raw: RawServer, session_id: str, timeout: float = 15) -> dict[str, Any] | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for note in list(raw.notifications):
            params = note.get("params") or {}
            update = params.get("update") or {}
            if (
                params.get("sessionId") == session_id
                and update.get("sessionUpdate") == "session_end"
            ):
                return update
        time.sleep(0.05)
    return None


@pytest.mark.parametrize("answer", [{}, "yes"])
def test_malformed_apply_edit_answer_fails_the_edit_not_the_session(
    tmp_path: Path, answer: Any
) -> None:
    # Found by the fuzzer: pygls dropped a response it could not structure, so the session
    # waiting for its workspace/applyEdit hung forever.
    root = tmp_path / "ws"
    root.mkdir()
    script = [call("write_file", {"path": "a.txt", "content": "x"}, "c1"), fake_text("done")]
    with FakeOpenAI(script) as fake:
        raw = RawServer(
            server_env(fake.base_url, tmp_path / "home"),
            answer=lambda request: answer if request["method"] == "workspace/applyEdit" else None,
        )
        try:
            caps = {
                "workspace": {
                    "applyEdit": True,
                    "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]},
                }
            }
            assert raw.request(1, "initialize", initialize_params(root, capabilities=caps))
            start = {
                "command": "cadenza.startSession",
                "arguments": [{"task": "t", "model": "openai/test"}],
            }
            session_id = raw.request(2, "workspace/executeCommand", start)["result"]["sessionId"]
            end = _session_end(raw, session_id)
            # The write_file failed: the done checks end the claim of done as failed.
            assert end is not None and end["stopReason"] == "failed", end
            failed = [
                n["params"]["update"]
                for n in raw.notifications
                if n.get("method") == "cadenza/sessionUpdate"
                and n["params"]["update"].get("status") == "failed"
            ]
            assert failed, "the write_file call should have failed"
            assert not (root / "a.txt").exists()
        finally:
            raw.kill()


@pytest.mark.parametrize("token", [{"a": 1}, [1, 2]])
def test_unusable_work_done_token_still_ends_the_session(tmp_path: Path, token: Any) -> None:
    # Found by the fuzzer: a workDoneToken that is a JSON object made pygls's progress raise
    # TypeError before the session ran; it never sent session_end.
    root = tmp_path / "ws"
    root.mkdir()
    with FakeOpenAI([fake_text("done")]) as fake:
        raw = RawServer(server_env(fake.base_url, tmp_path / "home"))
        try:
            assert raw.request(1, "initialize", initialize_params(root))
            start = {
                "command": "cadenza.startSession",
                "workDoneToken": token,
                "arguments": [{"task": "t", "model": "openai/test"}],
            }
            answer = raw.request(2, "workspace/executeCommand", start)
            assert answer is not None
            if "result" in answer:  # accepted: it must run to its end
                end = _session_end(raw, answer["result"]["sessionId"])
                assert end is not None and end["stopReason"] == "end_turn", end
        finally:
            raw.kill()
