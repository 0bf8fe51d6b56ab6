"""Start-up beside a peer, in one run: spawn → ``initialize`` answered, and → a session ready.

``python benchmarks/startup_peer.py [--repeat N] [--baseline TREE] [--cold]`` spawns, alternating so
every agent sees the same load: ``cadenza acp`` and ``cadenza serve`` of this tree, the same
of an older source tree (``--baseline``, e.g. ``git archive OLD server | tar -x -C DIR``),
and the Node peer ``claude-agent-acp`` (``npm ci`` in ``benchmarks/peers``). Per spawn it
records the time to the ``initialize`` answer and, for ACP agents, to the ``session/new``
answer sent right after it (the first session must not get slower for a faster answer).
``--cold``: every spawn gets an empty home folder (a first start on a new machine).
Prints medians and ratios to the peer; writes JSON to ``benchmarks/results``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.common import server_env, table  # noqa: E402
from benchmarks.run import _frame, _read_message  # noqa: E402

PEER = HERE / "peers" / "node_modules" / "@zed-industries" / "claude-agent-acp" / "dist"


def _cadenza(tree: Path | None, face: str) -> list[str]:
    if tree is None:
        return [sys.executable, "-m", "cadenza", face, "--log-level", "WARNING"]
    code = (
        f"import sys; sys.path.insert(0, {str(tree)!r}); from cadenza.cli import main; "
        f"sys.argv = ['cadenza', {face!r}, '--log-level', 'WARNING']; sys.exit(main())"
    )
    return [sys.executable, "-c", code]


def _acp_line(stream: Any, want: int) -> None:
    while True:
        line = stream.readline()
        if not line:
            raise RuntimeError("the agent closed stdout")
        if json.loads(line).get("id") == want:
            return


def spawn_acp(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(spawn → initialize answered, spawn → session/new answered), seconds."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert process.stdin is not None and process.stdout is not None
    init = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}
    process.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode()
        + b"\n"
    )
    process.stdin.flush()
    _acp_line(process.stdout, 1)
    initialized = time.perf_counter() - started
    new = {"cwd": str(cwd), "mcpServers": []}
    process.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": new}).encode()
        + b"\n"
    )
    process.stdin.flush()
    _acp_line(process.stdout, 2)
    ready = time.perf_counter() - started
    process.stdin.close()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return initialized, ready


def spawn_lsp(command: list[str], env: dict[str, str], root: Path) -> tuple[float, float]:
    """(spawn → initialize answered, nan): the LSP face has no session to open here."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert process.stdin is not None and process.stdout is not None
    params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
    process.stdin.write(
        _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    )
    process.stdin.flush()
    while _read_message(process.stdout).get("id") != 1:
        pass
    elapsed = time.perf_counter() - started
    process.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    process.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    process.stdin.flush()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return elapsed, float("nan")


def _peer_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TERM")}
    (home / "claude").mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",
        ANTHROPIC_API_KEY="bench-key",
        CLAUDE_CONFIG_DIR=str(home / "claude"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
    )
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=8)
    parser.add_argument("--baseline", type=Path, help="an older source tree (holds cadenza/)")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--cold", action="store_true", help="an empty home folder per spawn")
    args = parser.parse_args()
    homes = itertools.count()
    with tempfile.TemporaryDirectory(
        prefix="cadenza-startpeer-", ignore_cleanup_errors=True
    ) as tmp:
        root = Path(tmp)
        shared = server_env("http://127.0.0.1:9/v1", root / "home")
        peer_shared = _peer_env(root / "peer")

        def env() -> dict[str, str]:
            return (
                server_env("http://127.0.0.1:9/v1", root / f"home{next(homes)}")
                if args.cold
                else shared
            )

        def peer_env() -> dict[str, str]:
            return _peer_env(root / f"peer{next(homes)}") if args.cold else peer_shared

        agents: dict[str, Any] = {
            "cadenza acp": lambda: spawn_acp(_cadenza(None, "acp"), env(), root),
            "cadenza serve": lambda: spawn_lsp(_cadenza(None, "serve"), env(), root),
        }
        if args.baseline:
            agents["baseline acp"] = lambda: spawn_acp(_cadenza(args.baseline, "acp"), env(), root)
            agents["baseline serve"] = lambda: spawn_lsp(
                _cadenza(args.baseline, "serve"), env(), root
            )
        if (PEER / "index.js").exists():
            agents["claude-agent-acp (Node)"] = lambda: spawn_acp(
                ["node", str(PEER / "index.js")], peer_env(), root
            )
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in agents}
        for _ in range(args.repeat + 1):  # the first round warms caches and is dropped
            for name, spawn in agents.items():
                times[name].append(spawn())
    peer = "claude-agent-acp (Node)"
    peer_init = statistics.median(t[0] for t in times[peer][1:]) if peer in times else None
    rows, out = [], {}
    for name, runs in times.items():
        init = statistics.median(t[0] for t in runs[1:]) * 1000
        ready = statistics.median(t[1] for t in runs[1:]) * 1000
        ratio = init / (peer_init * 1000) if peer_init else float("nan")
        out[name] = {"initialize_ms": round(init, 1), "session_new_ms": round(ready, 1)}
        out[name]["min_initialize_ms"] = round(min(t[0] for t in runs[1:]) * 1000, 1)
        rows.append([name, round(init, 1), out[name]["min_initialize_ms"], round(ready, 1)])
        rows[-1].append(f"{ratio:.2f}")
    print(table(("agent", "→ initialize median ms", "min ms", "→ session/new ms", "÷ peer"), rows))
    load = os.getloadavg()[0]
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    result = {"load": load, "repeat": args.repeat, "cold": args.cold, "agents": out}
    (args.out / f"startup-peer-{stamp}.json").write_text(json.dumps(result, indent=2))
    print(f"load {load:.1f}")


if __name__ == "__main__":
    main()
