"""The runner's counting, on made-up events, transcripts and logs (no model needed)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.agent_tasks.observe import (
    EventCounts,
    canonical_arguments,
    count_events,
    count_transcript,
    narration_turns,
    read_usage,
)
from benchmarks.agent_tasks.run import VARIANTS as RUN_VARIANTS
from benchmarks.agent_tasks.run import TaskResult, build_report, changed_files, markdown, table

from cadenza.client.edits import FileChange
from cadenza.client.events import ClientEvent, EditWritten
from cadenza.engine.pipeline import CUT_ARGUMENTS
from cadenza.engine.transcript import MessageRecord
from cadenza.engine.transcript_writer import TranscriptWriter
from cadenza.messages import AssistantMessage, UserMessage
from cadenza.messages import ToolCall as ModelCall
from cadenza.schema.updates import (
    ModelReply,
    Repair,
    SessionEnd,
    TextBlock,
    ToolCall,
    ToolCallUpdate,
    ToolOutput,
)


def result(call_id: str, status: str, text: str, observation: str | None = None) -> ToolCallUpdate:
    return ToolCallUpdate(
        tool_call_id=call_id,
        status=status,
        content=[ToolOutput(content=TextBlock(text=text))],
        observation=observation,
    )


def test_count_events() -> None:
    events: list[ClientEvent] = [
        ModelReply(step=1, tool_calls=1, finish_reason="tool_calls", completion_tokens=9),
        ToolCall(tool_call_id="a", name="read_file", raw_input={"path": "a.py"}),
        result("a", "completed", "x = 1"),
        ModelReply(step=2, tool_calls=1, finish_reason="tool_calls", completion_tokens=9),
        ToolCall(tool_call_id="b", name="read_file", raw_input={"path": "a.py"}),
        result("b", "failed", "You already called read_file", observation="repeat"),
        ModelReply(step=3, tool_calls=1, finish_reason="length", completion_tokens=64),
        Repair(step=3, reason="cut", recovered=False),
        ModelReply(step=3, tool_calls=1, finish_reason="length", completion_tokens=128),
        ToolCall(tool_call_id="c", name="edit_file", raw_input="{..."),
        result("c", "failed", CUT_ARGUMENTS, observation="cut"),
        EditWritten(label=None, changes=()),
        SessionEnd(stop_reason="error", message="local/x returned no JSON envelope (not JSON)"),
    ]
    counts = count_events(events)
    assert (counts.tool_calls, counts.failed_calls) == (3, 2)
    assert (counts.stuck_notes, counts.cut_replies, counts.cut_calls) == (1, 2, 1)
    assert counts.contract_misses == 3  # two cut replies and the fatal one
    assert (counts.repairs, counts.repairs_recovered) == (1, 0)
    assert (counts.replies, counts.completion_tokens, counts.usage_reported) == (4, 210, True)
    assert counts.tools == {"read_file": 2, "edit_file": 1}
    assert counts.edits_written == 1


def test_count_transcript_and_narration(tmp_path: Path) -> None:
    def call(n: int, path: str) -> ModelCall:
        return ModelCall(id=f"c{n}", name="read_file", arguments=json.dumps({"path": path}))

    replies = [
        AssistantMessage(tool_calls=[call(1, "a.py")]),
        AssistantMessage(content="I will now edit the file."),
        AssistantMessage(tool_calls=[call(2, "a.py")]),
        AssistantMessage(tool_calls=[call(3, "b.py")]),
        AssistantMessage(content="done"),
    ]
    with TranscriptWriter(tmp_path / "s1.jsonl") as writer:
        writer.append(MessageRecord(message=UserMessage(content="task")), sync=False)
        for reply in replies:
            writer.append(MessageRecord(message=reply), sync=False)
    counts = count_transcript(tmp_path, "s1")
    assert counts is not None
    assert (counts.replies, counts.replies_without_calls, counts.calls) == (5, 2, 3)
    assert counts.repeated_calls == 1
    assert counts.tools == {"read_file": 3}
    assert not counts.last_reply_had_calls
    assert count_transcript(tmp_path, "missing") is None
    assert count_transcript(tmp_path, "") is None


def test_narration_turns() -> None:
    ended = EventCounts(replies=5, replies_without_calls=2, last_reply_had_calls=False)
    assert narration_turns(ended, success=True) == 1  # the last reply ended a done task
    assert narration_turns(ended, success=False) == 2
    ran_out = EventCounts(replies=3, replies_without_calls=1, last_reply_had_calls=True)
    assert narration_turns(ran_out, success=True) == 1


def test_canonical_arguments() -> None:
    assert canonical_arguments('{"b": 1, "a": 2}') == canonical_arguments({"a": 2, "b": 1})
    assert canonical_arguments("{cut") == "{cut"


def test_read_usage(tmp_path: Path) -> None:
    log = tmp_path / "llama-server.log"
    log.write_text(
        "0.20.2 I slot print_timing: id  0 | task 0 | prompt eval time =   10889.61 ms /  1444 "
        "tokens (    7.54 ms per token,   132.60 tokens per second)\n"
        "0.20.2 I slot print_timing: id  0 | task 0 |        eval time =    8134.51 ms /    71 "
        "tokens (  116.21 ms per token,     8.61 tokens per second)\n"
        "0.20.2 I slot      release: id  0 | task 0 | stop processing: n_tokens = 1514, "
        "truncated = 0\n"
        "0.25.0 I slot print_timing: id  0 | task 72 | prompt eval time =    1072.40 ms /    71 "
        "tokens\n"
        "0.25.0 I slot print_timing: id  0 | task 72 |        eval time =    3699.97 ms /    47 "
        "tokens\n"
        "0.25.0 I slot      release: id  0 | task 72 | stop processing: n_tokens = 1561\n"
    )
    usage = read_usage(log)
    assert usage is not None
    assert (usage.requests, usage.prompt_tokens_evaluated, usage.completion_tokens) == (
        2,
        1515,
        118,
    )
    assert usage.peak_context_tokens == 1561
    assert (usage.prompt_eval_ms, usage.eval_ms) == (11962.0, 11834.5)  # llama-server's timings
    assert read_usage(tmp_path / "none.log") is None


def test_report_renders() -> None:
    results = [
        TaskResult(
            task="t01_x",
            success=False,
            check_reason="a | b",
            stop_reason="max_steps",
            steps=2,
            wall_s=3.0,
            total_s=4.0,
            tool_calls=2,
        )
    ]
    report = build_report(
        model="local/m",
        variant=RUN_VARIANTS["baseline"],
        max_steps=2,
        timeout=10.0,
        date="2026-01-01T00:00:00+00:00",
        machine={"nproc": 2, "cpu": "cpu"},
        planned=2,
        results=results,
    )
    assert report["complete"] is False
    assert report["summary"]["done"] == 0
    assert report["summary"]["by_kind"] == {"edit": {"tasks": 1, "done": 0}}
    assert report["task_set"] == "edits"
    assert report["summary"]["stop_reasons"] == {"max_steps": 1}
    assert "| t01_x | no | max_steps | 2 |" in markdown(report)
    assert "a / b" in markdown(report)
    assert table(report).row_count == 2


def test_changed_files() -> None:
    changes = (
        FileChange(path="b/x.py", kind="modified", before="a", after="b"),
        FileChange(path="a.py", kind="created", before=None, after="c"),
    )
    assert changed_files(changes) == ["created a.py", "modified b/x.py"]
