"""Execution: validation, timeouts and exceptions become error results."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import anyio
from typing_extensions import override

from cadenza.messages import ToolCall
from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.registry import ToolRegistry
from tests.doubles import MemoryEditor


class SleepArgs(ToolArgs):
    seconds: float


class Sleep(Tool[SleepArgs]):
    name = "sleep"
    description = "sleep"
    args_model = SleepArgs
    timeout_s: ClassVar[float] = 0.2

    @override
    async def invoke(self, args: SleepArgs, ctx: ToolContext) -> ToolResult:
        await anyio.sleep(args.seconds)
        return ToolResult(content="slept")


class Boom(Tool[SleepArgs]):
    name = "boom"
    description = "raises"
    args_model = SleepArgs

    @override
    async def invoke(self, args: SleepArgs, ctx: ToolContext) -> ToolResult:
        raise KeyError("the tool broke")


REGISTRY = ToolRegistry([Sleep(), Boom()])


async def execute(tmp_path: Path, name: str, arguments: str) -> ToolResult:
    prepared = prepare(ToolCall(id="1", name=name, arguments=arguments), REGISTRY)
    if isinstance(prepared, ToolResult):
        return prepared
    assert isinstance(prepared, PreparedCall)
    return await run(prepared, ToolContext(root=tmp_path, host=MemoryEditor()))


async def test_runs_within_timeout(tmp_path: Path) -> None:
    assert (await execute(tmp_path, "sleep", '{"seconds": 0}')).content == "slept"


async def test_timeout_is_an_error_result(tmp_path: Path) -> None:
    result = await execute(tmp_path, "sleep", '{"seconds": 5}')
    assert result.is_error and "timed out after 0.2 s" in result.content


async def test_exception_is_an_error_result(tmp_path: Path) -> None:
    result = await execute(tmp_path, "boom", '{"seconds": 0}')
    assert result.is_error and "KeyError" in result.content and "the tool broke" in result.content


async def test_validation_errors(tmp_path: Path) -> None:
    assert "not valid JSON" in (await execute(tmp_path, "sleep", "{")).content
    assert "must be a JSON object" in (await execute(tmp_path, "sleep", "[1]")).content
    missing = await execute(tmp_path, "sleep", "{}")
    assert missing.is_error and "seconds: Field required" in missing.content
    unknown = await execute(tmp_path, "fly", "{}")
    assert unknown.is_error and "available tools: sleep, boom" in unknown.content


def test_duplicate_tool_names_are_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="duplicate"):
        ToolRegistry([Sleep(), Sleep()])
