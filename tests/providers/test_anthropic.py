"""The Anthropic Messages provider against a real SSE server on loopback (no httpx mocks)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from cadenza.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from cadenza.providers.anthropic import API_VERSION, AnthropicProvider
from cadenza.providers.base import ModelRequest, ProviderError
from cadenza.providers.retry import RetryPolicy
from cadenza.tools.registry import default_tools
from tests.providers.fake_sse import (
    FakeModelServer,
    Json,
    Sse,
    Status,
    an_call,
    an_end,
    an_event,
    an_start,
    an_text,
    an_text_block,
    an_tool_block,
)

FAST = RetryPolicy(attempts=3, base_delay_s=0.01, max_delay_s=1.0)
SECRET = "sk-ant-test-0123456789"


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


def provider(server: FakeModelServer, **kwargs: object) -> AnthropicProvider:
    options: dict[str, object] = {"api_key": SECRET, "retry": FAST}
    options.update(kwargs)
    return AnthropicProvider(
        name="anthropic/claude-test",
        model="claude-test",
        base_url=server.root_url,
        **options,  # type: ignore[arg-type]
    )


def history() -> ModelRequest:
    """A conversation with one batch of two results (one failed) and a user note after it."""
    return ModelRequest(
        messages=[
            SystemMessage(content="You are Cadenza."),
            UserMessage(content="fix a.py"),
            AssistantMessage(
                content="Reading both.",
                tool_calls=[
                    ToolCall(id="t1", name="read_file", arguments='{"path": "a.py"}'),
                    ToolCall(id="t2", name="read_file", arguments='{"path": "b.py"}'),
                ],
            ),
            ToolMessage(tool_call_id="t1", name="read_file", content="print(1)"),
            ToolMessage(tool_call_id="t2", name="read_file", content="no such file", is_error=True),
            UserMessage(content="Movement: implement", tag="movement"),
        ],
        tools=default_tools().specs(),
        tool_choice="required",
        parallel_tool_calls=False,
        temperature=0.2,
    )


async def test_request_mapping_system_tools_results_and_cache(server: FakeModelServer) -> None:
    server.script(Sse(events=an_text("ok")))
    p = provider(server)
    await p.complete(history())
    await p.aclose()
    sent = server.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == SECRET
    assert sent.headers["anthropic-version"] == API_VERSION
    body = sent.body
    assert body["model"] == "claude-test" and body["stream"] is True
    assert body["max_tokens"] > 0 and body["temperature"] == 0.2
    # the system prompt is top-level, never a message, and cacheable
    assert body["system"] == [
        {"type": "text", "text": "You are Cadenza.", "cache_control": {"type": "ephemeral"}}
    ]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assistant = body["messages"][1]["content"]
    assert assistant[0] == {"type": "text", "text": "Reading both."}
    assert assistant[1] == {
        "type": "tool_use",
        "id": "t1",
        "name": "read_file",
        "input": {"path": "a.py"},
    }
    # both results in ONE user message, first, then the user's note
    results = body["messages"][2]["content"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result", "text"]
    assert results[0] == {"type": "tool_result", "tool_use_id": "t1", "content": "print(1)"}
    assert results[1]["is_error"] is True and results[1]["tool_use_id"] == "t2"
    assert results[2]["text"] == "Movement: implement"
    assert results[2]["cache_control"] == {"type": "ephemeral"}  # the last block of the prefix
    tools = body["tools"]
    assert all("input_schema" in t for t in tools)
    assert [("cache_control" in t) for t in tools] == [False] * (len(tools) - 1) + [True]
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}


async def test_text_streams_in_order_with_usage(server: FakeModelServer) -> None:
    server.script(
        Sse(
            events=[
                an_start(input_tokens=20, cache_read=100),
                an_event("ping"),
                *an_text_block(0, "Hel", "lo"),
                *an_end("end_turn", output_tokens=9),
            ]
        )
    )
    seen: list[str] = []
    p = provider(server)
    reply = await p.complete(history(), on_text=seen.append)
    await p.aclose()
    assert seen == ["Hel", "lo"]
    assert reply.content == "Hello" and reply.tool_calls == []
    assert reply.finish_reason == "stop"
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (120, 9)


async def test_tool_use_input_json_deltas_are_assembled(server: FakeModelServer) -> None:
    server.script(
        Sse(
            events=[
                an_start(),
                *an_text_block(0, "Let me look."),
                *an_tool_block(1, "toolu_1", "read_file", '{"pa', 'th": ', '"a.py"}'),
                *an_tool_block(2, "toolu_2", "list_files", ""),
                *an_end("tool_use"),
            ]
        )
    )
    p = provider(server)
    reply = await p.complete(history())
    await p.aclose()
    assert reply.content == "Let me look."
    assert reply.tool_calls == [
        ToolCall(id="toolu_1", name="read_file", arguments='{"path": "a.py"}'),
        ToolCall(id="toolu_2", name="list_files", arguments="{}"),
    ]
    assert reply.finish_reason == "tool_calls"


async def test_max_tokens_mid_input_keeps_the_cut_call(server: FakeModelServer) -> None:
    """A cut call for Anthropic: ``max_tokens`` → length, the cut input kept raw."""
    server.script(
        Sse(
            events=[
                an_start(),
                *an_tool_block(0, "toolu_w", "write_file", '{"path":"a.py",', '"content":"def'),
                *an_end("max_tokens"),
            ]
        )
    )
    p = provider(server)
    reply = await p.complete(history())
    await p.aclose()
    assert reply.finish_reason == "length"
    assert reply.tool_calls == [
        ToolCall(id="toolu_w", name="write_file", arguments='{"path":"a.py","content":"def')
    ]


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length")],
)
async def test_stop_reason_table(server: FakeModelServer, stop_reason: str, finish: str) -> None:
    server.script(Sse(events=[an_start(), *an_text_block(0, "x"), *an_end(stop_reason)]))
    p = provider(server)
    reply = await p.complete(history())
    await p.aclose()
    assert reply.finish_reason == finish


async def test_error_event_is_a_provider_error(server: FakeModelServer) -> None:
    server.script(
        Sse(
            events=[
                an_start(),
                an_event("error", error={"type": "overloaded_error", "message": "Overloaded"}),
            ]
        )
    )
    p = provider(server)
    with pytest.raises(ProviderError, match="Overloaded"):
        await p.complete(history())
    await p.aclose()


async def test_overloaded_529_and_429_are_retried(server: FakeModelServer) -> None:
    server.script(
        Status(code=529, body='{"type": "error", "error": {"type": "overloaded_error"}}'),
        Status(code=429, headers={"retry-after": "0"}),
        Sse(events=an_text("done")),
    )
    p = provider(server)
    reply = await p.complete(history())
    await p.aclose()
    assert reply.content == "done" and len(server.requests) == 3


async def test_stream_cut_after_events_is_an_error(server: FakeModelServer) -> None:
    server.script(Sse(events=an_text("a", "b"), cut_after=4))
    p = provider(server)
    with pytest.raises(ProviderError, match="stream was cut"):
        await p.complete(history())
    await p.aclose()
    assert len(server.requests) == 1


async def test_whole_reply_uses_the_same_mapping(server: FakeModelServer) -> None:
    server.script(
        Json(
            body={
                "type": "message",
                "content": [
                    {"type": "text", "text": "Reading."},
                    {
                        "type": "tool_use",
                        "id": "toolu_9",
                        "name": "read_file",
                        "input": {"path": "x"},
                    },
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 5, "output_tokens": 3},
            }
        )
    )
    p = provider(server, stream=False)
    reply = await p.complete(history())
    await p.aclose()
    assert "stream" not in server.requests[0].body
    assert reply.content == "Reading."
    assert [(c.id, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("toolu_9", {"path": "x"})
    ]
    assert reply.finish_reason == "tool_calls"


async def test_one_call_round_trip(server: FakeModelServer) -> None:
    server.script(Sse(events=an_call("toolu_5", "search", {"pattern": "def main"})))
    p = provider(server)
    reply = await p.complete(history())
    await p.aclose()
    assert json.loads(reply.tool_calls[0].arguments) == {"pattern": "def main"}


async def test_cut_call_in_history_is_sent_with_an_empty_input(server: FakeModelServer) -> None:
    server.script(Sse(events=an_text("ok")))
    request = ModelRequest(
        messages=[
            SystemMessage(content="s"),
            UserMessage(content="t"),
            AssistantMessage(tool_calls=[ToolCall(id="w", name="write_file", arguments='{"pa')]),
            ToolMessage(tool_call_id="w", name="write_file", content="cut", is_error=True),
        ]
    )
    p = provider(server, prompt_caching=False)
    await p.complete(request)
    await p.aclose()
    body = server.requests[0].body
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "w", "name": "write_file", "input": {}}
    ]
    assert "cache_control" not in json.dumps(body)


async def test_api_key_never_in_errors_or_logs(
    server: FakeModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    echo = json.dumps({"type": "error", "error": {"message": f"bad x-api-key {SECRET}"}})
    server.script(Status(code=401, body=echo, headers={"X-Echo": SECRET}))
    p = provider(server)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ProviderError) as info:
        await p.complete(history())
    await p.aclose()
    assert "HTTP 401" in str(info.value) and SECRET not in str(info.value)
    for record in caplog.records:
        assert SECRET not in record.getMessage()
