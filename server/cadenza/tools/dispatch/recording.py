"""Result recording: exactly one ``tool`` message per call of a batch, in call order.

Strict OpenAI-compatible servers reject a request whose assistant ``tool_calls`` are not each
answered by a ``tool`` message (HTTP 400, "An assistant message with 'tool_calls' must be followed
by tool messages responding to each 'tool_call_id'"). So a batch is recorded whole: a call that
never ran (the movement ended, the session was cancelled) still gets an error message saying so,
and the messages come in the order of the calls whatever order the results arrived in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from cadenza.messages import ToolCall, ToolMessage
from cadenza.tools.base import ToolResult

DEFAULT_NOT_RUN_REASON = "the batch ended before this call ran"


def tool_message(call: ToolCall, result: ToolResult) -> ToolMessage:
    """The ``tool`` message that answers ``call`` with ``result``."""
    return ToolMessage(
        tool_call_id=call.id,
        name=call.name,
        content=result.content,
        is_error=result.is_error,
        unchanged=result.unchanged,
    )


def not_run_message(call: ToolCall, reason: str = DEFAULT_NOT_RUN_REASON) -> ToolMessage:
    """An error ``tool`` message for a call that never ran: ``not run: <reason>``."""
    return ToolMessage(
        tool_call_id=call.id, name=call.name, content=f"not run: {reason}", is_error=True
    )


class BatchRecorder:
    """Collects the results of one batch of calls as they arrive, then records them in order.

    Args:
        calls: The calls of one assistant message, in the order the model made them.

    Raises:
        ValueError: Two calls share an id (results could not be told apart). Providers give
            each call of one reply a distinct id.
    """

    def __init__(self, calls: Sequence[ToolCall]) -> None:
        ids = [call.id for call in calls]
        duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
        if duplicates:
            raise ValueError(f"duplicate tool call ids in one batch: {duplicates}")
        self._calls = list(calls)
        self._known = set(ids)
        self._results: dict[str, ToolResult] = {}

    def add(self, call_id: str, result: ToolResult) -> None:
        """Record the result of one call.

        Raises:
            ValueError: ``call_id`` is not a call of the batch, or already has a result
                (a programming error in the caller, never a model error).
        """
        if call_id not in self._known:
            raise ValueError(f"result for unknown tool call id {call_id!r}")
        if call_id in self._results:
            raise ValueError(f"second result for tool call id {call_id!r}")
        self._results[call_id] = result

    @property
    def pending(self) -> list[ToolCall]:
        """Calls without a result yet, in call order."""
        return [call for call in self._calls if call.id not in self._results]

    def messages(self, *, not_run_reason: str = DEFAULT_NOT_RUN_REASON) -> list[ToolMessage]:
        """One ``tool`` message per call, in call order.

        Args:
            not_run_reason: Why calls without a result did not run (``not run: <reason>``).

        Returns:
            ``len(calls)`` messages; ``messages[i].tool_call_id == calls[i].id``.
        """
        out: list[ToolMessage] = []
        for call in self._calls:
            result = self._results.get(call.id)
            if result is None:
                out.append(not_run_message(call, not_run_reason))
            else:
                out.append(tool_message(call, result))
        return out


def record_batch(
    calls: Sequence[ToolCall],
    results: Mapping[str, ToolResult] | Iterable[tuple[str, ToolResult]],
    *,
    not_run_reason: str = DEFAULT_NOT_RUN_REASON,
) -> list[ToolMessage]:
    """One ``tool`` message per call, in call order, from results keyed by call id.

    Args:
        calls: The calls of one assistant message.
        results: ``{call_id: result}`` or ``(call_id, result)`` pairs, in any order; calls
            missing from it get ``not run: <not_run_reason>`` error messages.
        not_run_reason: Why calls without a result did not run.

    Returns:
        ``len(calls)`` messages; ``messages[i].tool_call_id == calls[i].id``.

    Raises:
        ValueError: A result names an id that is not a call of the batch, two results name the
            same id, or two calls share an id.
    """
    recorder = BatchRecorder(calls)
    pairs = results.items() if isinstance(results, Mapping) else results
    for call_id, result in pairs:
        recorder.add(call_id, result)
    return recorder.messages(not_run_reason=not_run_reason)
