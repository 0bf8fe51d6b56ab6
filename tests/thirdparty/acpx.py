"""Running acpx (npm ``acpx`` 0.19.1, a headless ACP client) against ``cadenza acp``.

acpx is installed by ``scripts/thirdparty.sh`` into ``.thirdparty/`` with a Node 22 from npm
(acpx needs Node >= 22.13). Each run gets its own ``HOME`` (acpx keeps its session records
under ``~/.acpx``) and XDG folders (Cadenza's transcripts), and the scripted model process's
URL. ``--format json`` prints the raw JSON-RPC traffic as NDJSON, which the tests parse.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / ".thirdparty" / "node_modules" / ".bin"
RUN_S = 60.0
"""The bound of one acpx command (a cold ``cadenza acp`` start takes a few seconds here)."""
OWNER_TTL_S = "5"
"""acpx keeps a session's agent alive this long after a prompt (its queue owner)."""
OWNER_STOPPING = "Queue owner is shutting down"
"""acpx's answer to a prompt that reaches the owner just as its TTL ends (acpx's own race)."""


def missing() -> str | None:
    """Why acpx cannot run here, or None."""
    if not (BIN / "acpx").exists():
        return "acpx is not installed: run scripts/thirdparty.sh (npm acpx@0.19.1 + Node 22)"
    return None


@dataclass(frozen=True, kw_only=True)
class Run:
    """One finished acpx command."""

    code: int
    stdout: str
    stderr: str

    def messages(self) -> list[dict[str, Any]]:
        """The NDJSON lines of ``--format json``, each parsed (every line must be JSON)."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


class Acpx:
    """acpx bound to one workspace, one home folder and one model URL."""

    def __init__(self, *, workspace: Path, home: Path, model_url: str) -> None:
        self.workspace = workspace
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OPENAI_", "CADENZA_", "OLLAMA_", "XDG_"))
        }
        for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
            folder = home / name.lower()
            folder.mkdir(exist_ok=True)
            env[name] = str(folder)
        # acpx's Node first; the venv's bin holds the ``cadenza`` command acpx spawns.
        env["PATH"] = os.pathsep.join([str(BIN), str(Path(sys.executable).parent), env["PATH"]])
        env["HOME"] = str(home)
        env["OPENAI_BASE_URL"] = model_url
        env["OPENAI_API_KEY"] = "test-key"
        env["CADENZA_MODEL"] = "openai/test"
        self.env = env

    def command(self, *args: str) -> list[str]:
        """The argv of an acpx command with Cadenza as the agent."""
        acpx = shutil.which("acpx", path=self.env["PATH"]) or str(BIN / "acpx")
        return [
            acpx,
            "--agent",
            "cadenza acp",
            "--cwd",
            str(self.workspace),
            "--ttl",
            OWNER_TTL_S,
            *args,
        ]

    def run(self, *args: str, timeout: float = RUN_S) -> Run:
        """Run one acpx command to its end (bounded by ``timeout``).

        A command that met acpx's owner while it stopped (``OWNER_STOPPING``: nothing reached
        Cadenza) is run again, at most twice: a slow machine must not turn acpx's race into a
        failure of this suite.
        """
        for _ in range(3):
            done = subprocess.run(
                self.command(*args),
                env=self.env,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
            if done.returncode == 0 or OWNER_STOPPING not in done.stdout + done.stderr:
                break
            time.sleep(1.0)
        return Run(code=done.returncode, stdout=done.stdout, stderr=done.stderr)

    def start(self, *args: str) -> subprocess.Popen[str]:
        """Start an acpx command and return at once (a prompt to cancel)."""
        return subprocess.Popen(
            self.command(*args),
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )

    def journal(self) -> list[dict[str, Any]]:
        """Every JSON-RPC message acpx recorded for its sessions (``~/.acpx/sessions``)."""
        found: list[dict[str, Any]] = []
        for path in sorted((self.home / ".acpx" / "sessions").glob("*.stream.ndjson")):
            for line in path.read_text(encoding="utf-8").splitlines():
                message = json.loads(line)
                if message.get("jsonrpc") == "2.0":
                    found.append(message)
        return found


def updates(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``session/update`` payloads, in order."""
    return [m["params"]["update"] for m in messages if m.get("method") == "session/update"]


def kinds(messages: list[dict[str, Any]]) -> list[str]:
    """The kinds of the session updates, in order."""
    return [u["sessionUpdate"] for u in updates(messages)]


def requests(messages: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    """The requests of ``method`` (messages with an id and that method)."""
    return [m for m in messages if m.get("method") == method and "id" in m]


AGENT_METHODS = ("fs/", "terminal/", "session/request_permission", "session/update")
"""Methods the agent calls on the client; every other method is the client's."""

SHAPES = {
    "session/prompt": "stopReason",
    "terminal/create": "terminalId",
    "fs/read_text_file": "content",
}
"""A result key that tells a response to these methods apart from another with the same id."""


def _side(method: str) -> str:
    return "agent" if method.startswith(AGENT_METHODS) else "client"


def response_to(messages: list[dict[str, Any]], request: dict[str, Any]) -> dict[str, Any]:
    """The response to ``request``.

    The NDJSON has no direction and both peers number their requests from 0, so the same id
    can be open on both sides: a response goes to the side where its id is open, and when it is
    open on both, to the one whose method's result shape it has, else to one whose method has no
    known shape, else to the older request.
    """
    pending: dict[tuple[str, Any], dict[str, Any]] = {}
    for message in messages:
        if "method" in message:
            if "id" in message:
                pending[(_side(message["method"]), message["id"])] = message
            continue
        candidates = [r for (side, rid), r in pending.items() if rid == message.get("id")]
        if not candidates:
            continue
        chosen = candidates[0]
        if len(candidates) > 1:
            result = message.get("result") or {}
            fits = [c for c in candidates if SHAPES.get(c["method"], "") in result]
            unshaped = [c for c in candidates if c["method"] not in SHAPES]
            chosen = (fits or unshaped or candidates)[0]
        del pending[(_side(chosen["method"]), chosen["id"])]
        if chosen is request:
            return message
    raise AssertionError(f"no response to {request['method']} id {request['id']}")
