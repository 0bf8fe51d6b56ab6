"""Inline completions in the host: context windows, stop rules, dropping and cancelling."""

from __future__ import annotations

import asyncio
import logging

import pytest

from cadenza.config import CadenzaConfig
from cadenza.host.completion_context import (
    CHARS_PER_TOKEN,
    CHUNK_LINES,
    SCAN_AROUND_LINES,
    SCAN_HEAD_LINES,
    CompletionBudget,
    Cursor,
    ExtraContext,
    RecentChunks,
    infill_request,
    scanned_text,
    trim_completion,
)
from cadenza.host.completions import (
    FAILED,
    NO_FIM,
    CompletionQuery,
    CompletionService,
    _first_difference,
    local_infill_source,
)
from cadenza.host.providers import ProviderPool
from cadenza.providers.base import ProviderError
from cadenza.providers.infill import (
    InfillChunk,
    InfillReply,
    InfillRequest,
    InfillTimeout,
    InfillUnsupported,
)
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


def lines(text: str) -> list[str]:
    return text.split("\n")


def at(text: str, line: int = 0) -> Cursor:
    return Cursor(text=text, line=line, column=0)


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
    # the budget holds the cursor's line before the cursor too, as the suffix's holds its rest
    assert len(request.prefix) + len(request.prompt) <= 20 * CHARS_PER_TOKEN
    assert request.prefix.count("\n") == (20 * CHARS_PER_TOKEN - len("line_")) // 15
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


def test_a_block_stops_where_it_begins_to_repeat_the_next_line() -> None:
    cursor = Cursor(text="def f(a):\n    \n    return a\n", line=1, column=4)
    assert trim_completion("a += 1\n    return a\n", cursor) == "a += 1"
    assert trim_completion("a += 1\n    b = a\n    return a", cursor) == "a += 1\n    b = a"
    # Only the same line, indentation included: the same code in a nested block stays.
    assert trim_completion("if a:\n        return a", cursor) == "if a:\n        return a"


def test_a_block_that_repeats_the_following_text_is_dropped() -> None:
    cursor = Cursor(text="def f(a):\n    \n    return a\n", line=1, column=4)
    assert trim_completion("return a", cursor) == ""


# --- extra chunks ----------------------------------------------------------------------------


HELPERS = "def helper(x):\n    return x + 1\n"
"""A chunk of ``helpers.py`` that defines ``helper``."""


def test_extra_chunks_are_related_chunks_of_other_documents_within_the_budget() -> None:
    ring = RecentChunks(size=8)
    ring.note("file:///w/helpers.py", "helpers.py", lines(HELPERS), 0)
    ring.note("file:///w/other.py", "other.py", lines("def unrelated():\n    pass\n"), 0)
    ring.note("file:///w/shapes.py", "shapes.py", lines("PI = 3.14\n"), 0)
    ring.note("file:///w/big.py", "big.py", lines("def helper_two():\n" + "    x = 1\n" * 15), 0)
    text = "import shapes\nfrom helpers import helper\n\nhelper_two(helper(2))\n"
    budget = (len(HELPERS) + len("helpers.py") + len("PI = 3.14\n") + len("shapes.py")) // 3 + 1
    chunks, sources = ring.related("file:///w/a.py", text, budget)
    # big.py is related too, but newest and over the budget: skipped, the older ones still fit
    assert [c.filename for c in chunks] == ["helpers.py", "shapes.py"]
    assert sources == {"file:///w/helpers.py", "file:///w/shapes.py"}
    chunks, _ = ring.related("file:///w/helpers.py", "helper(1)\n", 1000)
    assert chunks == ()  # its own chunk never; nothing else defines helper


def test_a_chunk_is_the_lines_around_the_change_and_replaces_an_overlapping_one() -> None:
    ring = RecentChunks(size=3)
    text = "\n".join(f"def f{n}(): pass" for n in range(100))
    ring.note("file:///b", "b.py", lines(text), 50)
    chunks, _ = ring.related("file:///a", "f50()", 1000)
    assert chunks[0].text.split("\n")[0] == f"def f{50 - CHUNK_LINES // 2}(): pass"
    assert len(chunks[0].text.split("\n")) == CHUNK_LINES
    ring.note(
        "file:///b", "b.py", lines(text.replace("f50()", "g50()")), 52
    )  # overlaps: replaces it
    chunks, _ = ring.related("file:///a", "f50() g50()", 1000)
    assert len(chunks) == 1 and "g50" in chunks[0].text


def test_a_documents_extra_chunks_stay_as_chosen_while_other_documents_change() -> None:
    now = [0.0]
    extras = ExtraContext(RecentChunks(), refresh_s=30, clock=lambda: now[0])
    extras.ring.note("file:///w/helpers.py", "helpers.py", lines(HELPERS), 0)
    text = "from helpers import helper\nhelper(1)\n"
    first = extras.choose("file:///w/a.py", at(text), 384)
    assert [c.filename for c in first] == ["helpers.py"]
    # Edits elsewhere and a newly opened related document: the prompt's start stays the same.
    extras.ring.note("file:///w/helpers.py", "helpers.py", lines(HELPERS + "def more(): pass\n"), 2)
    extras.ring.note("file:///w/util.py", "util.py", lines("def helper2(): pass\n"), 0)
    now[0] = 29.0
    assert extras.choose("file:///w/a.py", at(text + "helper2()\n"), 384) is first
    # Each document keeps its own choice.
    other = extras.choose("file:///w/c.py", at("helper2()\n"), 384)
    assert [c.filename for c in other] == ["util.py"]
    assert extras.choose("file:///w/a.py", at(text + "helper2()\n"), 384) is first
    # Later, the choice is made again from what is there now.
    now[0] = 31.0
    again = extras.choose("file:///w/a.py", at(text + "helper2()\n"), 384)
    assert [c.filename for c in again] == ["helpers.py", "util.py"]
    assert "def more" in again[0].text


def test_closing_a_document_drops_its_chunks_from_every_choice_at_once() -> None:
    extras = ExtraContext(RecentChunks(), refresh_s=1000, clock=lambda: 0.0)
    extras.ring.note("file:///w/helpers.py", "helpers.py", lines(HELPERS), 0)
    extras.ring.note("file:///w/util.py", "util.py", lines("def helper2(): pass\n"), 0)
    text = "helper(helper2())\n"
    assert len(extras.choose("file:///w/a.py", at(text), 384)) == 2
    extras.forget("file:///w/util.py")
    assert [c.filename for c in extras.choose("file:///w/a.py", at(text), 384)] == ["helpers.py"]


OLD = "\n".join(f"def f{n}(): pass" for n in range(100))


@pytest.mark.parametrize(
    ("new", "line"),
    [
        (OLD.replace("f60()", "f60(x)"), 60),  # a change in a line
        (OLD.replace("f70(): pass", "f70(): pass\nrésumé = 1"), 71),  # a line added after it
        (OLD.replace("def f80(): pass\n", ""), 80),  # a line deleted
        (OLD + "\n", 99),  # a new last line: the old last line ends differently
        (OLD, 99),  # nothing changed: the last line
    ],
)
def test_an_edit_notes_the_chunk_around_its_first_changed_line(new: str, line: int) -> None:
    assert _first_difference(OLD, new) == line
    service = service_with(FakeInfill())
    service.seen("file:///b", "b.py", OLD)
    service.recent.forget("file:///b")
    service.seen("file:///b", "b.py", new)
    [chunk], _ = service.recent.related("file:///a", f"f{line - 1}()", 1000)
    assert chunk.text.split("\n")[0] == new.split("\n")[line - CHUNK_LINES // 2]


def test_extra_chunks_are_related_by_the_documents_top_and_the_cursors_region() -> None:
    # A long document is never searched whole: its imports and the lines around the cursor.
    ring = RecentChunks()
    for name in ("head", "near", "far"):
        ring.note(f"file:///w/{name}.py", f"{name}.py", [f"def {name}_helper(): pass"], 0)
    body = [f"x{n} = {n}" for n in range(5000)]
    body[3] = "from head import head_helper"
    body[4000] = "near_helper()"
    body[1000] = "far_helper()"  # neither at the top nor near the cursor
    cursor = Cursor(text="\n".join(body), line=4100, column=0)
    scanned = scanned_text(cursor)
    assert len(scanned.split("\n")) == SCAN_HEAD_LINES + 2 * SCAN_AROUND_LINES + 1
    chunks = ExtraContext(ring).choose("file:///w/a.py", cursor, 384)
    assert sorted(c.filename for c in chunks) == ["head.py", "near.py"]
    short = Cursor(text="\n".join(body[:1000]), line=10, column=0)
    assert scanned_text(short) is short.text


async def test_requests_in_one_document_send_the_same_extra_chunks_while_others_change() -> None:
    fake = FakeInfill()
    service = service_with(fake, debounce_s=0)
    service.seen("file:///w/helpers.py", "helpers.py", HELPERS)
    text = "from helpers import helper\nhelper(\n"
    await service.complete(query(text, 1, 7))
    service.seen("file:///w/helpers.py", "helpers.py", HELPERS.replace("1", "2"))
    service.seen("file:///w/notes.py", "notes.py", "def helper3(): pass\n")
    await service.complete(query(text.replace("(\n", "(x\n"), 1, 8))
    first, second = fake.requests
    assert first.extra == second.extra == (InfillChunk(filename="helpers.py", text=HELPERS),)
    service.closed("file:///w/helpers.py")
    await service.complete(query(text.replace("(\n", "(xy\n"), 1, 9))
    assert fake.requests[-1].extra == ()  # helpers.py closed: notes.py is not related


# --- dropping, superseding, cancelling -------------------------------------------------------


class Clock:
    """Scripted arrival times (seconds): the service's burst rule reads these, not the wall."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def turns(count: int = 10) -> None:
    """Let the event loop run the started requests until they wait or call the model."""
    for _ in range(count):
        await asyncio.sleep(0)


async def test_a_burst_of_keystrokes_reaches_the_model_twice_its_first_and_its_last() -> None:
    # 20 keystrokes 50 ms apart while the model takes longer than that: each arrives while the
    # one before waits or runs, so it waits and the next one drops it.
    clock, fake = Clock(), FakeInfill(delay=30.0)
    service = service_with(fake, debounce_s=0.5, clock=clock)
    tasks = []
    for n in range(20):
        clock.now = n * 0.05
        text = "y = " + "a" * n + "\n"
        tasks.append(asyncio.create_task(service.complete(query(text, 0, 4 + n))))
        await turns()
    assert len(fake.requests) == 1  # the first, at once; the others wait
    fake.delay = 0.0
    answers = await asyncio.wait_for(asyncio.gather(*tasks), 10)
    assert len(fake.requests) == 2 and fake.requests[-1].prompt == "y = " + "a" * 19
    assert fake.cancelled == 1  # the first call, by the second keystroke
    assert [a.outcome for a in answers] == ["superseded"] * 19 + ["completed"]
    assert service.stats.model_requests == 2


async def test_a_lone_keystroke_right_after_an_answer_goes_to_the_model_at_once() -> None:
    # Closer behind the previous request than the wait, but its answer came: no burst. A wait
    # here would be 30 s, past the test's 5 s limit.
    clock, fake = Clock(), FakeInfill()
    service = service_with(fake, debounce_s=30.0, clock=clock)
    for n in range(3):
        clock.now = n * 0.02
        answer = await asyncio.wait_for(service.complete(query()), 5)
        assert answer.outcome == "completed"
    assert len(fake.requests) == 3


async def test_a_keystroke_while_the_previous_one_runs_waits_and_the_newest_goes() -> None:
    clock, fake = Clock(), FakeInfill(delay=30.0)
    service = service_with(fake, debounce_s=0.5, clock=clock)
    first = asyncio.create_task(service.complete(query()))
    await turns()
    assert len(fake.requests) == 1
    clock.now = 0.03
    fake.delay = 0.0
    second = asyncio.create_task(service.complete(query()))
    await turns()
    assert len(fake.requests) == 1  # waiting for a newer keystroke
    assert (await first).outcome == "superseded" and fake.cancelled == 1
    assert (await asyncio.wait_for(second, 5)).outcome == "completed"
    assert len(fake.requests) == 2


async def test_a_keystroke_after_a_cancelled_request_waits() -> None:
    # The editor cancelled the previous request ($/cancelRequest): typing goes on.
    clock, fake = Clock(), FakeInfill(delay=30.0)
    service = service_with(fake, debounce_s=0.5, clock=clock)
    first = asyncio.create_task(service.complete(query()))
    await turns()
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    clock.now = 0.03
    fake.delay = 0.0
    second = asyncio.create_task(service.complete(query()))
    await turns()
    assert len(fake.requests) == 1
    assert (await asyncio.wait_for(second, 5)).outcome == "completed"
    assert len(fake.requests) == 2


async def test_a_keystroke_after_a_pause_goes_at_once_and_cancels_the_running_call() -> None:
    clock, fake = Clock(), FakeInfill(delay=30.0)
    service = service_with(fake, debounce_s=30.0, clock=clock)
    first = asyncio.create_task(service.complete(query()))
    await turns()
    clock.now = 30.0
    fake.delay = 0.0
    second = await asyncio.wait_for(service.complete(query()), 5)
    assert (await first).outcome == "superseded" and second.outcome == "completed"
    assert len(fake.requests) == 2 and fake.cancelled == 1


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
    clock, fake = Clock(), FakeInfill(delay=1.0)
    service = service_with(fake, debounce_s=0.3, clock=clock)
    first = asyncio.create_task(service.complete(query()))  # after a pause: at once
    await turns()
    clock.now = 0.01
    waiting = asyncio.create_task(service.complete(query()))  # the first runs: waits
    await turns()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await asyncio.sleep(0.35)
    assert len(fake.requests) == 1 and fake.cancelled == 1
    assert (await first).outcome == "superseded"
    service.debounce_s = 0
    fake.cancelled = 0
    fake.requests.clear()
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


async def test_a_silent_model_server_is_given_up_at_the_time_limit() -> None:
    fake = FakeInfill(error=InfillTimeout("said nothing for 30 s"))
    service = service_with(fake, debounce_s=0, budget=CompletionBudget(timeout_s=30))
    answer = await service.complete(query())
    assert answer.outcome == "timeout" and answer.text == ""
    assert answer.detail == "the model server did not answer within 30 s"
    assert fake.requests[0].timeout_s == 30


async def test_a_slow_answer_is_kept_as_only_the_servers_silence_is_limited() -> None:
    # A cold prompt: slower than the limit in all, but the client (tests/providers/test_infill)
    # only gives up when the server says nothing for that long.
    fake = FakeInfill(delay=0.5)
    service = service_with(fake, debounce_s=0, budget=CompletionBudget(timeout_s=0.2))
    answer = await service.complete(query())
    assert answer.outcome == "completed" and answer.text == "x + 1"


async def test_model_errors_answer_empty_in_plain_words(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = FakeInfill(error=ProviderError("the local model server answered 500: slot 3 OOM"))
    with caplog.at_level(logging.WARNING, logger="cadenza.host.completions"):
        answer = await service_with(fake, debounce_s=0).complete(query())
    assert answer.outcome == "failed" and answer.text == ""
    assert answer.detail == FAILED and "OOM" not in answer.detail
    assert any("slot 3 OOM" in r.getMessage() for r in caplog.records)  # the raw words: the log


# --- providers that cannot fill in the middle -------------------------------------------------


async def test_a_model_without_fim_tokens_answers_empty_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    raw = "Infill is not supported by this model: prefix token is missing."
    fake = FakeInfill(error=InfillUnsupported(raw))
    service = service_with(fake, debounce_s=0)
    with caplog.at_level(logging.INFO, logger="cadenza.host.completions"):
        answers = [await service.complete(query()) for _ in range(3)]
    assert {a.outcome for a in answers} == {"unsupported"}
    assert len([r for r in caplog.records if "completions are off" in r.getMessage()]) == 1
    assert any(raw in r.getMessage() for r in caplog.records)  # llama-server's words: the log
    # In plain words; an editor's log hears it once (said_before), an explicit ask each time.
    assert {a.detail for a in answers} == {f"inline completions are off: {NO_FIM}"}
    assert [a.said_before for a in answers] == [False, True, True]


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
    assert [a.detail for a in answers] == [said[0], said[0]]
    assert [a.said_before for a in answers] == [False, True]


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
