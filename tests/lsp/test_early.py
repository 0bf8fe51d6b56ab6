"""The early ``initialize`` answer of a real ``cadenza serve`` says what pygls says.

The server answers a plain ``initialize`` before it imports pygls (start-up time) and drops
pygls's own answer on the way out. For many clients' capabilities, the early answer must equal
the answer of the same server with the early path off, pygls must log no difference, and the
session must work as before (the client's encoding taken, the rest of the stream read).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cadenza.lsp.early import COMMANDS, PrefixedStdin, frame
from cadenza.lsp.server import create_server

CLIENTS: list[dict[str, Any]] = [
    {},
    {"general": {"positionEncodings": ["utf-8", "utf-16"]}},
    {"general": {"positionEncodings": ["utf-32"]}},
    {"general": {"positionEncodings": ["x-unknown", "utf-16"]}},
    {"general": {"positionEncodings": []}},
    {"general": {}},
    {
        "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
        "textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": True}},
        "window": {"workDoneProgress": True},
        "experimental": {"cadenza": {"askUser": True}},
    },
    {"notebookDocument": {"synchronization": {"dynamicRegistration": False}}},
    {"textDocument": {"rename": {"prepareSupport": True}}},
    {"workspace": {"fileOperations": {"didCreate": True, "willRename": True}}},
]


def _messages(stdout: bytes) -> list[dict[str, Any]]:
    out = []
    while stdout:
        headers, _, rest = stdout.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in headers.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        out.append(json.loads(rest[:length]))
        stdout = rest[length:]
    return out


def _run(
    tmp_path: Path, capabilities: dict[str, Any], early: bool, process_id: int = 7, ok: bool = True
) -> tuple[list[Any], str]:
    params = {"processId": process_id, "rootUri": tmp_path.as_uri(), "capabilities": capabilities}
    stream = (
        frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        + frame({"jsonrpc": "2.0", "method": "exit"})
    )
    env = {**os.environ, "CADENZA_EARLY_INITIALIZE": "1" if early else "0"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    done = subprocess.run(
        [sys.executable, "-m", "cadenza", "serve", "--log-level", "WARNING"],
        input=stream,
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == (0 if ok else 1), done.stderr.decode()
    return _messages(done.stdout), done.stderr.decode()


@pytest.mark.parametrize("capabilities", CLIENTS)
def test_the_early_answer_is_pyglss(tmp_path: Path, capabilities: dict[str, Any]) -> None:
    late, _ = _run(tmp_path, capabilities, early=False)
    early, log = _run(tmp_path, capabilities, early=True, process_id=2)  # a fresh cache folder
    answers = [m for m in early if m.get("id") == 1]
    assert len(answers) == 1, early  # pygls's own answer was dropped
    assert answers == [m for m in late if m.get("id") == 1]
    assert "early initialize" not in log
    assert [m for m in early if m.get("id") == 2] == [{"id": 2, "jsonrpc": "2.0", "result": None}]


def test_the_early_commands_are_the_servers() -> None:
    assert list(create_server().protocol.fm.commands) == list(COMMANDS)


def test_prefixed_stdin_reads_the_early_bytes_first(tmp_path: Path) -> None:
    rest = tmp_path / "rest"
    rest.write_bytes(b"tail\nmore")
    with rest.open("rb") as stream:
        stdin = PrefixedStdin(b"Content-Length: 4\r\n\r\nbodyhead", stream)
        assert stdin.readline(1024) == b"Content-Length: 4\r\n"
        assert stdin.readline(1024) == b"\r\n"
        assert stdin.read(4) == b"body"
        assert stdin.readline(1024) == b"headtail\n"  # a line split between the two
        assert stdin.read(10) == b"more"


def test_a_malformed_initialize_still_gets_pyglss_error(tmp_path: Path) -> None:
    hostile = {"general": {"positionEncodings": 5}, "workspace": [1]}
    answers, _ = _run(tmp_path, hostile, early=True, ok=False)  # shutdown then refused
    late, _ = _run(tmp_path, hostile, early=False, ok=False)
    error = next(m for m in answers if m.get("id") == 1)
    assert "error" in error
    assert error == next(m for m in late if m.get("id") == 1)  # pygls's very answer


def test_a_new_client_is_answered_before_pygls_loads(tmp_path: Path) -> None:
    # Only the early reader runs: it must answer, and import neither pygls nor lsprotocol.
    code = (
        "import sys; from cadenza.lsp.early import answer_early; early = answer_early(); "
        "heavy = {m.split('.')[0] for m in sys.modules} & {'pygls', 'lsprotocol', 'attrs', "
        "'cattrs', 'pydantic', 'jsonschema'}; "
        "sys.stderr.write(repr((early.answered is not None, sorted(heavy))))"
    )
    params = {"processId": 7, "rootUri": tmp_path.as_uri(), "capabilities": CLIENTS[6]}
    request = frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", code], input=request, capture_output=True, env=env, timeout=60
    )
    assert done.stderr.decode() == "(True, [])"
    assert _messages(done.stdout)[0]["result"]["capabilities"]["positionEncoding"] == "utf-16"


def test_deeply_nested_json_first_is_a_parse_error_not_a_crash(tmp_path: Path) -> None:
    """``[[[…`` deeper than the JSON parser goes, as the first message: -32700, then served."""
    body = b"[" * 3000
    stream = b"Content-Length: %d\r\n\r\n" % len(body) + body
    stream += frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    stream += frame({"jsonrpc": "2.0", "method": "exit"})
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "c"), "XDG_STATE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "cadenza", "serve", "--log-level", "WARNING"],
        input=stream,
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert "Traceback" not in done.stderr.decode(), done.stderr.decode()
    [error, shutdown] = _messages(done.stdout)
    assert error["id"] is None and error["error"]["code"] == -32700
    assert shutdown["id"] == 2  # still serving: answered (not initialized yet)
