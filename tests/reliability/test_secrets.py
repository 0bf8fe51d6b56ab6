"""Suite 6, secrets: a fake API key in the server's environment never comes out.

The server runs with ``OPENAI_API_KEY=sk-test-SECRET-…`` and ``--log-level DEBUG`` (every
message it sends is logged) over raw pipes, so every byte it writes to stdout is kept. Its
sessions: ordinary tool calls; ``run_command`` printing the environment and the key; reading
a workspace ``.env`` holding the key, and editing it (the diff shows the key); a model server
that quotes the ``Authorization`` header back in a 401 and in a 500. Then the key is searched
in the server's stderr log, in every file of the state folder (transcripts, permissions; undo
checkpoint blobs excepted, see below), and in every message the client received.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.lsp.harness import server_env, write_user_config
from tests.reliability.faulty_openai import Fault, FaultyOpenAI, call, text
from tests.reliability.rawserver import RawServer, initialize_params, message

KEY = "sk-test-SECRET-0123456789abcdefABCDEF"
OTHER_KEYS = {
    # keys of providers the sessions do not use: nothing registers them with a provider
    "ANTHROPIC_API_KEY": "sk-ant-test-SECRET-ANTHROPIC-0123456789",
    "OPENROUTER_API_KEY": "sk-or-test-SECRET-OPENROUTER-0123456789",
}


def allow(request: dict[str, Any]) -> Any:
    """Answer the server's prompts: allow permissions (either form), decline the rest."""
    if request.get("method") == "window/showMessageRequest":
        titles = [a["title"] for a in request["params"].get("actions") or []]
        return {"title": "Allow once"} if "Allow once" in titles else None
    return None


def _wait_end(server: RawServer, session_id: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for note in list(server.notifications):
            params = note.get("params") or {}
            update = params.get("update") or {}
            if (
                params.get("sessionId") == session_id
                and update.get("sessionUpdate") == "session_end"
            ):
                return update
        time.sleep(0.05)
    raise AssertionError(f"session {session_id} did not end")


def test_the_api_key_never_appears(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    (root / "app.py").write_text("print('hi')\n")
    home = tmp_path / "home"
    stderr = tmp_path / "stderr.log"
    sessions = [
        (
            "ordinary work",
            [
                call("read_file", {"path": "app.py"}, "c1"),
                call("write_file", {"path": "out.txt", "content": "ok\n"}, "c2"),
                text("done"),
            ],
        ),
        (
            "the environment through run_command",
            [
                call("run_command", {"command": "env"}, "c1"),
                call("run_command", {"command": "echo key=$OPENAI_API_KEY"}, "c2"),
                text("done"),
            ],
        ),
        ("a workspace .env", [call("read_file", {"path": ".env"}, "c1"), text("done")]),
        (
            "an edit of .env (its diff shows the key)",
            [
                call(
                    "edit_file", {"path": ".env", "old_string": "\n", "new_string": "\nX=1\n"}, "c1"
                ),
                text("done"),
            ],
        ),
        ("a 401 quoting the key", [Fault(kind="echo_auth", status=401)]),
        ("a 500 quoting the key", [Fault(kind="echo_auth", status=500)] * 2),
    ]
    with FaultyOpenAI() as model:
        env = server_env(model.base_url, home)
        env["OPENAI_API_KEY"] = KEY
        env.update(OTHER_KEYS)
        write_user_config(env, {"providers": {"openai": {"attempts": 2}}})
        server = RawServer(env, stderr_path=stderr, log_level="DEBUG", answer=allow)
        try:
            init = server.request(1, "initialize", initialize_params(root))
            assert init is not None and "result" in init
            server.send(message({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
            ends = []
            for n, (task, faults) in enumerate(sessions):
                model.script(*faults)
                answer = server.request(
                    100 + n,
                    "workspace/executeCommand",
                    {
                        "command": "cadenza.startSession",
                        "arguments": [{"task": task, "model": "openai/test"}],
                    },
                )
                assert answer is not None and "result" in answer, answer
                ends.append(_wait_end(server, answer["result"]["sessionId"]))
            listed = server.request(
                200, "workspace/executeCommand", {"command": "cadenza.listSessions"}
            )
            assert listed is not None and len(listed["result"]["sessions"]) == len(sessions)
            server.request(201, "shutdown", None)
            server.send(message({"jsonrpc": "2.0", "method": "exit"}))
            server.proc.wait(10)
        finally:
            if server.alive():
                server.kill()
            else:
                server.stop()
    assert [e["stopReason"] for e in ends] == ["end_turn"] * 4 + ["error"] * 2, ends
    assert (root / ".env").read_text() == f"OPENAI_API_KEY={KEY}\nX=1\n", "the edit lost the key"
    places: dict[str, bytes] = {
        "stdout (every message the client received)": b"\n".join(server.raw_bodies),
        "stderr log": stderr.read_bytes(),
    }
    for path in home.rglob("*"):
        # Undo checkpoints are exact copies of the files a session changed (here .env, which
        # holds the key): the person's own file, kept byte for byte so that undo restores it.
        if path.is_file() and "blobs" not in path.parts:
            places[str(path.relative_to(home))] = path.read_bytes()
    assert any("transcript" in p or p.endswith(".jsonl") for p in places), places.keys()
    for key in (KEY, *OTHER_KEYS.values()):
        leaks = [where for where, data in places.items() if key.encode() in data]
        assert not leaks, f"the API key {key[:12]}… appears in: {leaks}"
    # the checks saw what they should: the env output and the error reached the client
    stdout = places["stdout (every message the client received)"]
    assert b"OPENAI_BASE_URL" in stdout, "run_command env output not seen"
    assert b"HTTP 401" in stdout or b"401" in stdout
