"""MCP tools in engine sessions: listing, calls through the dispatcher, errors, teardown."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest

from cadenza.config import CadenzaConfig, load_config
from cadenza.config.mcp import McpConfig, McpServerConfig, from_acp
from cadenza.engine.events import SessionFinished
from cadenza.engine.permissions import PermissionAnswer
from cadenza.engine.session import Session
from cadenza.host.mcp import attach_mcp, connect_then
from cadenza.mcp.client import McpServers
from cadenza.mcp.naming import tool_name
from cadenza.mcp.tools import MAX_REF_DEPTH, model_schema
from cadenza.messages import ToolMessage
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply
from tests.mcp.conftest import echo_server


def make_session(
    tmp_path: Path, provider: ScriptedProvider, editor: MemoryEditor | None = None
) -> tuple[Session, MemoryEditor]:
    editor = editor or MemoryEditor()
    session = Session(
        session_id="s1", task="do it", root=tmp_path, provider=provider, editor=editor
    )  # type: ignore[arg-type]
    return session, editor


def results(session: Session) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in session.messages if isinstance(m, ToolMessage)}


def gone(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_names_are_namespaced_sanitized_and_bounded() -> None:
    assert tool_name("echo", "add") == "mcp__echo__add"
    assert tool_name("my server", "do.it/now") == "mcp__my_server__do_it_now"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long.startswith("mcp__sss")
    assert long != tool_name("s" * 40, "t" * 41)


def test_model_schema_inlines_refs() -> None:
    schema = {
        "title": "args",
        "type": "object",
        "properties": {
            "node": {"$ref": "#/$defs/Node", "description": "the root"},
            "anything": True,
            "kind": {"enum": [{"$ref": "kept as data"}]},
        },
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"child": {"$ref": "#/$defs/Node"}, "v": {"type": "integer"}},
            }
        },
    }
    out = model_schema(schema)
    assert "title" not in out and "$defs" not in out
    node = out["properties"]["node"]
    assert node["description"] == "the root" and node["properties"]["v"] == {"type": "integer"}
    depth = 0
    while "properties" in node:
        node, depth = node["properties"]["child"], depth + 1
    assert node == {} and depth == MAX_REF_DEPTH  # a recursive ref ends as "anything"
    assert out["properties"]["anything"] == {}
    assert out["properties"]["kind"] == {"enum": [{"$ref": "kept as data"}]}
    assert model_schema({"properties": {}}) == {"type": "object", "properties": {}}


def test_config_shapes_and_acp_conversion() -> None:
    stdio = McpServerConfig.model_validate({"name": "a", "command": "x", "env": {"K": "v"}})
    assert stdio.transport == "stdio"
    http = McpServerConfig.model_validate({"name": "b", "url": "http://h/mcp", "timeoutS": 3})
    assert http.transport == "http" and http.timeout_s == 3
    for bad in ({"name": "c"}, {"name": "c", "command": "x", "url": "http://h"}):
        with pytest.raises(ValueError, match="either command"):
            McpServerConfig.model_validate(bad)
    with pytest.raises(ValueError, match="two MCP servers"):
        McpConfig.model_validate({"servers": [{"name": "a", "command": "x"}] * 2})
    config = CadenzaConfig().merged(
        {"mcp": {"servers": [{"name": "a", "command": "x"}], "gated": False}}, "init"
    )
    assert config.mcp.servers[0].name == "a" and not config.mcp.gated
    configs, problems = from_acp(
        [
            {"name": "s", "command": "run", "args": ["-x"], "env": [{"name": "K", "value": "v"}]},
            {
                "type": "http",
                "name": "h",
                "url": "https://h/mcp",
                "headers": [{"name": "X-A", "value": "1"}],
            },
            {"type": "sse", "name": "old", "url": "https://h/sse", "headers": []},
        ]
    )
    assert [(c.name, c.transport) for c in configs] == [("s", "stdio"), ("h", "http")]
    assert configs[0].env == {"K": "v"} and configs[0].args == ["-x"]
    assert configs[1].headers == {"X-A": "1"}
    assert len(problems) == 1 and "sse" in problems[0]


def test_a_workspace_config_may_not_start_mcp_servers(tmp_path: Path) -> None:
    (tmp_path / "cadenza.toml").write_text(
        '[[mcp.servers]]\nname = "evil"\ncommand = "sh"\nargs = ["-c", "touch pwned"]\n'
    )
    warnings: list[str] = []
    config = load_config(tmp_path, warnings)
    assert config.mcp.servers == [] or all(s.name != "evil" for s in config.mcp.servers)
    assert any("mcp" in w for w in warnings)


async def test_tools_listed_called_gated_and_closed(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            reply(
                call("mcp__echo__add", "c1", a=2, b=3),
                call("mcp__echo__shout", "c2", text="hi"),
                call("mcp__echo__pid", "c3"),
                call("mcp__echo__area", "c4", box={"width": 2, "height": 3.5}),
            ),
            reply(content="done"),
        ]
    )
    session, editor = make_session(tmp_path, provider)
    warnings: list[str] = []
    (tmp_path / "sub").mkdir()
    server = echo_server(env={"ECHO_PREFIX": ">"}, cwd="sub")
    names = await attach_mcp(session, McpConfig(), [server], warnings.append)
    assert warnings == []
    tools = ("add", "shout", "fail", "slow", "area", "crash", "pid")
    assert names == [f"mcp__echo__{t}" for t in tools]
    try:
        outcome = await session.run()
    finally:
        resource = session.rt.resources.find(McpServers)
        await session.aclose()
    assert outcome.stop_reason == "end_turn"
    spec = next(s for s in provider.requests[0].tools if s.name == "mcp__echo__add")
    assert "Add two integers" in spec.description
    assert spec.parameters["required"] == ["a", "b"]
    assert spec.parameters["properties"]["a"]["type"] == "integer"
    got = results(session)
    assert got["c1"].content == "5" and not got["c1"].is_error
    assert got["c2"].content == ">HI"  # the configured env reached the server
    pid = int(got["c3"].content)
    # Gated by default: the person was asked for each call.
    asked = [r.name for r in editor.asked]
    assert asked == ["mcp__echo__add", "mcp__echo__shout", "mcp__echo__pid", "mcp__echo__area"]
    # A nested argument: the $ref is inlined for the model, the call works.
    area = next(s for s in provider.requests[0].tools if s.name == "mcp__echo__area")
    assert "$ref" not in json.dumps(area.parameters)
    assert area.parameters["properties"]["box"]["properties"]["width"]["type"] == "number"
    assert got["c4"].content == "7.0"
    assert editor.asked[0].kind == "other"
    assert resource is not None and resource.connections == []
    assert gone(pid), "the stdio server outlived its session"


async def test_errors_invalid_arguments_timeouts_and_rejections(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            reply(
                call("mcp__echo__fail", "e1"),
                call("mcp__echo__add", "e2", a="x"),
                call("mcp__echo__slow", "e3", seconds=10),
                call("mcp__echo__shout", "e4", text="no"),
                call("mcp__echo__slow", "e5", seconds=0),
                call("mcp__echo__area", "e6", box={"width": "wide"}),
            ),
            reply(content="done"),
        ]
    )
    editor = MemoryEditor(
        permissions=[
            PermissionAnswer(outcome="selected", option="allow_once"),  # fail
            PermissionAnswer(outcome="selected", option="allow_once"),  # slow 10
            PermissionAnswer(outcome="selected", option="reject_once"),  # shout
        ]
    )
    session, editor = make_session(tmp_path, provider, editor)
    await attach_mcp(
        session, McpConfig(), [echo_server(timeoutS=0.5)], lambda text: pytest.fail(text)
    )
    try:
        outcome = await session.run()
    finally:
        await session.aclose()
    assert outcome.stop_reason == "end_turn"
    got = results(session)
    assert got["e1"].is_error and "the fail tool failed as asked" in got["e1"].content
    assert got["e2"].is_error and "invalid arguments for mcp__echo__add" in got["e2"].content
    assert "'x' is not of type 'integer'" in got["e2"].content
    assert "'b' is a required property" in got["e2"].content
    assert got["e3"].is_error and "timed out after 0.5 s" in got["e3"].content
    assert got["e4"].is_error and "rejected" in got["e4"].content
    # After a timed-out call the connection still works.
    assert not got["e5"].is_error and got["e5"].content == "slept 0 s"
    assert got["e6"].is_error and "box.width: 'wide' is not of type 'number'" in got["e6"].content
    assert "box: 'height' is a required property" in got["e6"].content
    # Invalid arguments are refused before the person is asked.
    asked = {r.name for r in editor.asked}
    assert asked == {"mcp__echo__fail", "mcp__echo__slow", "mcp__echo__shout"}


async def test_two_sessions_with_different_servers_are_isolated(tmp_path: Path) -> None:
    provider_a = ScriptedProvider(
        [
            reply(call("mcp__b__add", "x1", a=1, b=1), call("mcp__a__add", "x2", a=1, b=1)),
            reply(content="ok"),
        ]
    )
    provider_b = ScriptedProvider(
        [reply(call("mcp__b__shout", "y1", text="b")), reply(content="ok")]
    )
    a, editor_a = make_session(tmp_path, provider_a)
    b, editor_b = make_session(tmp_path, provider_b)
    not_gated = McpConfig(gated=False)
    await attach_mcp(a, not_gated, [echo_server("a")], lambda text: pytest.fail(text))
    await attach_mcp(b, not_gated, [echo_server("b")], lambda text: pytest.fail(text))
    try:
        await a.run()
        await b.run()
    finally:
        await a.aclose()
        await b.aclose()
    names_a = {s.name for s in provider_a.requests[0].tools}
    names_b = {s.name for s in provider_b.requests[0].tools}
    assert "mcp__a__add" in names_a and not any(n.startswith("mcp__b__") for n in names_a)
    assert "mcp__b__add" in names_b and not any(n.startswith("mcp__a__") for n in names_b)
    got_a = results(a)
    assert got_a["x1"].is_error and "unknown tool" in got_a["x1"].content
    assert got_a["x2"].content == "2"
    assert results(b)["y1"].content == "B"
    assert editor_a.asked == editor_b.asked == []  # mcp.gated false: nobody was asked


async def test_a_server_that_fails_to_start_is_left_out(tmp_path: Path) -> None:
    provider = ScriptedProvider([reply(call("list_files", "l1")), reply(content="ok")])
    session, _ = make_session(tmp_path, provider)
    warnings: list[str] = []
    servers = [
        McpServerConfig(name="missing", command=str(tmp_path / "no-such-program")),
        McpServerConfig(name="quits", command=sys.executable, args=["-c", "pass"]),
        echo_server("ok"),
    ]
    config = McpConfig(startup_timeout_s=10)
    started = time.monotonic()
    names = await attach_mcp(session, config, servers, warnings.append)
    assert time.monotonic() - started < 8
    try:
        outcome = await session.run()
    finally:
        await session.aclose()
    assert outcome.stop_reason == "end_turn"
    assert len(warnings) == 2, warnings
    assert "'missing' did not start" in warnings[0]
    assert "'quits' did not start" in warnings[1]
    assert names and all(n.startswith("mcp__ok__") for n in names)
    offered = {s.name for s in provider.requests[0].tools}
    assert "read_file" in offered and "mcp__ok__add" in offered


async def test_streamable_http_server(tmp_path: Path, http_echo: str) -> None:
    provider = ScriptedProvider(
        [
            reply(call("mcp__web__shout", "h1", text="over http"), call("mcp__web__fail", "h2")),
            reply(content="ok"),
        ]
    )
    session, editor = make_session(tmp_path, provider)
    server = McpServerConfig(name="web", url=http_echo, headers={"X-Test": "1"})
    names = await attach_mcp(session, McpConfig(), [server], lambda text: pytest.fail(text))
    assert "mcp__web__add" in names
    try:
        await session.run()
    finally:
        await session.aclose()
    got = results(session)
    assert got["h1"].content == "OVER HTTP" and not got["h1"].is_error
    assert got["h2"].is_error
    assert json.dumps([r.name for r in editor.asked]) == '["mcp__web__shout", "mcp__web__fail"]'


async def test_a_server_that_hangs_or_crashes(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            reply(call("mcp__echo__crash", "k1")),
            reply(call("mcp__echo__add", "k2", a=1, b=2)),
            reply(content="ok"),
        ]
    )
    session, _ = make_session(tmp_path, provider)
    warnings: list[str] = []
    hangs = McpServerConfig(
        name="hangs", command=sys.executable, args=["-c", "import sys; sys.stdin.read()"]
    )
    config = McpConfig(startup_timeout_s=3, gated=False)
    started = time.monotonic()
    names = await attach_mcp(session, config, [hangs, echo_server()], warnings.append)
    assert time.monotonic() - started < 8
    assert len(warnings) == 1 and "'hangs' did not start" in warnings[0]
    assert "within 3 s" in warnings[0]
    assert "mcp__echo__crash" in names
    try:
        outcome = await session.run()
    finally:
        await session.aclose()
    assert outcome.stop_reason == "end_turn"
    got = results(session)
    assert got["k1"].is_error and got["k2"].is_error
    assert "MCP server 'echo'" in got["k2"].content, got


async def test_cancelled_while_connecting_ends_the_session_and_the_server(
    tmp_path: Path,
) -> None:
    session, editor = make_session(tmp_path, ScriptedProvider([]))
    pid_file = tmp_path / "pid"
    script = "import os, sys; open(sys.argv[1], 'w').write(str(os.getpid())); sys.stdin.read()"
    hangs = McpServerConfig(
        name="hangs", command=sys.executable, args=["-c", script, str(pid_file)]
    )
    ran = False

    async def drive() -> None:
        nonlocal ran
        ran = True

    task = asyncio.create_task(
        connect_then(session, McpConfig(startup_timeout_s=60), [hangs], pytest.fail, drive())
    )
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the server did not start"
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not ran
    end = editor.events[-1]
    assert isinstance(end, SessionFinished) and end.stop_reason == "cancelled"
    assert gone(int(pid_file.read_text()))
