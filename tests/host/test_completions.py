"""Inline completions in the host: context windows, stop rules, dropping and cancelling."""

from __future__ import annotations

import asyncio
import logging

import pytest

from cadenza.config import CadenzaConfig
from cadenza.host.completion_context import (
    CHARS_PER_TOKEN,
    CompletionBudget,
    Cursor,
    RecentChunks,
    infill_request,
    trim_completion,
)
from cadenza.host.completions import CompletionQuery, CompletionService, local_infill_source
from cadenza.host.providers import ProviderPool
from cadenza.providers.base import ProviderError
from cadenza.providers.infill import InfillChunk, InfillReply, InfillRequest, InfillUnsupported
from tests.doubles import ScriptedProvider


class FakeInfill:
    """A scripted ``/infill`` client: answers ``text`` after ``delay`` seconds, counts calls."""

    def __init__(self, text: str = "x + 1", delay: float = 0.0, error: Exception | None = None):
        self.text = text
        self.delay = delay
        self.error = error
        self.requests: list[InfillRequest] = []
        self.cancelled = 0

    async def infill(self, request: InfillRequest) -> InfillReply:
        self.requests.append(request)
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        if self.error is not None:
            raise self.error
        return InfillReply(text=self.text)


def service_with(fake: FakeInfill, **kwargs: object) -> CompletionService:
    async def source() -> FakeInfill:
        return fake

    return CompletionService(source, **kwargs)  # type: ignore[arg-type]


def query(text: str = "y = \nz = 2\n", line: int = 0, column: int = 4) -> CompletionQuery:
    return CompletionQuery(
        uri="file:///w/a.py", filename="a.py", cursor=Cursor(text=text, line=line, column=column)
    )


# --- context windows -------------------------------------------------------------------------


def test_prefix_and_suffix_are_whole_lines_nearest_the_cursor_within_the_budget() -> None:
    lines = [f"line_{n:03d} = {n}" for n in range(200)]  # 14 characters + newline each
    text = "\n".join(lines)
    budget = CompletionBudget(prefix_tokens=20, suffix_tokens=10)
    request = infill_request(Cursor(text=text, line=100, column=5), (), budget)
    assert request.prompt == "line_"
    assert request.prefix.endswith("line_099 = 99\n")
    assert len(request.prefix) <= 20 * CHARS_PER_TOKEN
    assert request.prefix.count("\n") == (20 * CHARS_PER_TOKEN) // 15
    assert request.suffix.startswith("100 = 100\nline_101 = 101")
    assert len(request.suffix) <= 10 * CHARS_PER_TOKEN
    assert all(line in lines for line in request.prefix.splitlines())


def test_mid_line_stops_at_the_end_of_the_line_and_line_end_allows_a_block() -> None:
    text = "def f(a):\n    return g(a)\n"
    single = infill_request(Cursor(text=text, line=1, column=11), (), CompletionBudget())
    assert single.stop == ("\n",) and single.n_indent == 0
    assert single.n_predict == CompletionBudget().line_tokens
    block = infill_request(Cursor(text="def f(a):\n    ", line=1, column=4), (), CompletionBudget())
    assert block.stop == ("\n\n",) and block.n_indent == 4
    assert block.n_predict == CompletionBudget().block_tokens


def test_positions_past_the_text_are_clamped() -> None:
    request = infill_request(Cursor(text="ab", line=7, column=99), (), CompletionBudget())
    assert request.prompt == "ab" and request.suffix == ""


# --- stop rules ------------------------------------------------------------------------------


def test_single_line_is_cut_at_the_newline_and_loses_a_repeated_tail() -> None:
    cursor = Cursor(text="total = compute()\n", line=0, column=8)
    assert trim_completion("sum(xs) compute()\nmore", cursor) == "sum(xs)"
    assert trim_completion("  \n", cursor) == ""


def test_block_ends_at_a_blank_line_or_a_dedent() -> None:
    cursor = Cursor(text="def f(a):\n    \nprint(1)\n", line=1, column=4)
    assert trim_completion("x = a\n    return x\nprint(2)", cursor) == "x = a\n    return x"
    assert trim_completion("x = a\n\n    y = 2", cursor) == "x = a"


def test_a_block_that_repeats_the_following_text_is_dropped() -> None:
    cursor = Cursor(text="def f(a):\n    \n    return a\n", line=1, column=4)
    assert trim_completion("return a", cursor) == ""


# --- recent chunks ---------------------------------------------------------------------------


def test_recent_chunks_skip_the_current_document_and_keep_the_budget() -> None:
    ring = RecentChunks(size=3)
    ring.note("file:///a", "a.py", "A = 1\n", 0)
    ring.note("file:///b", "b.py", "B = 2\n", 0)
    ring.note("file:///b", "b.py", "B = 3\n", 1)  # overlaps: replaces b's chunk
    assert ring.extra_for("file:///a", 100) == (InfillChunk(filename="b.py", text="B = 3\n"),)
    assert [c.filename for c in ring.extra_for("file:///c", 100)] == ["a.py", "b.py"]
    assert ring.extra_for("file:///c", 4) == (InfillChunk(filename="b.py", text="B = 3\n"),)
    ring.forget("file:///b")
    assert [c.filename for c in ring.extra_for("file:///c", 100)] == ["a.py"]


async def test_edits_in_other_documents_reach_the_request_as_extra_chunks() -> None:
    fake = FakeInfill()
    service = service_with(fake, debounce_s=0)
    service.seen("file:///w/b.py", "b.py", "def helper():\n    pass\n")
    await service.complete(query())
    assert fake.requests[0].extra == (
        InfillChunk(filename="b.py", text="def helper():\n    pass\n"),
    )


# --- dropping, superseding, cancelling -------------------------------------------------------


async def test_a_burst_of_requests_reaches_the_model_once_or_twice() -> None:
    fake = FakeInfill(delay=0.05)
    service = service_with(fake, debounce_s=0.03)
    tasks = []
    for n in range(20):
        text = "y = " + "a" * n + "\n"
        tasks.append(asyncio.create_task(service.complete(query(text, 0, 4 + n))))
        await asyncio.sleep(0.01)
    answers = await asyncio.gather(*tasks)
    assert len(fake.requests) <= 2
    assert answers[-1].outcome == "completed" and answers[-1].text == "x + 1"
    assert sum(a.outcome == "superseded" for a in answers) >= 18
    assert all(a.text == "" for a in answers[:-1])


async def test_a_newer_request_cancels_the_running_model_call() -> None:
    fake = FakeInfill(delay=1.0)
    service = service_with(fake, debounce_s=0)
    first = asyncio.create_task(service.complete(query()))
    await asyncio.sleep(0.05)
    assert len(fake.requests) == 1
    fake.delay = 0
    second = await service.complete(query())
    assert (await first).outcome == "superseded"
    assert fake.cancelled == 1 and second.outcome == "completed"


async def test_a_cancelled_request_never_reaches_the_model_or_stops_its_call() -> None:
    fake = FakeInfill(delay=1.0)
    service = service_with(fake, debounce_s=0.05)
    waiting = asyncio.create_task(service.complete(query()))
    await asyncio.sleep(0.01)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await asyncio.sleep(0.06)
    assert fake.requests == []
    service.debounce_s = 0
    running = asyncio.create_task(service.complete(query()))
    await asyncio.sleep(0.05)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert len(fake.requests) == 1 and fake.cancelled == 1


async def test_requests_for_different_documents_do_not_supersede_each_other() -> None:
    fake = FakeInfill(delay=0.05)
    service = service_with(fake, debounce_s=0)
    other = CompletionQuery(uri="file:///w/b.py", filename="b.py", cursor=query().cursor)
    answers = await asyncio.gather(service.complete(query()), service.complete(other))
    assert [a.outcome for a in answers] == ["completed", "completed"]


async def test_a_slow_model_is_cut_at_the_time_limit() -> None:
    fake = FakeInfill(delay=5.0)
    service = service_with(fake, debounce_s=0, budget=CompletionBudget(timeout_s=0.1))
    answer = await service.complete(query())
    assert answer.outcome == "timeout" and answer.text == "" and fake.cancelled == 1


async def test_model_errors_answer_empty() -> None:
    fake = FakeInfill(error=ProviderError("boom"))
    answer = await service_with(fake, debounce_s=0).complete(query())
    assert answer.outcome == "failed" and answer.text == ""


# --- providers that cannot fill in the middle -------------------------------------------------


async def test_a_model_without_fim_tokens_answers_empty_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = FakeInfill(error=InfillUnsupported("prefix token is missing"))
    service = service_with(fake, debounce_s=0)
    with caplog.at_level(logging.WARNING, logger="cadenza.host.completions"):
        answers = [await service.complete(query()) for _ in range(3)]
    assert {a.outcome for a in answers} == {"unsupported"}
    assert len([r for r in caplog.records if "completions are off" in r.getMessage()]) == 1


async def test_a_non_local_provider_answers_empty_without_a_model_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pool = ProviderPool()
    pool._providers["openai/gpt-4.1"] = ScriptedProvider([])  # type: ignore[assignment]
    config = CadenzaConfig(model="openai/gpt-4.1")
    service = CompletionService(local_infill_source(pool, lambda: config), debounce_s=0)
    with caplog.at_level(logging.WARNING, logger="cadenza.host.completions"):
        answers = [await service.complete(query()) for _ in range(2)]
    assert [a.outcome for a in answers] == ["unsupported", "unsupported"]
    assert [a.text for a in answers] == ["", ""]
    said = [r.getMessage() for r in caplog.records if "completions are off" in r.getMessage()]
    assert len(said) == 1 and "local model" in said[0]


async def test_cancelling_a_request_never_cancels_the_model_server_start() -> None:
    fake = FakeInfill()
    starts: list[str] = []

    async def slow_source() -> FakeInfill:
        starts.append("start")
        await asyncio.sleep(0.2)
        starts.append("ready")
        return fake

    service = CompletionService(slow_source, debounce_s=0)  # type: ignore[arg-type]
    first = asyncio.create_task(service.complete(query()))
    await asyncio.sleep(0.05)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    answer = await service.complete(query())
    assert starts == ["start", "ready"] and answer.outcome == "completed"
