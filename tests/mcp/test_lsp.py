"""MCP servers through the real LSP server: the person's ``cadenza.toml`` ``[mcp]``."""

from __future__ import annotations

import sys

from lsprotocol import types

from tests.lsp.conftest import Connect
from tests.lsp.harness import capabilities
from tests.mcp.conftest import ECHO
from tests.mcp.test_engine import gone
from tests.support.fake_openai import (
    FakeOpenAI,
    assert_tool_calls_answered,
    call,
    text,
    tool_messages,
)


async def test_mcp_tools_in_an_lsp_session(connect: Connect, fake: FakeOpenAI) -> None:
    servers = [
        {"name": "echo", "command": sys.executable, "args": [str(ECHO)]},
        {"name": "broken", "command": "/nonexistent/mcp-server"},
    ]
    editor = await connect(
        caps=capabilities(request_permission=True), user_config={"mcp": {"servers": servers}}
    )
    fake.script(
        call("mcp__echo__add", {"a": 20, "b": 22}, "c1"),
        call("mcp__echo__pid", {}, "c2"),
        text("the answer is 42"),
    )
    session_id, end = await editor.run("add numbers")

    assert end["stopReason"] == "end_turn"
    offered = {t["function"]["name"] for t in fake.requests[0]["tools"]}
    assert {"mcp__echo__add", "mcp__echo__shout", "read_file"} <= offered
    assert not any(name.startswith("mcp__broken") for name in offered)
    assert_tool_calls_answered(fake.requests[2])
    results = {m["tool_call_id"]: m["content"] for m in tool_messages(fake.requests[2])}
    assert results["c1"] == "42"
    # Gated by default: the person was asked, with the call's arguments.
    [first, _] = editor.permission_requests
    assert first["toolCall"]["toolCallId"] == "c1"
    assert first["toolCall"]["kind"] == "other"
    assert first["toolCall"]["rawInput"] == {"a": 20, "b": 22}
    warnings = [
        m.message for m in editor.client.log_messages if m.type == types.MessageType.Warning
    ]
    assert any(session_id in w and "MCP server 'broken' did not start" in w for w in warnings), (
        warnings
    )
    assert gone(int(results["c2"])), "the stdio server outlived its session"
