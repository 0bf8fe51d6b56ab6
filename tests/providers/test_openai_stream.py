"""Streaming Chat Completions against a real SSE server on loopback (no httpx mocks)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Iterator

import pytest

from cadenza.messages import SystemMessage, ToolCall, UserMessage
from cadenza.providers.base import ModelRequest, ProviderError
from cadenza.providers.openai import OpenAIProvider
from cadenza.providers.retry import RetryPolicy
from cadenza.tools.registry import default_tools
from tests.providers.fake_sse import (
    FakeModelServer,
    Sse,
    Status,
    oa_chunk,
    oa_text,
    oa_tool_delta,
    oa_usage,
)

FAST = RetryPolicy(attempts=3, base_delay_s=0.01, max_delay_s=1.0)
SECRET = "sk-live-0123456789abcdef"


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


def provider(server: FakeModelServer, **kwargs: object) -> OpenAIProvider:
    options: dict[str, object] = {"api_key": SECRET, "retry": FAST}
    options.update(kwargs)
    return OpenAIProvider(
        name="openai/test",
        base_url=server.base_url,
        model="test",
        **options,  # type: ignore[arg-type]
    )


def request() -> ModelRequest:
    return ModelRequest(
        messages=[SystemMessage(content="sys"), UserMessage(content="task")],
        tools=default_tools().specs(),
    )


def envelope_request() -> ModelRequest:
    return dataclasses.replace(request(), tool_choice="required")


async def test_text_deltas_reach_on_text_in_order(server: FakeModelServer) -> None:
    server.script(Sse(events=oa_text("Hel", "lo, ", "world")))
    seen: list[str] = []
    p = provider(server)
    reply = await p.complete(request(), on_text=seen.append)
    await p.aclose()
    assert seen == ["Hel", "lo, ", "world"]
    assert reply.content == "Hello, world"
    assert reply.tool_calls == [] and reply.finish_reason == "stop"
    assert reply.usage is not None and (
        reply.usage.prompt_tokens,
        reply.usage.completion_tokens,
    ) == (
        11,
        7,
    )
    sent = server.requests[0]
    assert sent.body["stream"] is True
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.headers["Accept"] == "text/event-stream"
    assert sent.headers["Authorization"] == f"Bearer {SECRET}"


async def test_tool_call_deltas_are_assembled_by_index(server: FakeModelServer) -> None:
    server.script(
        Sse(
            events=[
                oa_chunk({"role": "assistant", "content": None}),
                oa_tool_delta(0, id="call_a", name="read_file", args='{"pa'),
                oa_tool_delta(1, id="call_b", name="search"),
                oa_tool_delta(0, args='th": "a.py"}'),
                oa_tool_delta(1, args='{"pattern": '),
                oa_tool_delta(1, args='"def f"}'),
                oa_chunk({}, "tool_calls"),
                oa_usage(),
                "[DONE]",
            ]
        )
    )
    p = provider(server)
    reply = await p.complete(request())
    await p.aclose()
    assert reply.tool_calls == [
        ToolCall(id="call_a", name="read_file", arguments='{"path": "a.py"}'),
        ToolCall(id="call_b", name="search", arguments='{"pattern": "def f"}'),
    ]
    assert reply.finish_reason == "tool_calls"


async def test_429_with_retry_after_is_honoured_then_succeeds(server: FakeModelServer) -> None:
    server.script(Status(code=429, headers={"Retry-After": "0.3"}), Sse(events=oa_text("ok")))
    p = provider(server)
    started = time.monotonic()
    reply = await p.complete(request())
    elapsed = time.monotonic() - started
    await p.aclose()
    assert reply.content == "ok"
    assert len(server.requests) == 2
    assert elapsed >= 0.3


async def test_500_then_success(server: FakeModelServer) -> None:
    server.script(Status(code=500), Sse(events=oa_text("fine")))
    p = provider(server)
    reply = await p.complete(request())
    await p.aclose()
    assert reply.content == "fine" and len(server.requests) == 2


async def test_last_attempt_gives_a_clear_error(server: FakeModelServer) -> None:
    server.script(*[Status(code=503)] * 3)
    p = provider(server)
    with pytest.raises(ProviderError) as info:
        await p.complete(request())
    await p.aclose()
    assert str(info.value) == (
        "openai/test: the model server failed (HTTP 503: scripted error; 3 attempts); "
        "try again later."
    )


async def test_stream_cut_before_first_event_is_retried(server: FakeModelServer) -> None:
    server.script(Sse(events=oa_text("lost"), cut_after=0), Sse(events=oa_text("again")))
    p = provider(server)
    reply = await p.complete(request())
    await p.aclose()
    assert reply.content == "again" and len(server.requests) == 2


async def test_stream_cut_after_first_event_is_an_error_not_a_retry(
    server: FakeModelServer,
) -> None:
    server.script(Sse(events=oa_text("Hel", "lo"), cut_after=2), Sse(events=oa_text("never")))
    seen: list[str] = []
    p = provider(server)
    with pytest.raises(ProviderError, match="stream was cut after 2 events"):
        await p.complete(request(), on_text=seen.append)
    await p.aclose()
    assert seen == ["Hel"]  # what was shown is never shown twice
    assert len(server.requests) == 1


async def test_stream_that_stops_without_finishing_is_an_error(server: FakeModelServer) -> None:
    server.script(Sse(events=oa_text("Hel", "lo"), close_after=3))
    p = provider(server)
    with pytest.raises(ProviderError, match="before the reply was complete"):
        await p.complete(request())
    await p.aclose()
    assert len(server.requests) == 1


async def test_length_mid_arguments_keeps_the_cut_call(server: FakeModelServer) -> None:
    """A call cut by the token limit, on the wire: it is kept raw, with finish_reason length."""
    cut = '{"path":"a.py","content":"def f():\\n    ret'
    server.script(
        Sse(
            events=[
                oa_tool_delta(0, id="w1", name="write_file", args=cut[:12]),
                oa_tool_delta(0, args=cut[12:]),
                oa_chunk({}, "length"),
                "[DONE]",
            ]
        )
    )
    p = provider(server)
    reply = await p.complete(request())
    await p.aclose()
    assert reply.finish_reason == "length"
    assert reply.tool_calls == [ToolCall(id="w1", name="write_file", arguments=cut)]


async def test_malformed_chunk_is_a_provider_error(server: FakeModelServer) -> None:
    server.script(Sse(events=[oa_chunk({"content": "a"}), '{"choices": [', "[DONE]"]))
    p = provider(server)
    with pytest.raises(ProviderError, match="malformed stream event"):
        await p.complete(request())
    await p.aclose()
    assert len(server.requests) == 1


async def test_error_object_in_the_stream_is_a_provider_error(server: FakeModelServer) -> None:
    server.script(Sse(events=[json.dumps({"error": {"message": "model overloaded"}})]))
    p = provider(server)
    with pytest.raises(ProviderError, match="model overloaded"):
        await p.complete(request())
    await p.aclose()


async def test_cancellation_closes_the_stream_at_once(server: FakeModelServer) -> None:
    server.script(Sse(events=[oa_chunk({"content": "thinking"})], hold=True))
    p = provider(server)
    got_text = asyncio.Event()
    task = asyncio.create_task(p.complete(request(), on_text=lambda _: got_text.set()))
    await asyncio.wait_for(got_text.wait(), 10)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 5
    while not server.disconnects and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    await p.aclose()
    assert server.disconnects, "the server never saw the client go away"
    assert server.disconnects[0] - cancelled_at < 1.0


async def test_a_watch_stops_a_reply_that_never_ends(server: FakeModelServer) -> None:
    """A model stuck in a loop streams on; the watch stops it and the server sees it go."""
    head = '{"content": "", "tool_calls": [{"name": "edit_file", "arguments": {"new_string": "'
    deltas = [oa_chunk({"role": "assistant", "content": head})]
    deltas += [oa_chunk({"content": "0, "}) for _ in range(5000)]
    server.script(Sse(events=deltas, hold=True))
    seen: list[str] = []

    def watch(delta: str) -> bool:
        seen.append(delta)
        return len(seen) == 40

    watched = dataclasses.replace(envelope_request(), watch=watch)
    started = time.monotonic()
    reply = await provider(server, envelope=True).complete(watched)
    assert time.monotonic() - started < 5
    assert len(seen) == 40 and seen[0] == head
    # What came so far, kept as one cut call: nothing of it runs (the engine's rule).
    assert reply.finish_reason == "repetition" and reply.cut
    [cut] = reply.tool_calls
    assert cut.name == "edit_file" and cut.arguments == head + "0, " * 39
    deadline = time.monotonic() + 5
    while not server.disconnects and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert server.disconnects, "the server never saw the client go away"


async def test_a_watch_sees_native_call_arguments_too(server: FakeModelServer) -> None:
    events = [
        oa_chunk({"role": "assistant", "content": None}),
        oa_tool_delta(0, id="c1", name="write_file", args='{"path": "a.py", "content": "'),
        *[oa_tool_delta(0, args="x") for _ in range(50)],
        oa_chunk({}, "tool_calls"),
        oa_usage(),
        "[DONE]",
    ]
    server.script(Sse(events=events))
    seen: list[str] = []
    watched = dataclasses.replace(request(), watch=lambda d: seen.append(d) or False)
    reply = await provider(server).complete(watched)
    assert reply.finish_reason == "tool_calls" and len(seen) == 51  # watched, never stopped


async def test_envelope_mode_streams_but_shows_no_json(server: FakeModelServer) -> None:
    envelope = {"tool_calls": [{"name": "read_file", "arguments": {"path": "b.py"}}], "content": ""}
    text = json.dumps(envelope)
    server.script(Sse(events=oa_text(text[:20], text[20:])))
    seen: list[str] = []
    p = provider(server, envelope=True)
    reply = await p.complete(request(), on_text=seen.append)
    await p.aclose()
    assert seen == []
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("read_file", {"path": "b.py"})
    ]
    assert server.requests[0].body["response_format"]["type"] == "json_schema"


async def test_non_streaming_mode_sends_no_stream_flag(server: FakeModelServer) -> None:
    from tests.providers.fake_sse import Json

    server.script(
        Json(
            body={
                "choices": [{"index": 0, "message": {"content": "whole"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2},
            }
        )
    )
    p = provider(server, stream=False)
    reply = await p.complete(request())
    await p.aclose()
    assert reply.content == "whole"
    assert "stream" not in server.requests[0].body


async def test_calls_without_ids_get_distinct_ids_across_replies(server: FakeModelServer) -> None:
    no_id = [
        oa_tool_delta(0, name="list_files", args="{}"),
        oa_chunk({}, "tool_calls"),
        "[DONE]",
    ]
    server.script(Sse(events=no_id), Sse(events=no_id))
    p = provider(server)
    first = await p.complete(request())
    second = await p.complete(request())
    await p.aclose()
    assert first.tool_calls[0].id != second.tool_calls[0].id


async def test_api_key_never_in_errors_or_logs(
    server: FakeModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A 401 that echoes the key (body and a header) leaves no trace of it anywhere."""
    echo = json.dumps({"error": {"message": f"invalid key Bearer {SECRET}"}})
    server.script(Status(code=401, body=echo, headers={"X-Echo": SECRET}))
    p = provider(server)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ProviderError) as info:
        await p.complete(request())
    await p.aclose()
    assert "HTTP 401" in str(info.value)
    assert SECRET not in str(info.value)
    assert "[redacted]" in str(info.value)
    assert caplog.records, "httpx/httpcore debug logging was expected"
    for record in caplog.records:
        assert SECRET not in record.getMessage()
