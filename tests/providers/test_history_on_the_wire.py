"""Refused and cut calls end to end: the engine, a real provider, a strict server on loopback.

After a rejected, failed or cancelled tool, the next request's history still answers every
tool call id (Chat Completions: ``check_strict_wire`` on what the server received, and the
server itself refuses a broken history with 400; Messages API: every ``tool_use`` has its
``tool_result`` in the very next user message). A call cut by the token limit writes
nothing and the model is told its arguments were cut.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from cadenza.engine.history import check_strict_wire
from cadenza.engine.pipeline import CUT_ARGUMENTS
from cadenza.engine.session import Session, SessionSettings
from cadenza.messages import UserMessage
from cadenza.providers.anthropic import AnthropicProvider
from cadenza.providers.base import ModelRequest, Provider
from cadenza.providers.openai import OpenAIProvider
from cadenza.providers.retry import RetryPolicy
from cadenza.tools.registry import default_tools
from tests.doubles import MemoryEditor
from tests.providers.fake_sse import (
    Action,
    FakeModelServer,
    Sse,
    an_call,
    an_end,
    an_start,
    an_text,
    an_tool_block,
    oa_call,
    oa_chunk,
    oa_text,
    oa_tool_delta,
)

ONE_TRY = RetryPolicy(attempts=1)
Wire = str  # "openai" | "anthropic"


def make_provider(wire: Wire, server: FakeModelServer) -> Provider:
    if wire == "openai":
        return OpenAIProvider(
            name="openai/test", base_url=server.base_url, model="test", retry=ONE_TRY
        )
    return AnthropicProvider(
        name="anthropic/test", model="test", api_key=None, base_url=server.root_url, retry=ONE_TRY
    )


def call(wire: Wire, call_id: str, name: str, arguments: dict[str, Any]) -> Action:
    events = (
        oa_call(call_id, name, arguments) if wire == "openai" else an_call(call_id, name, arguments)
    )
    return Sse(events=events)


def text(wire: Wire, content: str) -> Action:
    return Sse(events=oa_text(content) if wire == "openai" else an_text(content))


def check_anthropic_wire(messages: list[dict[str, Any]]) -> None:
    """Every tool_use is answered by a tool_result, first in the next user message."""
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        ids = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if not ids:
            continue
        following = messages[index + 1]
        assert following["role"] == "user"
        blocks = following["content"]
        results = [b["tool_use_id"] for b in blocks[: len(ids)] if b["type"] == "tool_result"]
        assert results == ids, f"tool_use {ids} answered by {results}"


def check_wire(wire: Wire, body: dict[str, Any]) -> None:
    if wire == "openai":
        check_strict_wire(body["messages"])
        assert body["messages"][0]["role"] == "system"
    else:
        check_anthropic_wire(body["messages"])
        assert "system" in body


def answered(wire: Wire, body: dict[str, Any], call_id: str) -> str:
    if wire == "openai":
        (message,) = [m for m in body["messages"] if m.get("tool_call_id") == call_id]
        return str(message["content"])
    blocks = [b for m in body["messages"] if m["role"] == "user" for b in m["content"]]
    (block,) = [b for b in blocks if b.get("tool_use_id") == call_id]
    return str(block.get("content", ""))


def session(tmp_path: Path, provider: Provider, editor: MemoryEditor) -> Session:
    return Session(
        session_id="s1",
        task="change a.py",
        root=tmp_path,
        provider=provider,
        editor=editor,
        settings=SessionSettings(max_steps=5),
    )


WIRES = pytest.mark.parametrize("wire", ["openai", "anthropic"])


@WIRES
async def test_f10_after_a_failed_tool(tmp_path: Path, wire: Wire) -> None:
    with FakeModelServer(strict=True) as server:
        server.script(call(wire, "c1", "read_file", {"path": "missing.py"}), text(wire, "gave up"))
        provider = make_provider(wire, server)
        outcome = await session(tmp_path, provider, MemoryEditor()).run()
        await provider.aclose()
    assert outcome.stop_reason == "end_turn"
    body = server.requests[1].body
    check_wire(wire, body)
    assert answered(wire, body, "c1")


@WIRES
async def test_f10_after_a_rejected_edit(tmp_path: Path, wire: Wire) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    editor = MemoryEditor(refuse="the person rejected the change", refused_by="person")
    edit = {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    with FakeModelServer(strict=True) as server:
        server.script(call(wire, "c1", "edit_file", edit), text(wire, "ok, not changed"))
        provider = make_provider(wire, server)
        outcome = await session(tmp_path, provider, editor).run()
        await provider.aclose()
    assert outcome.stop_reason == "end_turn"
    body = server.requests[1].body
    check_wire(wire, body)
    assert "rejected" in answered(wire, body, "c1")
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


@WIRES
async def test_f10_after_a_cancelled_tool_then_a_new_prompt(tmp_path: Path, wire: Wire) -> None:
    editor = MemoryEditor()
    asked = anyio.Event()

    async def never_answer(question: str) -> str | None:
        asked.set()
        await anyio.sleep_forever()
        return None

    editor.ask_user = never_answer  # type: ignore[method-assign]
    with FakeModelServer(strict=True) as server:
        server.script(call(wire, "c1", "ask_user", {"question": "which?"}), text(wire, "hi"))
        provider = make_provider(wire, server)
        live = session(tmp_path, provider, editor)
        async with anyio.create_task_group() as group:
            group.start_soon(live.run)
            with anyio.fail_after(10):
                await asked.wait()
            group.cancel_scope.cancel()
        # the person sends a new prompt on the same conversation
        history = [*live.messages, UserMessage(content="never mind, say hi")]
        reply = await provider.complete(
            ModelRequest(messages=history, tools=default_tools().specs())
        )
        await provider.aclose()
    assert reply.content == "hi"
    body = server.requests[1].body
    check_wire(wire, body)
    assert answered(wire, body, "c1")


def cut_write(wire: Wire) -> Action:
    cut = '{"path": "a.py", "content": "def f():\\n    ret'
    if wire == "openai":
        return Sse(
            events=[
                oa_tool_delta(0, id="w1", name="write_file", args=cut[:10]),
                oa_tool_delta(0, args=cut[10:]),
                oa_chunk({}, "length"),
                "[DONE]",
            ]
        )
    return Sse(
        events=[
            an_start(),
            *an_tool_block(0, "w1", "write_file", cut[:10], cut[10:]),
            *an_end("max_tokens"),
        ]
    )


@WIRES
async def test_f11_cut_arguments_write_nothing(tmp_path: Path, wire: Wire) -> None:
    editor = MemoryEditor()
    with FakeModelServer(strict=True) as server:
        # The cut write changed nothing, so the done checks refuse the claims after it and the
        # session ends failed, saying so.
        claim = text(wire, "I will write less next time.")
        server.script(cut_write(wire), claim, claim, claim)
        provider = make_provider(wire, server)
        outcome = await session(tmp_path, provider, editor).run()
        await provider.aclose()
    assert outcome.stop_reason == "failed"
    assert not (tmp_path / "a.py").exists() and editor.edits == []
    body = server.requests[1].body
    check_wire(wire, body)
    assert answered(wire, body, "w1") == CUT_ARGUMENTS
