"""An instant, deterministic model server on loopback for benchmarks (its own process).

It speaks three wire formats, each replaying a script of tool calls without any model:

- OpenAI Chat Completions (``POST /v1/chat/completions``), for Cadenza. Streamed (SSE, the
  provider's default: ``stream: true`` with usage in the last chunk) or whole, as asked.
  The task names the session's file (``bench-file: NAME``) and script (``bench-script: rw``
  alternates ``read_file`` / ``edit_file`` on it, toggling ``alpha`` and ``beta``; ``read``
  only reads, with a different ``limit`` each step so no call repeats). The step is the
  number of assistant messages in the request, so the script goes on forever.
  ``bench-think-ms: N`` makes each reply wait N ms before it is sent, as a hosted model's
  latency would (outside the measured gap, which starts when the reply is sent).
- Anthropic Messages, streamed (``POST /v1/messages``), for ``claude-agent-acp``: ``Read``
  of ``bench-file`` for ``bench-steps`` steps, then a final answer.
- OpenAI Responses, streamed (``POST /v1/responses``), for ``codex-acp``: ``exec_command
  cat FILE`` for ``bench-steps`` steps, then a final answer.

Step overhead is measured here: for each session (keyed by its file name), the time from the
moment the last byte of reply N was handed to the socket (after ``drain``) to the moment
request N+1 was read whole (headers and body). ``GET /stats`` returns the gaps (ns) per
session; ``POST /reset`` clears them. ``POST /watch {"pid": N}``: at each request's arrival
(outside the gaps) the server process's CPU time so far is read from ``/proc/N/stat``, so the
server's CPU between its first and last model request, start-up excluded, is known. The
reply bodies are built after the request is read and before the clock restarts, so the
server's own parsing is never counted.

Run: ``python benchmarks/fake_model.py`` prints ``PORT <n>`` and serves until killed.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from typing import Any

FILE = re.compile(r"bench-file: (\S+)")
SCRIPT = re.compile(r"bench-script: (\w+)")
STEPS = re.compile(r"bench-steps: (\d+)")
THINK = re.compile(r"bench-think-ms: (\d+)")
USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


class Stats:
    """Per-session clocks and gaps."""

    def __init__(self) -> None:
        self.sent: dict[str, int] = {}
        self.gaps: dict[str, list[int]] = {}
        self.requests = 0
        self.connections = 0
        self.request_bytes: dict[str, list[int]] = {}
        self.arrivals: dict[str, list[int]] = {}
        self.pid = 0
        self.cpu: list[float] = []

    def arrived(self, key: str, now: int, size: int) -> None:
        self.requests += 1
        self.arrivals.setdefault(key, []).append(now)
        if self.pid:
            self.cpu.append(server_cpu_s(self.pid))
        last = self.sent.pop(key, None)
        if last is not None:
            self.gaps.setdefault(key, []).append(now - last)
        self.request_bytes.setdefault(key, []).append(size)

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]


STATS = Stats()
TICKS = os.sysconf("SC_CLK_TCK")


def server_cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far, all its threads (``/proc/PID/stat``)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / TICKS


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _find(pattern: re.Pattern[str], texts: list[str], default: str) -> str:
    for text in texts:
        found = pattern.search(text)
        if found:
            return found.group(1)
    return default


# --- OpenAI Chat Completions (Cadenza) -------------------------------------------------------


def chat_call(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(session key, the tool call) for a Chat Completions request."""
    messages = body.get("messages", [])
    users = [_text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    name = _find(FILE, users, "bench.txt")
    script = _find(SCRIPT, users, "rw")
    step = sum(1 for m in messages if m.get("role") == "assistant")
    if script == "read":
        args: dict[str, Any] = {"path": name, "limit": 1000 + step % 4000}
        return name, {"name": "read_file", "arguments": json.dumps(args)}
    if step % 2 == 0:
        return name, {"name": "read_file", "arguments": json.dumps({"path": name})}
    old, new = ("alpha", "beta") if (step // 2) % 2 == 0 else ("beta", "alpha")
    args = {"path": name, "old_string": f"value = {old}", "new_string": f"value = {new}"}
    return name, {"name": "edit_file", "arguments": json.dumps(args)}


def think_seconds(body: dict[str, Any]) -> float:
    """The reply's delay asked for by the task (``bench-think-ms``), in seconds."""
    messages = body.get("messages", [])
    users = [_text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    return int(_find(THINK, users, "0")) / 1000


def chat_reply(body: dict[str, Any]) -> tuple[str, str, bytes]:
    key, fn = chat_call(body)
    call_id = f"call_{sum(1 for m in body.get('messages', []) if m.get('role') == 'assistant')}"
    call = {"id": call_id, "type": "function", "function": fn}
    if not body.get("stream"):
        payload = {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": USAGE,
        }
        return key, "application/json", json.dumps(payload).encode()
    delta_call = {"index": 0, **call}
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [delta_call]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": USAGE},
    ]
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": ""}
    events = "".join(f"data: {json.dumps({**base, **c})}\n\n" for c in chunks)
    return key, "text/event-stream", (events + "data: [DONE]\n\n").encode()


# --- Anthropic Messages (claude-agent-acp) ---------------------------------------------------


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()


def anthropic_reply(body: dict[str, Any]) -> tuple[str | None, str, bytes]:
    messages = body.get("messages", [])
    texts = [_text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    main = bool(body.get("tools")) and any(FILE.search(t) for t in texts)
    step = sum(1 for m in messages if m.get("role") == "assistant")
    steps = int(_find(STEPS, texts, "20"))
    path = _find(FILE, texts, "a.txt")
    usage = {"input_tokens": 10, "output_tokens": 5}
    start = {
        "type": "message_start",
        "message": {
            "id": f"msg_{step}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        },
    }
    events: list[tuple[str, dict[str, Any]]] = [("message_start", start)]
    if main and step < steps:
        block = {"type": "tool_use", "id": f"toolu_{step:04d}", "name": "Read", "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps({"file_path": path})}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": "done" if main else "ok"}
        stop = "end_turn"
    events += [
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": usage},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return ("claude" if main else None), "text/event-stream", _sse(events)


# --- OpenAI Responses (codex-acp) ------------------------------------------------------------


def responses_reply(body: dict[str, Any]) -> tuple[str | None, str, bytes]:
    items = body.get("input", [])
    texts: list[str] = []
    for item in items:
        if isinstance(item, dict) and item.get("role") == "user":
            texts.append(_text_of(item.get("content")))
    main = any(FILE.search(t) for t in texts)
    step = sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call")
    steps = int(_find(STEPS, texts, "20"))
    path = _find(FILE, texts, "a.txt")
    rid = f"resp_{step}"
    if main and step < steps:
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{step}",
            "call_id": f"call_{step:04d}",
            "name": "exec_command",
            "arguments": json.dumps({"cmd": f"cat {path}"}),
            "status": "completed",
        }
    else:
        item = {
            "type": "message",
            "id": f"msg_{step}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "done", "annotations": []}],
        }
    response = {"id": rid, "object": "response", "status": "in_progress", "output": []}
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": response}),
        (
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": item},
        ),
    ]
    if item["type"] == "function_call":
        events.append(
            (
                "response.function_call_arguments.done",
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": item["id"],
                    "output_index": 0,
                    "arguments": item["arguments"],
                },
            )
        )
    done = {**response, "status": "completed", "output": [item], "usage": usage}
    events += [
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
        ("response.completed", {"type": "response.completed", "response": done}),
    ]
    return ("codex" if main else None), "text/event-stream", _sse(events)


# --- HTTP ------------------------------------------------------------------------------------


def route(method: str, path: str, raw: bytes) -> tuple[str | None, int, str, bytes, float]:
    """(session key or None, status, content type, body, seconds to wait before sending)."""
    path = path.split("?", 1)[0].rstrip("/")
    if method == "GET" and path == "/stats":
        data = {
            "gaps_ns": STATS.gaps,
            "requests": STATS.requests,
            "connections": STATS.connections,
            "request_bytes": STATS.request_bytes,
            "arrivals_ns": STATS.arrivals,
            "server_cpu_s": STATS.cpu,
        }
        return None, 200, "application/json", json.dumps(data).encode(), 0.0
    if method == "POST" and path == "/reset":
        STATS.reset()
        return None, 200, "application/json", b"{}", 0.0
    if method == "POST" and path == "/watch":
        STATS.pid = int(json.loads(raw)["pid"])
        return None, 200, "application/json", b"{}", 0.0
    if method == "GET" and path.endswith("/models"):
        return None, 200, "application/json", b'{"object": "list", "data": [], "models": []}', 0.0
    body = json.loads(raw or b"{}")
    if path.endswith("/chat/completions"):
        key, ctype, out = chat_reply(body)
        return key, 200, ctype, out, think_seconds(body)
    if path.endswith("/messages"):
        key2, ctype, out = anthropic_reply(body)
        return key2, 200, ctype, out, 0.0
    if path.endswith("/responses"):
        key2, ctype, out = responses_reply(body)
        return key2, 200, ctype, out, 0.0
    if path.endswith("/count_tokens"):
        return None, 200, "application/json", b'{"input_tokens": 10}', 0.0
    return None, 404, "application/json", b'{"error": {"message": "no route"}}', 0.0


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes, bool] | None:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        raw = b"".join(parts)
    else:
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
    close = headers.get("connection", "").lower() == "close"
    return method, path, raw, close


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    STATS.connections += 1
    try:
        while True:
            try:
                request = await _read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            if request is None:
                return
            now = time.perf_counter_ns()
            method, path, raw, close = request
            key, status, ctype, out, delay = route(method, path, raw)
            if key is not None:
                STATS.arrived(key, now, len(raw))
            if delay:
                await asyncio.sleep(delay)
            head = (
                f"HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\n"
                f"Content-Length: {len(out)}\r\nCache-Control: no-cache\r\n\r\n"
            ).encode()
            writer.write(head + out)
            await writer.drain()
            if key is not None:
                STATS.sent[key] = time.perf_counter_ns()
            if close:
                return
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
