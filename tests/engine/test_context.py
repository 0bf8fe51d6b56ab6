"""Context pressure: counting, compaction that keeps pairs whole, bounded results."""

from __future__ import annotations

from cadenza.engine.context import ContextLimits, ContextManager, bound_result
from cadenza.engine.history import check_strict
from cadenza.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)


def turn(i: int, size: int = 2000) -> list[Message]:
    call = ToolCall(id=f"c{i}", name="read_file", arguments=f'{{"path": "f{i}.py"}}')
    return [
        AssistantMessage(content="", tool_calls=[call]),
        ToolMessage(tool_call_id=f"c{i}", name="read_file", content=f"f{i}.py\n" + "x" * size),
    ]


def history(turns: int) -> list[Message]:
    messages: list[Message] = [
        SystemMessage(content="system"),
        UserMessage(content="the task", tag="task"),
    ]
    for i in range(turns):
        messages += turn(i)
        if i % 3 == 2:
            messages.append(UserMessage(tag="checkpoint", content=f"checkpoint {i}"))
    return messages


def test_pressure_levels_and_reported_usage() -> None:
    manager = ContextManager(ContextLimits(context_size=8192))
    small = history(1)
    assert manager.pressure(small) == "ok"
    manager.record_usage(Usage(prompt_tokens=7000, completion_tokens=100), covered=len(small))
    assert manager.tokens(small) == 7100  # the provider's own count wins over the estimate
    assert manager.pressure(small) == "hard"


def test_compaction_keeps_system_task_checkpoints_and_whole_pairs() -> None:
    manager = ContextManager(ContextLimits(context_size=8192))
    messages = history(12)
    assert manager.pressure(messages) != "ok"
    compacted = manager.compact(messages)
    assert compacted[0] == messages[0] and compacted[1] == messages[1]
    summary = compacted[2]
    assert isinstance(summary, UserMessage) and summary.tag == "summary"
    assert 'read_file {"path":"f0.py"} → f0.py' in summary.content
    checkpoints = [
        m.content for m in compacted if isinstance(m, UserMessage) and m.tag == "checkpoint"
    ]
    assert checkpoints[-1] == "checkpoint 11"
    assert "checkpoint 5" in checkpoints  # the latest ones stay
    check_strict(compacted)  # no tool message lost its call, no call lost its result
    assert manager.tokens(compacted) < manager.tokens(messages)
    assert compacted[-1] == messages[-1]


def test_compacting_twice_folds_the_old_summary_in() -> None:
    manager = ContextManager(ContextLimits(context_size=8192))
    once = manager.compact(history(12))
    twice = manager.compact(once + turn(50) + turn(51) + turn(52) + turn(53))
    summaries = [m for m in twice if isinstance(m, UserMessage) and m.tag == "summary"]
    assert len(summaries) == 1 and "f0.py" in summaries[0].content
    check_strict(twice)


def test_bound_result() -> None:
    assert bound_result("short", 100) == "short"
    cut = bound_result("x" * 5_000 + "y" * 5_000 + "THE END", 2_000)
    assert len(cut) <= 2_000
    assert "[result truncated: 8307 of 10007 characters omitted" in cut
    assert cut.startswith("x" * 1_000) and cut.endswith("THE END")
