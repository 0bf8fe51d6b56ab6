"""Drive a peer agent over the Agent Client Protocol against the same instant fake model.

Each agent gets a clean ``HOME``, config pointing at ``fake_model.py`` on loopback, and is
driven over ACP (newline-delimited JSON-RPC on stdio:
``initialize``, ``session/new``, ``session/prompt``). The fake model answers ``steps`` reads of
one small file (``Read {file_path}`` for claude-agent-acp, ``exec_command cat`` for codex-acp),
then a final answer. Step overhead is measured at the fake model, as for Cadenza. Neither agent
makes an editor round trip (they read the file themselves; the client offers no ``fs``).

The agents are installed with ``npm ci`` in ``benchmarks/peers`` (pinned versions).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import HERE, FakeModel, percentiles_ms, rss_mb

PEERS = HERE / "peers" / "node_modules" / "@zed-industries"


def _version(package: str) -> str:
    try:
        data = json.loads((PEERS / package / "package.json").read_text())
        return str(data.get("version", "?"))
    except OSError:
        return "?"


def _clean_env(home: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TERM")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["HOME"] = str(home)
    env["TMPDIR"] = str(home / "tmp")
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def claude_command(model: FakeModel, home: Path) -> tuple[list[str], dict[str, str]]:
    env = _clean_env(home)
    config = home / "claude-config"
    config.mkdir()
    env.update(
        ANTHROPIC_BASE_URL=model.base,
        ANTHROPIC_API_KEY="bench-key",
        CLAUDE_CONFIG_DIR=str(config),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        IS_SANDBOX="1",
    )
    entry = PEERS / "claude-agent-acp" / "dist" / "index.js"
    return ["node", str(entry)], env


def codex_command(model: FakeModel, home: Path) -> tuple[list[str], dict[str, str]]:
    env = _clean_env(home)
    codex_home = home / "codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        f"""model = "gpt-5.3-codex"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{model.base}/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false

[analytics]
enabled = false

[history]
persistence = "none"

[otel]
exporter = "none"
""",
        encoding="utf-8",
    )
    env.update(CODEX_HOME=str(codex_home), FAKE_API_KEY="bench-key")
    binary = PEERS / "codex-acp-linux-x64" / "bin" / "codex-acp"
    return [str(binary)], env


def _fs(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Answer ``fs/read_text_file`` / ``fs/write_text_file`` as an editor does: from the disk.

    No unsaved buffers here, so the client's text is the file's; a write goes to disk at once.
    """
    path = Path(params["path"])
    try:
        if method == "fs/write_text_file":
            path.write_text(params["content"], encoding="utf-8")
            return {"result": None}
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        first = max(1, int(params.get("line") or 1)) - 1
        limit = params.get("limit")
        chosen = lines[first : first + int(limit)] if limit else lines[first:]
        return {"result": {"content": "".join(chosen)}}
    except OSError as exc:
        return {"error": {"code": -32002, "message": f"{path}: {exc.strerror}"}}


class AcpClient:
    """A minimal ACP client: requests out, the agent's requests answered."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.fs_requests = 0
        self._next = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.updates = 0
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def spawn(cls, command: Any, cwd: Path, env: dict[str, str]) -> AcpClient:
        """Start the agent ``command`` in its own process group and talk to it over stdio."""
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=64 * 1024 * 1024,
            start_new_session=True,
        )
        return cls(process)

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        await self.process.stdin.drain()

    async def request(self, method: str, params: dict[str, Any], timeout: float = 300) -> Any:
        self._next += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next] = future
        await self._send({"id": self._next, "method": method, "params": params})
        return await asyncio.wait_for(future, timeout)

    async def _answer(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method == "session/request_permission":
            options = message.get("params", {}).get("options", [])
            allow = next(
                (o for o in options if str(o.get("kind", "")).startswith("allow")),
                options[0] if options else None,
            )
            outcome: dict[str, Any] = (
                {"outcome": "selected", "optionId": allow["optionId"]}
                if allow
                else {"outcome": "cancelled"}
            )
            await self._send({"id": message["id"], "result": {"outcome": outcome}})
        elif method in ("fs/read_text_file", "fs/write_text_file"):
            await self._send({"id": message["id"], **_fs(method, message.get("params", {}))})
            self.fs_requests += 1
        else:
            await self._send(
                {"id": message["id"], "error": {"code": -32601, "message": f"no {method}"}}
            )

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "method" in message and "id" in message:
                await self._answer(message)
            elif "method" in message:
                self.updates += 1
            elif message.get("id") in self._pending:
                future = self._pending.pop(message["id"])
                if "error" in message:
                    future.set_exception(RuntimeError(json.dumps(message["error"])[:300]))
                else:
                    future.set_result(message.get("result"))
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RuntimeError("the agent exited"))

    async def close(self) -> None:
        """Stop the agent and what it started (its own process group, e.g. Claude Code)."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            try:
                await asyncio.wait_for(self.process.wait(), 10)
                break
            except TimeoutError:
                continue
        self._reader.cancel()


async def run_peer(model: FakeModel, name: str, steps: int) -> dict[str, Any]:
    """Run ``steps`` read steps of peer ``name``; its step overhead and start-up."""
    model.reset()
    with tempfile.TemporaryDirectory(prefix="cadenza-peer-", ignore_cleanup_errors=True) as tmp:
        home = Path(tmp) / "home"
        ws = Path(tmp) / "ws"
        home.mkdir()
        ws.mkdir()
        (ws / "a.txt").write_text("line one\nvalue = alpha\nline three\n", encoding="utf-8")
        if name == "claude-agent-acp":
            command, env = claude_command(model, home)
            target, key, version = str(ws / "a.txt"), "claude", _version("claude-agent-acp")
        elif name == "codex-acp":
            command, env = codex_command(model, home)
            target, key, version = "a.txt", "codex", _version("codex-acp")
        else:
            raise ValueError(f"unknown peer {name!r}")
        if not Path(command[-1]).exists():
            raise FileNotFoundError(f"{command[-1]}: run `npm ci` in benchmarks/peers")
        started = time.perf_counter()
        client = await AcpClient.spawn(command, ws, env)
        try:
            await client.request(
                "initialize",
                {
                    "protocolVersion": 1,
                    "clientCapabilities": {
                        "fs": {"readTextFile": False, "writeTextFile": False},
                        "terminal": False,
                    },
                },
                timeout=120,
            )
            initialized = time.perf_counter() - started
            session = await client.request(
                "session/new", {"cwd": str(ws), "mcpServers": []}, timeout=120
            )
            mode = ((session or {}).get("modes") or {}).get("currentModeId")
            if name == "codex-acp":
                # Full access (no sandbox), as in the recipe's fastest codex run.
                modes = (session or {}).get("modes") or {}
                ids = [m.get("id") for m in modes.get("availableModes", [])]
                if "full-access" in ids:
                    await client.request(
                        "session/set_mode",
                        {"sessionId": session["sessionId"], "modeId": "full-access"},
                    )
                    mode = "full-access"
            task = f"bench-file: {target} bench-steps: {steps} Read the file again and again."
            run_started = time.perf_counter()
            result = await client.request(
                "session/prompt",
                {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": task}]},
                timeout=600,
            )
            wall = time.perf_counter() - run_started
            rss = rss_mb(client.process.pid)
        finally:
            await client.close()
    stats = model.stats()
    gaps = stats["gaps_ns"].get(key, [])
    # The last gap is the one before the final answer; keep only tool-to-tool steps.
    return {
        "version": version,
        "mode": mode,
        "stop_reason": (result or {}).get("stopReason"),
        "steps_requested": steps,
        "model_requests": len(stats["request_bytes"].get(key, [])),
        "step_overhead_ms": percentiles_ms(gaps[:steps]),
        "spawn_to_initialize_ms": round(initialized * 1000, 1),
        "wall_s": round(wall, 2),
        "model_connections": stats["connections"],
        **rss,
    }
