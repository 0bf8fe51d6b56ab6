"""Inline completions for any face: one fill-in-the-middle call per settled keystroke.

Latency is the feature, so most requests never reach the model:

- a request that comes while typing runs in a burst waits ``debounce_s`` first, and a newer
  request for the same document in that time drops it (answered empty). A burst: the
  document's previous request came less than ``debounce_s`` before and has not been answered
  (it still waits or runs, or it was dropped or cancelled). Any other request goes to the model
  at once: after a pause, and right after the previous answer arrived (a lone keystroke);
- a newer request arriving while one runs cancels its model call, and so does cancelling the
  request (the face cancels the awaiting task, e.g. on ``$/cancelRequest``): the connection
  closes and llama-server drops the work;
- generation is bounded by llama-server itself (``n_predict``, ``t_max_predict_ms``); the
  call's own limit only drops a server that does not answer, as a cold prompt on a CPU takes
  seconds. Starting the model server does not count against it and is never cancelled by a
  request, so the first requests after start-up wait instead of starting it again and again;
- the extra chunks of other documents stay as chosen (``ExtraContext``), so consecutive
  requests share their prompt's start and llama-server reuses its KV cache.

Only documents the face says lend context (inside the workspace) give extra chunks; every
text sent is redacted (``completion_context``), with the environment's keys registered first.

The model is the configured one; only the embedded ``local`` provider can fill in the middle
(its llama-server's ``/infill``); for any other provider, or a local model without FIM tokens,
requests are answered empty and the reason is logged once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from cadenza.config import CadenzaConfig, ConfigError
from cadenza.host.completion_context import (
    CHARS_PER_TOKEN,
    CompletionBudget,
    Cursor,
    ExtraContext,
    RecentChunks,
    infill_request,
    trim_completion,
)
from cadenza.host.errors import SetupError
from cadenza.host.providers import ProviderPool
from cadenza.providers.base import ProviderError
from cadenza.providers.infill import (
    InfillClient,
    InfillReply,
    InfillRequest,
    InfillTimeout,
    InfillUnsupported,
)
from cadenza.providers.local import LocalProvider
from cadenza.providers.registry import resolve_model_name
from cadenza.secrets import register_known_keys

log = logging.getLogger(__name__)

DEBOUNCE_S = 0.075
"""How long a request in a burst of typing waits for a newer one before it goes to the model
(seconds), and how close behind the previous request one must come to be in a burst: a little
more than the gap between keystrokes of a fast burst."""

Outcome = Literal["completed", "superseded", "unsupported", "failed", "timeout"]
"""How a request ended: answered by the model (maybe with nothing to add), dropped for a newer
one, no FIM-capable model, a model error, or the model server silent past the time limit."""

NO_FIM = (
    "the model has no fill-in-the-middle tokens, so it cannot complete code at the cursor; "
    "use one that has them, such as local/qwen2.5-coder-1.5b"
)
"""Why a model llama-server refused ``/infill`` for (its own words go to the log)."""
FAILED = "the local model server could not answer (the server's log has the details)"
"""Why nothing came when the model server failed (its own words go to the log)."""

InfillSource = Callable[[], Awaitable[InfillClient | None]]
"""Gives the ``/infill`` client (starting its server), or None when the model cannot infill."""


@dataclass(frozen=True, kw_only=True)
class CompletionQuery:
    """One request: the document's buffer text and the cursor (code points).

    Attributes:
        uri: The document's URI (requests for one URI supersede each other).
        filename: The name the model sees for it (workspace-relative where possible).
        cursor: The buffer's text and the position.
        lends_context: Whether its chunks may go with other documents' completions (it lies
            inside the workspace); its own completions get its text either way.
    """

    uri: str
    filename: str
    cursor: Cursor
    lends_context: bool = True


@dataclass(frozen=True, kw_only=True)
class CompletionAnswer:
    """The text to insert at the cursor (empty: nothing to add) and how the request ended."""

    text: str
    outcome: Outcome
    model_ms: float = 0.0
    """The wall time of the ``/infill`` call (ms), whatever it ended with; 0 without one."""
    detail: str = ""
    """Why nothing came, in the person's words: set for a ``timeout``, a ``failed`` and an
    ``unsupported`` answer (the raw error of the model server goes to the log only)."""
    said_before: bool = False
    """For ``unsupported``: the service already said why completions are off (an editor's
    log hears it once; an explicit request still gets ``detail``)."""


@dataclass(kw_only=True)
class _DocumentState:
    generation: int = 0
    """The number of the document's newest request."""
    answered: int = 0
    """The number of the newest request that was answered (not dropped, not cancelled)."""
    call: asyncio.Task[InfillReply] | None = None
    text: str = ""
    asked_at: float = float("-inf")

    def in_burst(self, now: float, debounce_s: float) -> bool:
        """Whether a request arriving at ``now`` continues a burst of typing.

        The previous request came less than ``debounce_s`` before and got no answer: it still
        waits or runs, or it was dropped or cancelled. A keystroke right after an answer
        arrived is a lone one, however close behind.
        """
        return now - self.asked_at < debounce_s and self.answered != self.generation


@dataclass(kw_only=True)
class CompletionStats:
    """Counters of the requests seen (for logs and tests)."""

    requests: int = 0
    model_requests: int = 0
    superseded: int = 0
    last: list[CompletionAnswer] = field(default_factory=list)


class CompletionService:
    """Inline completions of one server's open documents.

    Args:
        infill_source: Gives the ``/infill`` client (see ``InfillSource``).
        budget: Context and generation limits.
        debounce_s: See ``DEBOUNCE_S``.
        clock: Seconds, monotonic: when requests arrive (tests pass their own).
    """

    def __init__(
        self,
        infill_source: InfillSource,
        *,
        budget: CompletionBudget | None = None,
        debounce_s: float = DEBOUNCE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._source = infill_source
        self.budget = budget or CompletionBudget()
        self.debounce_s = debounce_s
        self._clock = clock
        self.recent = RecentChunks(max_chars=self.budget.extra_tokens * CHARS_PER_TOKEN)
        self.extras = ExtraContext(self.recent)
        self.stats = CompletionStats()
        self._documents: dict[str, _DocumentState] = {}
        self._start: asyncio.Task[InfillClient | None] | None = None
        self._unsupported_said = False
        register_known_keys()  # the environment's keys are redacted from what is sent

    def seen(self, uri: str, filename: str, text: str, *, lends_context: bool = True) -> None:
        """A document was opened or changed: remember the chunk around its first change.

        A document that does not lend context (outside the workspace) gives no chunk.
        """
        state = self._documents.setdefault(uri, _DocumentState())
        old, state.text = state.text, text
        if lends_context:
            self.recent.note(uri, filename, text.split("\n"), _first_difference(old, text))

    def closed(self, uri: str) -> None:
        """A document was closed: forget it (a running request for it still ends normally)."""
        self.extras.forget(uri)
        state = self._documents.pop(uri, None)
        if state is not None and state.call is not None:
            state.call.cancel()

    async def complete(self, query: CompletionQuery) -> CompletionAnswer:
        """The completion at ``query``'s cursor; empty when dropped, unsupported or failed.

        Raises:
            asyncio.CancelledError: The calling task was cancelled (its model call is too).
        """
        self.stats.requests += 1
        state = self._documents.setdefault(query.uri, _DocumentState())
        now = self._clock()
        burst = state.in_burst(now, self.debounce_s)
        state.generation += 1
        state.asked_at = now
        mine = state.generation
        if state.call is not None:
            state.call.cancel()
        answer = await self._answer(query, state, mine, burst=burst)
        if answer.outcome != "superseded":
            state.answered = max(state.answered, mine)
        return answer

    async def _answer(
        self, query: CompletionQuery, state: _DocumentState, mine: int, *, burst: bool
    ) -> CompletionAnswer:
        """Request number ``mine``: the wait in a burst, the server's start, the model call."""
        if burst:
            await asyncio.sleep(self.debounce_s)
            if state.generation != mine:
                return self._superseded()
        client, why = await self._client()
        if client is None:
            return self._unsupported(why)
        if state.generation != mine:
            return self._superseded()
        if query.lends_context:
            self.recent.note(query.uri, query.filename, query.cursor.lines, query.cursor.line)
        extra = self.extras.choose(query.uri, query.cursor, self.budget.extra_tokens)
        request = infill_request(query.cursor, extra, self.budget)
        return await self._call(client, request, query, state, mine)

    async def _call(
        self,
        client: InfillClient,
        request: InfillRequest,
        query: CompletionQuery,
        state: _DocumentState,
        mine: int,
    ) -> CompletionAnswer:
        """The model call of request number ``mine``; a newer request cancels it."""
        self.stats.model_requests += 1
        call: asyncio.Task[InfillReply] = asyncio.ensure_future(client.infill(request))
        state.call = call
        started = time.monotonic()
        try:
            reply = await call
        except asyncio.CancelledError:
            if state.generation != mine and _not_cancelling():
                return self._superseded()
            raise
        except InfillTimeout:
            log.info(
                "completion for %s: over %g s, dropped (the model server said nothing)",
                query.filename,
                request.timeout_s,
            )
            detail = f"the model server did not answer within {request.timeout_s:g} s"
            return CompletionAnswer(
                text="", outcome="timeout", detail=detail, model_ms=_ms_since(started)
            )
        except InfillUnsupported as exc:
            log.info("the model server refused fill-in-the-middle: %s", exc)
            return self._unsupported(NO_FIM, model_ms=_ms_since(started))
        except ProviderError as exc:
            log.warning("completion for %s failed: %s", query.filename, exc)
            return CompletionAnswer(
                text="", outcome="failed", detail=FAILED, model_ms=_ms_since(started)
            )
        finally:
            if state.call is call:
                state.call = None
        model_ms = _ms_since(started)  # the call alone: trimming is the server's own time
        text = trim_completion(reply.text, query.cursor)
        log.debug(
            "completion for %s: %d extra chunks, %d prompt tokens evaluated (%d cached) in "
            "%.0f ms, %d generated in %.0f ms, %d characters kept of %d",
            query.filename,
            len(request.extra),
            reply.tokens_evaluated,
            reply.tokens_cached,
            reply.prompt_ms,
            reply.tokens_predicted,
            reply.predicted_ms,
            len(text),
            len(reply.text),
        )
        return CompletionAnswer(text=text, outcome="completed", model_ms=model_ms)

    def _superseded(self) -> CompletionAnswer:
        self.stats.superseded += 1
        return CompletionAnswer(text="", outcome="superseded")

    async def _client(self) -> tuple[InfillClient | None, str]:
        """The ``/infill`` client, or None and why there is none.

        The server's start runs apart from any request. Asked again once the last ask is
        over, so a server that died is started again. A request cancelled while the server
        starts stops waiting; the start goes on.
        """
        if self._start is None or self._start.done():
            self._start = asyncio.ensure_future(self._source())
        try:
            return await asyncio.shield(self._start), ""
        except ProviderError as exc:
            return None, str(exc)

    def _unsupported(self, why: str, *, model_ms: float = 0.0) -> CompletionAnswer:
        """An ``unsupported`` answer saying why completions are off; logged the first time."""
        sentence = f"inline completions are off: {why}"
        said_before, self._unsupported_said = self._unsupported_said, True
        if not said_before:
            log.warning("%s", sentence)
        return CompletionAnswer(
            text="",
            outcome="unsupported",
            detail=sentence,
            said_before=said_before,
            model_ms=model_ms,
        )

    async def aclose(self) -> None:
        """Cancel running model calls."""
        for state in self._documents.values():
            if state.call is not None:
                state.call.cancel()
        if self._start is not None and not self._start.done():
            self._start.cancel()


def local_infill_source(pool: ProviderPool, config: Callable[[], CadenzaConfig]) -> InfillSource:
    """An ``InfillSource`` for the configured model, through the sessions' provider pool.

    The agent and completions then share one llama-server.
    """

    async def source() -> InfillClient | None:
        current = config()
        try:
            model = resolve_model_name(None, current)
            provider = pool.get(model, current)
        except (SetupError, ConfigError) as exc:
            raise ProviderError(str(exc)) from None
        if not isinstance(provider, LocalProvider):
            raise ProviderError(
                f"{model} cannot fill in the middle; completions need a local model such as "
                "local/qwen2.5-coder-1.5b"
            )
        return await provider.infill_client()

    return source


def _first_difference(old: str, new: str) -> int:
    """The first line where ``new`` differs from ``old`` (0 when there was no old text).

    Runs on every keystroke over the whole document, so the texts are compared by halves
    (string comparisons in C) rather than line by line: a megabyte takes about a millisecond.
    """
    if not old:
        return 0
    same, end = 0, min(len(old), len(new))  # old[:same] == new[:same]
    while same < end:
        middle = (same + end + 1) // 2
        if old[same:middle] == new[same:middle]:
            same = middle
        else:
            end = middle - 1
    return new.count("\n", 0, same)


def _ms_since(started: float) -> float:
    """Milliseconds since ``started`` (``time.monotonic()``)."""
    return (time.monotonic() - started) * 1000


def _not_cancelling() -> bool:
    """The current task itself is not being cancelled (only what it awaited was)."""
    task = asyncio.current_task()
    return task is None or task.cancelling() == 0
