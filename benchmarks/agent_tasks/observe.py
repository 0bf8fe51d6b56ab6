"""What one session showed: counted from the client's events, its transcript and llama-server's log.

Sources, in order of preference:

- the session updates the client observed: ``tool_call`` (with the tool's ``name``),
  ``tool_call_update`` (its ``observation`` marks a call the engine answered itself: ``repeat``
  from the stuck detector, ``cut`` arguments, ``invalid`` arguments, ``not_allowed``),
  ``model_reply`` (per step: how many calls, ``finish_reason``, tokens), ``repair`` (an
  exactly-once repair and whether it recovered), ``session_end``;
- the session's transcript (the server's own record, in the run's private state folder):
  repeated calls over the whole session (the stuck detector forgets after each edit);
- llama-server's log: tokens, when a reply carried no usage.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cadenza.client.events import ClientEvent, EditRejected, EditWritten
from cadenza.engine.transcript import MessageRecord, read_transcript
from cadenza.messages import AssistantMessage
from cadenza.schema.updates import ModelReply, Repair, SessionEnd, ToolCall, ToolCallUpdate

NO_ENVELOPE = "returned no JSON envelope"
"""In a ``session_end`` message: the provider's reply was not an envelope (a contract miss)."""

_TIMING = re.compile(r"\b(prompt eval|eval) time =\s*([\d.]+) ms /\s*(\d+) tokens")
_RELEASE = re.compile(r"stop processing: n_tokens = (\d+)")


def canonical_arguments(raw: Any) -> str:
    """Tool arguments as one canonical JSON string (a string that is JSON is parsed first)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return raw
    return json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass
class EventCounts:
    """Counts over the client's events of one session."""

    tool_calls: int = 0
    failed_calls: int = 0
    stuck_notes: int = 0
    cut_replies: int = 0
    cut_calls: int = 0
    invalid_calls: int = 0
    edits_written: int = 0
    edits_rejected: int = 0
    contract_misses: int = 0
    repairs: int = 0
    repairs_recovered: int = 0
    replies: int = 0
    replies_without_calls: int = 0
    last_reply_had_calls: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_reported: bool = False
    agent_text_chunks: int = 0
    tools: Counter[str] = field(default_factory=Counter)


def count_events(events: list[ClientEvent]) -> EventCounts:
    """Tally the updates of one session (see the module docstring for what each means)."""
    counts = EventCounts()
    for event in events:
        if isinstance(event, ToolCall):
            counts.tool_calls += 1
            counts.tools[event.name or "?"] += 1
        elif isinstance(event, ModelReply):
            _count_reply(counts, event)
        elif isinstance(event, Repair):
            counts.repairs += 1
            counts.repairs_recovered += event.recovered
        elif isinstance(event, ToolCallUpdate):
            _count_result(counts, event)
        elif isinstance(event, EditWritten):
            counts.edits_written += 1
        elif isinstance(event, EditRejected):
            counts.edits_rejected += 1
        elif isinstance(event, SessionEnd) and NO_ENVELOPE in event.message:
            counts.contract_misses += 1
        elif getattr(event, "session_update", None) == "agent_message_chunk":
            counts.agent_text_chunks += 1
    return counts


def _count_reply(counts: EventCounts, event: ModelReply) -> None:
    counts.replies += 1
    counts.replies_without_calls += event.tool_calls == 0
    counts.last_reply_had_calls = event.tool_calls > 0
    if event.finish_reason == "length":
        counts.cut_replies += 1
        counts.contract_misses += 1  # a cut reply breaks the contract (one whole envelope)
    if event.prompt_tokens is not None or event.completion_tokens is not None:
        counts.usage_reported = True
        counts.prompt_tokens += event.prompt_tokens or 0
        counts.completion_tokens += event.completion_tokens or 0


def _count_result(counts: EventCounts, event: ToolCallUpdate) -> None:
    if event.status not in ("completed", "failed"):
        return
    if event.status == "failed":
        counts.failed_calls += 1
    if event.observation == "repeat":
        counts.stuck_notes += 1
    elif event.observation == "cut":
        counts.cut_calls += 1
    elif event.observation == "invalid":
        counts.invalid_calls += 1


@dataclass(frozen=True)
class TranscriptCounts:
    """What the transcript says of the model's replies and calls.

    Repeats are counted here, not from the updates: a ``tool_call`` update carries the call's
    title, kind and arguments but not the tool's name.
    """

    replies: int
    replies_without_calls: int
    last_reply_had_calls: bool
    calls: int
    repeated_calls: int
    """Calls identical (tool name and canonical arguments) to an earlier call of the session."""
    tools: dict[str, int] = field(default_factory=dict)


def count_transcript(sessions_dir: Path, session_id: str) -> TranscriptCounts | None:
    """Count the model's replies in the session's transcript; None when there is none."""
    path = sessions_dir / f"{session_id}.jsonl"
    if not session_id or not path.is_file():
        return None
    replies = [
        record.message
        for record in read_transcript(path)
        if isinstance(record, MessageRecord) and isinstance(record.message, AssistantMessage)
    ]
    calls = [(c.name, canonical_arguments(c.arguments)) for m in replies for c in m.tool_calls]
    seen: Counter[tuple[str, str]] = Counter(calls)
    return TranscriptCounts(
        replies=len(replies),
        replies_without_calls=sum(1 for m in replies if not m.tool_calls),
        last_reply_had_calls=bool(replies and replies[-1].tool_calls),
        calls=len(calls),
        repeated_calls=sum(n - 1 for n in seen.values()),
        tools=dict(sorted(Counter(name for name, _ in calls).items())),
    )


def narration_turns(counts: EventCounts, *, success: bool) -> int:
    """Replies that ended a turn with no tool call while the task was not done.

    A reply without calls ends the turn; when the checker passes, the last such reply is the
    legitimate end (the task was done), every other one is narration. Under the ``complete``
    ending every reply holds a call, so there is none by construction.
    """
    legit = 1 if success and counts.replies and not counts.last_reply_had_calls else 0
    return counts.replies_without_calls - legit


@dataclass(frozen=True)
class Usage:
    """Token counts from llama-server's log: one ``print_timing`` block per request."""

    requests: int
    prompt_tokens_evaluated: int
    """Prompt tokens actually evaluated (the cached prefix of the previous request is not)."""
    completion_tokens: int
    peak_context_tokens: int
    prompt_eval_ms: float = 0.0
    """llama-server's own time evaluating prompt tokens, all requests."""
    eval_ms: float = 0.0
    """llama-server's own time generating tokens, all requests."""


def read_usage(log_path: Path) -> Usage | None:
    """Sum the per-request timings of llama-server's log; None when the log has none."""
    if not log_path.is_file():
        return None
    prompt = completion = requests = peak = 0
    prompt_ms = eval_ms = 0.0
    for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        timing = _TIMING.search(line)
        if timing is not None:
            if timing.group(1) == "prompt eval":
                prompt += int(timing.group(3))
                prompt_ms += float(timing.group(2))
                requests += 1
            else:
                completion += int(timing.group(3))
                eval_ms += float(timing.group(2))
            continue
        release = _RELEASE.search(line)
        if release is not None:
            peak = max(peak, int(release.group(1)))
    if not requests:
        return None
    return Usage(
        requests=requests,
        prompt_tokens_evaluated=prompt,
        completion_tokens=completion,
        peak_context_tokens=peak,
        prompt_eval_ms=round(prompt_ms, 1),
        eval_ms=round(eval_ms, 1),
    )


class LogSlice:
    """The part of llama-server's log written during one system's run: its token counts."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.start = log.stat().st_size if log.is_file() else 0

    def save(self, dest: Path) -> dict[str, Any] | None:
        """Write the slice to ``dest``; the usage it records (None: no request finished)."""
        with self.log.open("rb") as fh:
            fh.seek(self.start)
            dest.write_bytes(fh.read())
        usage = read_usage(dest)
        return None if usage is None else vars(usage)
