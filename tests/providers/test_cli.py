"""The cli-json providers with small executable fake CLIs (real processes, real pipes)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from cadenza.config import CadenzaConfig
from cadenza.messages import SystemMessage, ToolSpec, UserMessage
from cadenza.providers.base import ModelRequest, ProviderError
from cadenza.providers.cli import CliProvider
from cadenza.providers.cli_adapters import ADAPTERS
from cadenza.providers.cli_turn import CORRECTION_PROMPT
from cadenza.providers.envelope import find_envelope
from cadenza.providers.registry import create_provider
from tests.providers.fake_cli import OUTPUTS, FakeCli, alive, claude_output, install_fake_cli

READ = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
ENVELOPE = json.dumps(
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}], "content": ""}
)
DONE = json.dumps({"tool_calls": [], "content": "All done."})
CORRECTION_FIRST_LINE = CORRECTION_PROMPT.splitlines()[1]


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCli:
    cli = install_fake_cli(tmp_path / "bin")
    for key, value in cli.env().items():
        monkeypatch.setenv(key, value)
    return cli


def request(*, tools: bool = True) -> ModelRequest:
    return ModelRequest(
        messages=[SystemMessage(content="You are Cadenza."), UserMessage(content="fix a.py")],
        tools=[READ] if tools else [],
    )


def claude(fake: FakeCli, **kwargs: object) -> CliProvider:
    return CliProvider(
        name="cli/claude",
        adapter=ADAPTERS["claude"],
        executable=str(fake.executable),
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("name", sorted(ADAPTERS))
async def test_each_adapter_finds_the_envelope_first_time(fake: FakeCli, name: str) -> None:
    fake.script({"stdout": OUTPUTS[name](ENVELOPE)})
    adapter = ADAPTERS[name]
    p = CliProvider(name=f"cli/{name}", adapter=adapter, executable=str(fake.executable))
    reply = await p.complete(request())
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("read_file", {"path": "a.py"})
    ]
    assert reply.finish_reason == "tool_calls"
    calls = fake.calls()
    assert len(calls) == 1
    argv = calls[0]["argv"]
    assert argv[: len(adapter.args)] == list(adapter.args)
    if adapter.prompt_via == "stdin":
        assert "fix a.py" in calls[0]["stdin"] and "fix a.py" not in " ".join(argv)
    else:
        assert calls[0]["stdin"] == "" and "fix a.py" in argv[-1]
    prompt = fake.prompt(0)
    assert "read_file(path: string)" in prompt  # the envelope instructions with the tools
    assert "You are Cadenza." in prompt
    assert calls[0]["cwd"] != str(Path.cwd())  # an empty folder, not the workspace


async def test_miss_then_fixed_takes_exactly_two_calls(fake: FakeCli) -> None:
    fake.script(
        {"stdout": claude_output("I will read a.py first.")},
        {"stdout": claude_output(ENVELOPE)},
    )
    reply = await claude(fake).complete(request())
    assert [c.name for c in reply.tool_calls] == ["read_file"]
    assert len(fake.calls()) == 2
    second = fake.prompt(1)
    assert CORRECTION_FIRST_LINE in second
    assert "I will read a.py first." in second  # the rejected reply is quoted back
    assert CORRECTION_FIRST_LINE not in fake.prompt(0)


async def test_miss_twice_keeps_the_first_answer_after_exactly_two_calls(fake: FakeCli) -> None:
    fake.script(
        {"stdout": claude_output("The bug is on line 3.")},
        {"stdout": claude_output("Still prose, sorry.")},
        {"stdout": claude_output(ENVELOPE)},  # never reached: the budget is one retry
    )
    reply = await claude(fake).complete(request())
    assert reply.content == "The bug is on line 3."
    assert reply.tool_calls == [] and reply.finish_reason == "stop"
    assert len(fake.calls()) == 2


@pytest.mark.parametrize(
    "answer",
    [
        f"```json\n{ENVELOPE}\n```",
        f"Sure. I'll read it now:\n{ENVELOPE}\nThat should show the bug.",
        f"Plan {{step 1}} then:\n```\n{ENVELOPE}\n```",
    ],
    ids=["fenced", "prose", "braces-in-prose"],
)
async def test_envelope_in_fences_or_prose_is_found(fake: FakeCli, answer: str) -> None:
    fake.script({"stdout": claude_output(answer)})
    reply = await claude(fake).complete(request())
    assert [c.name for c in reply.tool_calls] == ["read_file"]
    assert len(fake.calls()) == 1


async def test_malformed_json_is_a_miss(fake: FakeCli) -> None:
    fake.script(
        {"stdout": claude_output('{"tool_calls": [{"name": "read_file", "arguments": {"path": ')},
        {"stdout": claude_output(ENVELOPE)},
    )
    reply = await claude(fake).complete(request())
    assert [c.name for c in reply.tool_calls] == ["read_file"]
    assert len(fake.calls()) == 2


async def test_empty_tool_calls_ends_the_turn_without_retry(fake: FakeCli) -> None:
    fake.script({"stdout": claude_output(DONE)})
    reply = await claude(fake).complete(request())
    assert reply.content == "All done." and reply.tool_calls == []
    assert len(fake.calls()) == 1


async def test_prose_without_tools_offered_is_the_answer(fake: FakeCli) -> None:
    fake.script({"stdout": claude_output("Just an answer.")})
    reply = await claude(fake).complete(request(tools=False))
    assert reply.content == "Just an answer."
    assert len(fake.calls()) == 1


async def test_non_zero_exit_is_a_provider_error_with_stderr_tail(fake: FakeCli) -> None:
    fake.script({"stdout": "", "stderr": "warming up\nError: not logged in", "exit": 3})
    with pytest.raises(ProviderError, match=r"(?s)exited with status 3: .*not logged in"):
        await claude(fake).complete(request())
    assert len(fake.calls()) == 1  # failures are not contract misses: no repair


async def test_a_key_the_cli_prints_never_reaches_the_error(
    fake: FakeCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-cli-leak-000111")
    fake.script({"stderr": "auth failed for sk-ant-cli-leak-000111", "exit": 1})
    with pytest.raises(ProviderError) as info:
        await claude(fake).complete(request())
    assert "auth failed" in str(info.value)
    assert "sk-ant-cli-leak-000111" not in str(info.value)


async def test_cli_reported_error_is_a_provider_error(fake: FakeCli) -> None:
    fake.script({"stdout": claude_output("Credit balance too low", is_error=True)})
    with pytest.raises(ProviderError, match="Credit balance too low"):
        await claude(fake).complete(request())


async def test_unparsable_output_is_a_provider_error(fake: FakeCli) -> None:
    fake.script({"stdout": "<html>oops</html>"})
    with pytest.raises(ProviderError, match="not the JSON it should print"):
        await claude(fake).complete(request())


async def test_hanging_cli_times_out_and_its_group_is_gone(fake: FakeCli) -> None:
    fake.script({"sleep": 60, "child": True})
    started = time.monotonic()
    with pytest.raises(ProviderError, match="no answer within 1 s"):
        await claude(fake, timeout_s=1.0).complete(request())
    assert time.monotonic() - started < 10
    (call,) = fake.calls()
    assert call["pgid"] == call["pid"]  # it led a process group of its own
    await wait_gone(call["pid"], call["child"])


async def test_cancellation_kills_the_process_group_at_once(fake: FakeCli) -> None:
    fake.script({"sleep": 60, "child": True})
    task = asyncio.create_task(claude(fake).complete(request()))
    deadline = time.monotonic() + 15
    while not fake.calls() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    (call,) = fake.calls()
    cancelled = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_gone(call["pid"], call["child"])
    assert time.monotonic() - cancelled < 2.0


async def wait_gone(*pids: int) -> None:
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not [p for p in pids if alive(p)], "the CLI's process group outlived the call"


async def test_missing_executable_names_the_override(tmp_path: Path) -> None:
    p = CliProvider(
        name="cli/claude", adapter=ADAPTERS["claude"], executable=str(tmp_path / "nope")
    )
    with pytest.raises(ProviderError, match="CADENZA_CLI_CLAUDE"):
        await p.complete(request())


async def test_registry_names_env_override_and_model_flag(
    fake: FakeCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CADENZA_CLI_CLAUDE", str(fake.executable))
    fake.script({"stdout": claude_output(DONE)})
    p = create_provider("cli/claude/sonnet", CadenzaConfig())
    assert isinstance(p, CliProvider) and p.name == "cli/claude/sonnet"
    await p.complete(request())
    argv = fake.calls()[0]["argv"]
    assert argv[-2:] == ["--model", "sonnet"]


async def test_config_replaces_the_arguments(fake: FakeCli) -> None:
    config = CadenzaConfig.model_validate(
        {"providers": {"cli/gemini": {"executable": str(fake.executable), "args": ["--yolo"]}}}
    )
    fake.script({"stdout": OUTPUTS["gemini"](DONE)})
    p = create_provider("cli/gemini", config)
    await p.complete(request())
    argv = fake.calls()[0]["argv"]
    assert argv[:2] == ["--yolo", "-p"]


def test_find_envelope_is_structural() -> None:
    assert find_envelope("no json here", id_prefix="x") is None
    assert find_envelope('{"answer": 42}', id_prefix="x") is None
    assert find_envelope('{"content": "hi", "tool_calls": [', id_prefix="x") is None
    assert find_envelope('{"content": "only text"}', id_prefix="x") == ("only text", [])
    wrapped = json.dumps({"reply": json.loads(ENVELOPE)})
    found = find_envelope(wrapped, id_prefix="x")
    assert found is not None and found[1][0].name == "read_file"
    assert found[1][0].id == "x_0"
    two = f"{DONE}\n{ENVELOPE}"
    first = find_envelope(two, id_prefix="x")
    assert first == ("All done.", [])
    bad_call = '{"tool_calls": [{"arguments": {}}], "content": ""}'
    assert find_envelope(bad_call, id_prefix="x") is None
