"""Suite 2, tool-call fuzzing in process: every tool, through the dispatcher, hostile arguments.

``prepare``/``run`` (the same code the session runner calls) with ``tests.doubles.MemoryEditor``,
whose edits land on disk through the server's own writer. After every call, nothing outside
the workspace changed (a sibling folder ``outside`` is snapshotted), and every call naming a
path that leads outside (``..``, absolute paths, symlinks out of the root) is an error result.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from cadenza.messages import ToolCall
from cadenza.tools.base import ToolContext
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.registry import default_tools
from tests.doubles import MemoryEditor
from tests.reliability.knobs import scaled
from tests.reliability.toolfuzz import TOOLS, arguments_strategy, escapes, make_layout, snapshot

CALLS = scaled(1_500, 30_000)
STATS = {"calls": 0, "escaping": 0, "errors": 0, "started": 0.0}
REGISTRY = default_tools()
ESCAPE_FILE = Path("/tmp/cadenza-fuzz-escape.txt")


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    base = tmp_path_factory.mktemp("tool-fuzz")
    root, outside = make_layout(base)
    STATS["started"] = time.monotonic()
    return root, outside, snapshot(outside)


@st.composite
def tool_call(draw: st.DrawFn, outside: Path) -> tuple[str, Any]:
    tool = draw(st.sampled_from(TOOLS))
    arguments = draw(arguments_strategy(tool, outside))
    return tool, arguments


async def _call(root: Path, tool: str, raw_arguments: str) -> tuple[bool, str]:
    prepared = prepare(ToolCall(id="c1", name=tool, arguments=raw_arguments), REGISTRY)
    if not isinstance(prepared, PreparedCall):
        return prepared.is_error, prepared.content
    result = await run(prepared, ToolContext(root=root, host=MemoryEditor()))
    return result.is_error, result.content


def test_tool_calls_never_touch_outside(layout: tuple[Path, Path, dict[str, Any]]) -> None:
    root, outside, before = layout

    @settings(
        max_examples=CALLS,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def one_call(data: st.DataObject) -> None:
        tool, arguments = data.draw(tool_call(outside))
        try:
            raw = json.dumps(arguments)
        except ValueError:
            raw = str(arguments)
        if data.draw(st.integers(0, 20)) == 0:  # sometimes not JSON at all, or not an object
            raw = data.draw(st.sampled_from(["{", "[]", "null", '"path"', raw[: len(raw) // 2]]))
        is_error, content = asyncio.run(_call(root, tool, raw))
        STATS["calls"] += 1
        STATS["errors"] += is_error
        assert snapshot(outside) == before, f"{tool} {raw[:300]} changed the outside folder"
        assert not ESCAPE_FILE.exists(), f"{tool} {raw[:300]} wrote {ESCAPE_FILE}"
        if raw.startswith("{") and isinstance(arguments, dict) and escapes(arguments, outside):
            STATS["escaping"] += 1
            assert is_error, f"{tool} {raw[:300]} escaped the workspace: {content[:300]}"
            assert "TOP SECRET" not in content and "deep\n" not in content

    one_call()
    print(
        f"\ntool fuzz (in process): {STATS['calls']} calls, {STATS['escaping']} escaping, "
        f"{STATS['errors']} error results, {time.monotonic() - STATS['started']:.1f} s"
    )
