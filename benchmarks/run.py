"""Cadenza benchmarks: ``python benchmarks/run.py NAME [...]`` prints a table, saves JSON.

Names: ``step`` (step overhead, one session, 1,000 steps), ``steps`` (step overhead and server
CPU per step on both faces with the editor round trip, this tree and any ``--tree`` alternating,
``--rounds`` of ``--steps``), ``compare`` (step overhead of
an older source tree, ``--baseline``, and this one, alternating in one run; and
``compare-startup`` for spawn → ``initialize``), ``concurrency``
(1, 10, 50, 200 sessions in one server), ``startup`` (spawn → ``initialize`` answered; import
time), ``edits`` (``edit_file`` on 1 MB and 10 MB files; position conversion), ``growth``
(step overhead and memory at 10, 100, 1,000 steps), ``peer`` (ACP agents through the same
fake model), ``memory`` (RSS of one ACP server with 200 idle
sessions; ``compare-memory`` against ``--baseline``), ``compare-edits`` (``edit_file`` on 10 MB
against ``--baseline``), ``all`` (every one but the compares). ``--smoke``: a quick run of
step, steps, concurrency, startup and edits with small counts (< 60 s), for CI.

Results go to ``benchmarks/results/NAME-DATE.json`` with the machine, its load, the command,
the date and the commit. The model is ``fake_model.py``, an instant scripted server in its own
process; step overhead is measured there (reply N sent → request N+1 received).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from benchmarks.common import (
    FakeModel,
    fake_model,
    machine,
    percentiles_ms,
    save,
    server_from,
    table,
)
from benchmarks.concurrency import bench_concurrency, compare_concurrency
from benchmarks.driver import big_text, run_sessions
from benchmarks.memory import bench_memory
from benchmarks.steps import bench_steps

REPO_SERVER = Path(__file__).resolve().parent.parent / "server"

STEP_ROW = (
    "sessions",
    "steps",
    "n",
    "median ms",
    "p90 ms",
    "p99 ms",
    "max ms",
    "server CPU ms/step",
    "RSS MB",
    "wall s",
)


def _step_row(summary: dict[str, Any]) -> list[Any]:
    o = summary["step_overhead_ms"]
    return [
        summary["sessions"],
        summary["steps_per_session"],
        o["n"],
        o["median"],
        o["p90"],
        o["p99"],
        o.get("max", ""),
        summary.get("server_cpu_ms_per_step", ""),
        summary.get("peak_rss_mb", ""),
        summary["wall_s"],
    ]


# --- step overhead ---------------------------------------------------------------------------


async def bench_step(model: FakeModel, steps: int) -> dict[str, Any]:
    run = await run_sessions(model, sessions=1, steps=steps)
    summary = run.summary()
    print(table(STEP_ROW, [_step_row(summary)]))
    return {"step": summary, "target_median_ms": 1.0}


# --- concurrency -----------------------------------------------------------------------------

CONCURRENCY = ((1, 300), (10, 100), (50, 40), (200, 20))
SMOKE_CONCURRENCY = ((1, 40), (10, 10))


# --- growth ----------------------------------------------------------------------------------


async def bench_growth(model: FakeModel, lengths: tuple[int, ...]) -> dict[str, Any]:
    rows, out = [], []
    for steps in lengths:
        run = await run_sessions(model, sessions=1, steps=steps)
        gaps = run.gaps_ns
        tail = gaps[-max(1, len(gaps) // 10) :]
        sizes = [s for v in run.request_bytes.values() for s in v]
        entry = {
            "steps": steps,
            "all_steps_ms": percentiles_ms(gaps),
            "last_10pct_ms": percentiles_ms(tail),
            "last_request_kb": round(sizes[-1] / 1024, 1) if sizes else 0,
            "server_cpu_ms_per_step": run.summary()["server_cpu_ms_per_step"],
            **run.rss,
        }
        out.append(entry)
        rows.append(
            [
                steps,
                entry["all_steps_ms"]["median"],
                entry["last_10pct_ms"]["median"],
                entry["last_10pct_ms"]["p90"],
                entry["last_request_kb"],
                entry["server_cpu_ms_per_step"],
                run.rss["peak_rss_mb"],
            ]
        )
    print(
        table(
            (
                "steps",
                "median ms (all)",
                "median ms (last 10%)",
                "p90 ms (last 10%)",
                "last request KB",
                "server CPU ms/step (all)",
                "peak RSS MB",
            ),
            rows,
        )
    )
    return {"lengths": out}


# --- start-up --------------------------------------------------------------------------------


def _frame(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def _read_message(stream: Any) -> dict[str, Any]:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            raise RuntimeError("server closed stdout")
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    data: dict[str, Any] = json.loads(stream.read(length))
    return data


def spawn_to_initialize(
    env: dict[str, str], root: Path, command: tuple[str, ...] | None = None
) -> float:
    """Seconds from spawning ``python -m cadenza serve`` to its ``initialize`` answer."""
    started = time.perf_counter()
    process = subprocess.Popen(
        list(command or (sys.executable, "-m", "cadenza", "serve", "--log-level", "WARNING")),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
    process.stdin.write(
        _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    )
    process.stdin.flush()
    while True:
        message = _read_message(process.stdout)
        if message.get("id") == 1:
            break
    elapsed = time.perf_counter() - started
    process.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    process.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    process.stdin.flush()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return elapsed


IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def import_profile(module: str) -> dict[str, Any]:
    """``-X importtime`` of ``module``: total and the costliest top-level imports (ms)."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in out.stderr.splitlines():
        found = IMPORT_LINE.match(line)
        if found:
            rows.append((found.group(4), len(found.group(3)), int(found.group(2)) / 1000))
    total = next((ms for name, depth, ms in rows if name == module), float("nan"))
    top_level = sorted(
        ((name, ms) for name, depth, ms in rows if depth == 1 and name != module),
        key=lambda r: -r[1],
    )
    # Everything imported anywhere, by cumulative time: finds deep costs (playwright...).
    heavy = sorted({name: ms for name, _, ms in rows}.items(), key=lambda r: -r[1])
    return {
        "module": module,
        "cumulative_ms": round(total, 1),
        "top_level": [(n, round(ms, 1)) for n, ms in top_level[:15]],
        "heaviest": [(n, round(ms, 1)) for n, ms in heavy[:40]],
    }


def wall_import(module: str, repeat: int) -> float:
    """Median wall seconds of ``python -c 'import MODULE'`` minus ``python -c pass``."""

    def once(code: str) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - started

    base = statistics.median(once("pass") for _ in range(repeat))
    full = statistics.median(once(f"import {module}") for _ in range(repeat))
    return full - base


def compare_startup(trees: dict[str, Path], repeat: int) -> dict[str, Any]:
    """spawn → ``initialize`` of several source trees, alternating (same load for each)."""
    import tempfile

    from benchmarks.common import server_env

    times: dict[str, list[float]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="cadenza-start-") as tmp:
        env = server_env("http://127.0.0.1:9/v1", Path(tmp))
        for _ in range(repeat + 1):
            for name, tree in trees.items():
                times[name].append(spawn_to_initialize(env, Path(tmp), server_from(tree)))
    out = {
        name: {
            "tree": str(trees[name]),
            "median_ms": round(statistics.median(t[1:]) * 1000, 1),  # the first warms up
            "min_ms": round(min(t[1:]) * 1000, 1),
        }
        for name, t in times.items()
    }
    rows = [[name, v["median_ms"], v["min_ms"]] for name, v in out.items()]
    print(table(("server", "spawn → initialize median ms", "min ms"), rows))
    return out


def bench_startup(
    repeat: int, modules: tuple[str, ...] = ("cadenza.lsp.server",)
) -> dict[str, Any]:
    import tempfile

    from benchmarks.common import server_env

    with tempfile.TemporaryDirectory(prefix="cadenza-start-") as tmp:
        env = server_env("http://127.0.0.1:9/v1", Path(tmp))
        root = Path(tmp)
        spawn_to_initialize(env, root)  # warm the file cache and .pyc files
        times = [spawn_to_initialize(env, root) for _ in range(repeat)]
    result: dict[str, Any] = {
        "spawn_to_initialize_ms": {
            "median": round(statistics.median(times) * 1000, 1),
            "min": round(min(times) * 1000, 1),
            "max": round(max(times) * 1000, 1),
            "n": repeat,
        },
        "python_startup_ms": None,
        "imports": {},
        "target_ms": 300,
    }
    rows = []
    for module in modules:
        profile = import_profile(module)
        profile["wall_ms"] = round(wall_import(module, max(3, repeat // 2)) * 1000, 1)
        result["imports"][module] = profile
        rows.append([module, profile["cumulative_ms"], profile["wall_ms"]])
    spawn = result["spawn_to_initialize_ms"]
    print(
        table(
            ("measure", "median ms", "min ms", "max ms"),
            [["spawn → initialize answered", spawn["median"], spawn["min"], spawn["max"]]],
        )
    )
    print()
    print(table(("module", "-X importtime cumulative ms", "wall ms (minus bare python)"), rows))
    print()
    heaviest = result["imports"]["cadenza.lsp.server"]["heaviest"][:20]
    print(table(("import (anywhere under cadenza.lsp.server)", "cumulative ms"), heaviest))
    return result


# --- edits at size ---------------------------------------------------------------------------


def bench_edits_micro(sizes: tuple[int, ...]) -> dict[str, Any]:
    """``cadenza.lsp.edits.text_edits`` (UTF-16 positions) at size, in this process."""
    from pygls.workspace.position_codec import PositionCodec

    from cadenza.lsp.edits import text_edits

    codec = PositionCodec(encoding="utf-16")  # type: ignore[arg-type]
    cases: list[tuple[str, str, str]] = []
    for size in sizes:
        old = big_text(size)
        cases.append((f"one change, {size // 1_000_000} MB", old, old.replace("alpha", "beta")))
    line = "filler line with some ordinary text in it, nothing to see here.\n"
    many_old = line * (1_000_000 // len(line))
    lines = many_old.splitlines(keepends=True)
    for i in range(0, len(lines), 100):
        lines[i] = lines[i].replace("filler", "FILLER")
    cases.append(("1 MB, 1 change every 100 lines", many_old, "".join(lines)))
    astral = "😀" * 500_000 + "\n"  # one 2 MB line (UTF-8), 1M UTF-16 code units
    cases.append(("one line of 500k astral chars, change at end", astral, astral[:-2] + "x\n"))
    cases.append(
        (
            "10 lines of 100k astral chars, change at end",
            ("🎼" * 100_000 + "\n") * 10,
            ("🎼" * 100_000 + "\n") * 9 + "🎼" * 99_999 + "x\n",
        )
    )
    rows, out = [], []
    for name, old, new in cases:
        times = []
        count = 0
        for _ in range(3):
            started = time.perf_counter()
            count = len(text_edits(old, new, codec))
            times.append(time.perf_counter() - started)
        ms = round(min(times) * 1000, 1)
        out.append({"case": name, "chars": len(old), "edits": count, "best_of_3_ms": ms})
        rows.append([name, len(old), count, ms])
    print(table(("text_edits (UTF-16)", "chars", "TextEdits", "best of 3 ms"), rows))
    return {"text_edits": out}


async def bench_edits(
    model: FakeModel, sizes: tuple[int, ...], steps: int, *, micro: bool = True
) -> dict[str, Any]:
    rows, out = [], []
    for size in sizes:
        run = await run_sessions(model, sessions=1, steps=steps, file_text=big_text(size))
        summary = run.summary()
        gaps = run.per_session.get("f0.txt", [])
        # Gap i follows reply i (0-based): odd replies are the edits, even ones the reads.
        edit_gaps = gaps[1::2]
        read_gaps = gaps[0::2]
        entry = {
            "size_bytes": size,
            "edit_step_ms": percentiles_ms(edit_gaps),
            "read_step_ms": percentiles_ms(read_gaps),
            **run.rss,
            "stop_reasons": summary["stop_reasons"],
            "files_edited_as_scripted": summary["files_edited_as_scripted"],
        }
        out.append(entry)
        rows.append(
            [
                f"{size / 1e6:g} MB",
                entry["edit_step_ms"]["median"],
                entry["edit_step_ms"]["p90"],
                entry["read_step_ms"]["median"],
                run.rss["peak_rss_mb"],
            ]
        )
    print(
        table(
            ("file", "edit step median ms", "edit step p90 ms", "read step median ms", "RSS MB"),
            rows,
        )
    )
    if not micro:
        return {"end_to_end": out, "target_ms_10mb": 50}
    print()
    return {"end_to_end": out, **bench_edits_micro(sizes), "target_ms_10mb": 50}


# --- peer --------------------------------------------------------------------------------------


async def bench_peer(model: FakeModel, steps: int, which: list[str]) -> dict[str, Any]:
    from benchmarks.peer import run_peer

    rows, out = [], {}
    cadenza = await run_sessions(model, sessions=1, steps=steps + 1, script="read")
    c_stats = percentiles_ms(cadenza.gaps_ns)
    out["cadenza_read"] = c_stats
    rows.append(
        ["cadenza (read_file; no editor round trip)", c_stats["median"], c_stats["p90"], ""]
    )
    rw = await run_sessions(model, sessions=1, steps=steps + 1, script="rw")
    rw_stats = percentiles_ms(rw.gaps_ns)
    out["cadenza_rw"] = rw_stats
    rows.append(
        ["cadenza (read_file/edit_file, applyEdit)", rw_stats["median"], rw_stats["p90"], ""]
    )
    for name in which:
        try:
            result = await run_peer(model, name, steps)
        except Exception as exc:  # report why a peer could not run, go on with the others
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
            rows.append([name, "failed", str(exc)[:60], ""])
            continue
        out[name] = result
        ratio = result["step_overhead_ms"]["median"] / max(c_stats["median"], 1e-6)
        result["ratio_to_cadenza_read"] = round(ratio, 1)
        rows.append(
            [
                f"{name} {result.get('version', '')}",
                result["step_overhead_ms"]["median"],
                result["step_overhead_ms"]["p90"],
                f"{ratio:.1f}x",
            ]
        )
    print(table(("agent", "median ms", "p90 ms", "peer / cadenza"), rows))
    return out


# --- before/after ------------------------------------------------------------------------------


async def bench_compare(
    model: FakeModel, baseline: Path, steps: int, rounds: int
) -> dict[str, Any]:
    """Step overhead of a baseline tree and of this one, alternating, in the same run."""
    trees = {"baseline": baseline.resolve(), "current": REPO_SERVER}
    samples: dict[str, list[int]] = {name: [] for name in trees}
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    connections: dict[str, int] = {}
    for _ in range(rounds):
        for name, tree in trees.items():
            run = await run_sessions(
                model, sessions=1, steps=steps, server_command=server_from(tree)
            )
            samples[name] += run.gaps_ns
            cpu[name].append(run.summary()["server_cpu_ms_per_step"])
            connections[name] = run.connections
    rows, out = [], {}
    for name in trees:
        stats = percentiles_ms(samples[name])
        out[name] = {
            "tree": str(trees[name]),
            "step_overhead_ms": stats,
            "server_cpu_ms_per_step": round(statistics.median(cpu[name]), 3),
            "model_connections_per_run": connections[name],
        }
        rows.append(
            [
                name,
                stats["n"],
                stats["median"],
                stats["p90"],
                stats["p99"],
                out[name]["server_cpu_ms_per_step"],
                connections[name],
            ]
        )
    print(
        table(
            (
                "server",
                "n",
                "median ms",
                "p90 ms",
                "p99 ms",
                "server CPU ms/step",
                "model connections/run",
            ),
            rows,
        )
    )
    return out


async def compare_edits(model: FakeModel, baseline: Path, size: int, rounds: int) -> dict[str, Any]:
    """The ``edit_file`` step on a ``size``-byte file: a baseline tree and this one, alternating."""
    trees = {"baseline": baseline.resolve(), "current": REPO_SERVER}
    edits: dict[str, list[int]] = {name: [] for name in trees}
    reads: dict[str, list[int]] = {name: [] for name in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            run = await run_sessions(
                model,
                sessions=1,
                steps=8,
                file_text=big_text(size),
                server_command=server_from(tree),
            )
            gaps = run.per_session.get("f0.txt", [])
            edits[name] += gaps[1::2]  # odd replies are the edits (see bench_edits)
            reads[name] += gaps[0::2]
    out = {
        name: {
            "edit_step_ms": percentiles_ms(edits[name]),
            "read_step_ms": percentiles_ms(reads[name]),
        }
        for name in trees
    }
    rows = [
        [
            name,
            r["edit_step_ms"]["n"],
            r["edit_step_ms"]["median"],
            r["edit_step_ms"]["p90"],
            r["read_step_ms"]["median"],
        ]
        for name, r in out.items()
    ]
    heads = ("server", "edits", "edit step median ms", "edit step p90 ms", "read step median ms")
    print(table(heads, rows))
    return {"size_bytes": size, **out}


async def show_memory(model: FakeModel, sessions: int) -> dict[str, Any]:
    """``bench_memory``, printed as a table."""
    r = await bench_memory(model, sessions)
    heads = ("RSS MB, 1 session", f"RSS MB, {sessions + 1} sessions", "KB/session", "wall s")
    row = [r["rss_mb_one_session"], r["rss_mb_all_sessions"], r["idle_session_kb"], r["wall_s"]]
    print(table(heads, [row]))
    return r


async def compare_memory(model: FakeModel, baseline: Path, sessions: int) -> dict[str, Any]:
    """Idle-session memory of a baseline tree and of this one, alternating (2 rounds)."""
    trees = {"baseline": baseline.resolve(), "current": REPO_SERVER}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(2):
        for name, tree in trees.items():
            command = server_from(tree, "acp")
            runs[name].append(await bench_memory(model, sessions, server_command=command))
    rows = [
        [name, r["rss_mb_one_session"], r["rss_mb_all_sessions"], r["idle_session_kb"]]
        for name, results in runs.items()
        for r in results
    ]
    heads = ("server", "RSS MB, 1 session", f"RSS MB, {sessions + 1} sessions", "KB/session")
    print(table(heads, rows))
    return runs


# --- main --------------------------------------------------------------------------------------


async def _sync(value: dict[str, Any]) -> dict[str, Any]:
    return value


async def run_one(name: str, model: FakeModel, args: argparse.Namespace) -> dict[str, Any]:
    """Run the benchmark ``name``; its results."""
    if name == "smoke":
        return {
            "step": await bench_step(model, 200),
            "steps": await bench_steps(model, {"current": REPO_SERVER}, steps=20, rounds=1),
            "concurrency": await bench_concurrency(model, SMOKE_CONCURRENCY, ("lsp",)),
            "startup": bench_startup(3),
            "edits_micro": bench_edits_micro((1_000_000,)),
            "edits": await bench_edits(model, (1_000_000,), 6, micro=False),
            "memory": await bench_memory(model, 20),
        }
    if name == "startup":
        return bench_startup(10, ("cadenza.lsp.server", "cadenza.lsp.main", "cadenza.cli"))
    benchmarks = {
        "step": lambda: bench_step(model, args.steps),
        "concurrency": lambda: bench_concurrency(
            model, CONCURRENCY, tuple(args.faces), args.think_ms
        ),
        "compare-concurrency": lambda: compare_concurrency(
            model,
            {
                "baseline": (args.baseline.resolve(), server_from),
                "current": (REPO_SERVER, server_from),
            },
            sessions=args.sessions,
            steps=args.concurrency_steps,
            think_ms=args.think_ms,
            rounds=2,
            faces=tuple(args.faces),
        ),
        "steps": lambda: bench_steps(
            model,
            {**{str(t): t.resolve() for t in args.trees}, "current": REPO_SERVER},
            steps=min(args.steps, 1000),
            rounds=args.rounds,
        ),
        "growth": lambda: bench_growth(model, (10, 100, 1000)),
        "edits": lambda: bench_edits(model, (1_000_000, 10_000_000), 20),
        "peer": lambda: bench_peer(model, args.peer_steps, args.peers),
        "compare": lambda: bench_compare(model, args.baseline, 300, 3),
        "memory": lambda: show_memory(model, 200),
        "compare-edits": lambda: compare_edits(model, args.baseline, 10_000_000, 3),
        "compare-memory": lambda: compare_memory(model, args.baseline, 200),
        "compare-startup": lambda: _sync(
            compare_startup({"baseline": args.baseline, "current": REPO_SERVER}, 10)
        ),
    }
    if name not in benchmarks:
        raise SystemExit(f"unknown benchmark {name!r}")
    return await benchmarks[name]()


async def main_async(args: argparse.Namespace) -> None:
    names = args.names or ["step"]
    if args.smoke:
        names = ["smoke"]
    if "all" in names:
        names = ["step", "steps", "concurrency", "growth", "edits", "memory", "startup", "peer"]
    print(f"machine: {json.dumps(machine())}")
    with fake_model() as model:
        for name in names:
            started = time.monotonic()
            print(f"\n## {name}\n", flush=True)
            result = await run_one(name, model, args)
            path = save(name, result, started, args.out)
            shown = path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path
            print(f"\nsaved {shown}")
            print(f"load average now: {machine()['load_avg']}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "names", nargs="*", help="step, concurrency, growth, edits, startup, peer, all"
    )
    parser.add_argument("--smoke", action="store_true", help="quick CI run (< 60 s)")
    parser.add_argument(
        "--out", type=Path, default=None, help="folder for the JSON results (benchmarks/results)"
    )
    parser.add_argument("--steps", type=int, default=1000, help="steps of the step benchmark")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=Path("/tmp/cadenza-base/server"),
        help="compare: a source tree of an older cadenza (git archive OLD server | tar -x)",
    )
    parser.add_argument(
        "--tree",
        dest="trees",
        type=Path,
        action="append",
        default=[],
        help="steps: an older source tree to run beside this one (repeatable)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="steps: rounds of every server")
    parser.add_argument("--peer-steps", type=int, default=50, help="tool steps per peer run")
    parser.add_argument(
        "--faces", nargs="*", default=["lsp", "acp"], help="concurrency: lsp, acp or both"
    )
    parser.add_argument(
        "--think-ms", type=int, default=0, help="concurrency: the model's delay per reply"
    )
    parser.add_argument(
        "--sessions", type=int, default=200, help="compare-concurrency: sessions at once"
    )
    parser.add_argument(
        "--concurrency-steps", type=int, default=10, help="compare-concurrency: steps each"
    )
    parser.add_argument(
        "--peers",
        nargs="*",
        default=["claude-agent-acp", "codex-acp"],
        help="peer agents (installed with npm under benchmarks/peers)",
    )
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
