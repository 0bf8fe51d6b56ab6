"""The OpenAI-compatible provider against a real HTTP server on loopback (no httpx mocks)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from cadenza.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from cadenza.providers.base import ModelRequest, ProviderError
from cadenza.providers.envelope import envelope_schema, parse_envelope
from cadenza.providers.openai import OpenAIProvider
from cadenza.providers.retry import RetryPolicy
from cadenza.tools.registry import default_tools
from tests.support.fake_openai import FakeOpenAI, Reply, call, text

FAST = RetryPolicy(attempts=3, base_delay_s=0.01, max_delay_s=0.05)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def provider(fake: FakeOpenAI, *, envelope: bool = False) -> OpenAIProvider:
    return OpenAIProvider(
        name="openai/test",
        base_url=fake.base_url,
        model="test",
        api_key="sk-test-secret",
        envelope=envelope,
        retry=FAST,
    )


def request(tool_choice: str = "auto") -> ModelRequest:
    return ModelRequest(
        messages=[
            SystemMessage(content="sys"),
            UserMessage(content="task"),
            AssistantMessage(
                content="",
                tool_calls=[ToolCall(id="c1", name="read_file", arguments='{"path":"a"}')],
            ),
            ToolMessage(tool_call_id="c1", name="read_file", content="text of a"),
        ],
        tools=default_tools().specs(),
        tool_choice=tool_choice,  # type: ignore[arg-type]
    )


async def test_native_tool_calls_round_trip(fake: FakeOpenAI) -> None:
    fake.script(call("edit_file", {"path": "a", "old_string": "x", "new_string": "y"}, "c2"))
    p = provider(fake)
    reply = await p.complete(request("required"))
    await p.aclose()
    assert reply.tool_calls == [
        ToolCall(
            id="c2",
            name="edit_file",
            arguments='{"path": "a", "old_string": "x", "new_string": "y"}',
        )
    ]
    assert reply.finish_reason == "tool_calls"
    assert reply.usage is not None and reply.usage.total_tokens == 15
    sent = fake.requests[0]
    assert sent["tool_choice"] == "required"
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "tool"]
    assert sent["messages"][2]["tool_calls"][0]["id"] == "c1"
    assert sent["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "text of a"}
    assert {t["function"]["name"] for t in sent["tools"]} >= {"read_file", "edit_file"}


async def test_retries_429_and_500_then_succeeds(fake: FakeOpenAI) -> None:
    fake.script(Reply(status=429), Reply(status=500), text("done"))
    p = provider(fake)
    reply = await p.complete(request())
    await p.aclose()
    assert reply.content == "done" and reply.tool_calls == []
    assert len(fake.requests) == 3


async def test_gives_up_after_last_attempt_with_a_clear_error(fake: FakeOpenAI) -> None:
    fake.script(*[Reply(status=503)] * 3)
    p = provider(fake)
    with pytest.raises(ProviderError) as info:
        await p.complete(request())
    await p.aclose()
    assert "3 attempts" in str(info.value) and "503" in str(info.value)
    assert "sk-test-secret" not in str(info.value)


async def test_client_error_is_not_retried(fake: FakeOpenAI) -> None:
    fake.script(Reply(status=400))
    p = provider(fake)
    with pytest.raises(ProviderError, match="HTTP 400"):
        await p.complete(request())
    await p.aclose()
    assert len(fake.requests) == 1


async def test_envelope_mode_request_and_reply(fake: FakeOpenAI) -> None:
    envelope = {"tool_calls": [{"name": "read_file", "arguments": {"path": "b.py"}}], "content": ""}
    fake.script(text(json.dumps(envelope)))
    p = provider(fake, envelope=True)
    reply = await p.complete(request("required"))
    await p.aclose()
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("read_file", {"path": "b.py"})
    ]
    sent = fake.requests[0]
    schema = sent["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["tool_calls"]["minItems"] == 1
    assert "tools" not in sent
    roles = [m["role"] for m in sent["messages"]]
    assert roles == ["system", "user", "assistant", "user"]  # tool result as a user message
    assert "read_file(path: string" in sent["messages"][0]["content"]
    assert json.loads(sent["messages"][2]["content"])["tool_calls"][0]["name"] == "read_file"


async def test_envelope_cut_by_length_becomes_a_cut_call(fake: FakeOpenAI) -> None:
    cut = '{"tool_calls": [{"name": "write_file", "arguments": {"path": "a.py", "content": "def'
    fake.script(Reply(content=cut, finish_reason="length"))
    p = provider(fake, envelope=True)
    reply = await p.complete(request())
    await p.aclose()
    assert reply.finish_reason == "length"
    assert reply.tool_calls[0].name == "write_file"
    assert reply.tool_calls[0].arguments == cut


async def test_envelope_missing_is_a_provider_error(fake: FakeOpenAI) -> None:
    fake.script(text("I would read the file first."))
    p = provider(fake, envelope=True)
    with pytest.raises(ProviderError, match="no JSON envelope"):
        await p.complete(request())
    await p.aclose()


def test_envelope_schema_bounds_calls() -> None:
    specs = default_tools().specs()
    one = envelope_schema(specs, require_call=True, max_calls=1)["properties"]["tool_calls"]
    assert (one["minItems"], one["maxItems"]) == (1, 1)
    names = [v["properties"]["name"]["const"] for v in one["items"]["anyOf"]]
    assert names == [s.name for s in specs]
    content, calls = parse_envelope('{"tool_calls": [], "content": "done"}', id_prefix="x")
    assert (content, calls) == ("done", [])


async def test_duplicate_call_ids_in_one_reply_are_made_unique(fake: FakeOpenAI) -> None:
    from tests.support.fake_openai import tool_call

    fake.script(
        Reply(
            tool_calls=[
                tool_call("read_file", {"path": "a"}, "same"),
                tool_call("read_file", {"path": "b"}, "same"),
            ]
        )
    )
    p = provider(fake)
    reply = await p.complete(request())
    await p.aclose()
    assert len({c.id for c in reply.tool_calls}) == 2


async def test_a_silent_server_is_not_waited_for_again(fake: FakeOpenAI) -> None:
    import time

    fake.script(Reply(content="late", delay_s=3.0), text("never asked"))
    p = OpenAIProvider(
        name="openai/test",
        base_url=fake.base_url,
        model="test",
        retry=FAST,
        timeout_s=0.5,
        stream=False,
    )
    started = time.monotonic()
    with pytest.raises(ProviderError) as info:
        await p.complete(request())
    await p.aclose()
    assert time.monotonic() - started < 2.5
    assert "after 1 attempt:" in str(info.value) and "read timeout" in str(info.value)
    assert len(fake.requests) == 1
