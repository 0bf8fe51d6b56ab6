"""Performance fixes of the request path that change no behaviour (docs/lab/performance.md).

- The Chat Completions body is joined from per-message JSON fragments made once: it must equal
  ``build_body`` exactly, in every mode.
- A streamed reply is read to its end, so its connection goes back to the pool: N requests
  use one connection, not N.
"""

from __future__ import annotations

import asyncio
import gc
import json
from typing import Any

import pytest

from cadenza.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from cadenza.providers.base import ModelRequest
from cadenza.providers.openai import OpenAIProvider
from cadenza.tools.registry import default_tools

MESSAGES = [
    SystemMessage(content="sys ü \u2028 end"),
    UserMessage(content="task 😀", tag="task"),
    AssistantMessage(
        content="",
        tool_calls=[ToolCall(id="c1", name="read_file", arguments='{"path": "a.txt"}')],
    ),
    ToolMessage(tool_call_id="c1", name="read_file", content='x\n"quoted"\t😀'),
]


def provider(**kwargs: Any) -> OpenAIProvider:
    return OpenAIProvider(name="openai/m", base_url="http://127.0.0.1:9/v1", model="m", **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "tools", "parallel", "choice"),
    [
        ({}, [], None, "auto"),
        ({}, "all", None, "required"),
        ({"extra_body": {"top_k": 3}, "stream": False}, "all", False, "auto"),
        ({"parallel_tool_calls": False}, "all", None, "auto"),
        ({"envelope": True}, "all", None, "required"),
    ],
)
def test_encoded_body_is_build_body(
    kwargs: dict[str, Any], tools: Any, parallel: bool | None, choice: Any
) -> None:
    specs: list[ToolSpec] = default_tools().specs() if tools == "all" else []
    p = provider(**kwargs)
    request = ModelRequest(
        messages=list(MESSAGES),
        tools=specs,
        max_tokens=64,
        temperature=0.2,
        tool_choice=choice,
        parallel_tool_calls=parallel,
        frequency_penalty=0.3 if parallel is False else None,
    )
    for _ in range(2):  # the second time from the fragment cache
        assert json.loads(p.encode_body(request)) == p.build_body(request)
    assert p.build_body(request).get("frequency_penalty") == request.frequency_penalty


def test_growing_and_rewritten_histories_encode_like_build_body() -> None:
    p = provider()
    history: list[Message] = list(MESSAGES)
    other: list[Message] = [SystemMessage(content="another session"), UserMessage(content="t")]
    for step in range(6):
        history.append(UserMessage(content=f"step {step}"))
        other.append(UserMessage(content=f"other {step}"))
        for messages in (history, other):  # two conversations through one provider
            request = ModelRequest(messages=list(messages))
            assert json.loads(p.encode_body(request)) == p.build_body(request)
    # A compaction rewrites the history in place: new objects, same first message.
    history[1:] = [UserMessage(content="summary"), UserMessage(content="next")]
    request = ModelRequest(messages=list(history))
    assert json.loads(p.encode_body(request)) == p.build_body(request)
    request = ModelRequest(messages=history[:2])  # shorter than the cached one
    assert json.loads(p.encode_body(request)) == p.build_body(request)


def test_fragments_are_dropped_with_their_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cadenza.providers.openai_request.HISTORIES", 0)  # keep no joined history
    p = provider()
    messages = [UserMessage(content=f"m{i}") for i in range(50)]
    p.encode_body(ModelRequest(messages=messages))
    assert len(p._fragments._items) == 50
    del messages
    gc.collect()
    assert len(p._fragments._items) == 0


def test_tool_specs_are_built_once() -> None:
    tool = default_tools().get("read_file")
    assert tool is not None
    assert tool.spec() is tool.spec()


async def test_streamed_replies_reuse_one_connection() -> None:
    connections = 0
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                data = body.encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                    + f"Content-Length: {len(data)}\r\n\r\n".encode()
                    + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    p = OpenAIProvider(name="openai/m", base_url=f"http://127.0.0.1:{port}/v1", model="m")
    try:
        for _ in range(3):
            reply = await p.complete(ModelRequest(messages=list(MESSAGES)))
            assert reply.content == "hi"
    finally:
        await p.aclose()
        server.close()
        await server.wait_closed()
    assert connections == 1
