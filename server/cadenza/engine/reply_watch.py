"""Watching a reply as it streams: a progress line, and a stop for a reply that repeats itself.

The provider hands every raw delta of the reply (an envelope's JSON included) to the request's
``watch`` (``providers.base.StreamWatch``). ``ReplyWatch`` counts them (one token each on
llama.cpp) and publishes an ``Activity`` every ``REPORT_EVERY_S`` seconds, so the person sees
"step 4/25 · writing an edit, 180 tokens" instead of a silent minute; under
``LoopSettings.reply_budget`` it also stops the reply once its tail is one block repeated
(``repeated_tail``): greedy decoding of a small model that starts a loop stays in it to the
token limit, minutes on a CPU. The stopped reply ends as ``repetition``, a cut reply: nothing
of it runs, and the repair (``engine.request``) asks once more with a penalty on repeats.

The phrase naming what the model writes comes from the call name the raw text shows so far:
it is display text only; no decision is made on it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import anyio

from cadenza.engine.events import Activity
from cadenza.engine.runtime import Runtime

MIN_REPEATS = 3
"""Copies of a block, at least, that make a repeated tail."""
MIN_SPAN = 320
"""Characters the repeated tail covers, at least: short blocks need more copies (``0, `` is
repeated over 100 times before a reply is stopped), so an indented block or a row of a table
in real code is never taken for a loop."""
MAX_PERIOD = 600
"""The longest repeated block looked for (characters: a dozen lines of code)."""
CHECK_EVERY = 4
"""Deltas between two looks at the tail."""
REPORT_EVERY_S = 3.0
"""Seconds between two progress reports of one reply."""
TAIL_CHARS = MAX_PERIOD * MIN_REPEATS + MIN_SPAN
"""The end of the reply a look for a repeated tail needs (characters)."""
HEAD_CHARS = 2000
"""The start of the reply where the first call's name is looked for (characters)."""

READING = "reading the conversation"
"""What the person reads before the reply's first token."""

_CALL_NAME = re.compile(r'"name"\s*:\s*"([A-Za-z_][\w.-]*)"')

WRITING: dict[str, str] = {
    "edit_file": "writing an edit",
    "write_file": "writing a file",
    "replace_lines": "writing an edit",
    "create_file": "writing a new file",
    "read_file": "asking to read a file",
    "run_command": "writing a command",
    "complete": "finishing",
}
"""What the person reads while the model writes a call of that tool."""


def repeated_tail(text: str) -> int | None:
    """The length of the block ``text`` ends repeating, or None.

    A repeated tail: the last ``k * p`` characters are ``k`` copies of one ``p``-character
    block, with ``k >= MIN_REPEATS``, ``k * p >= MIN_SPAN`` and ``p <= MAX_PERIOD``. Exact
    copies only: a count that goes up (``case_1``, ``case_2``...) is no loop of greedy decoding
    and is left to the token bound.
    """
    n = len(text)
    last = text[-1:] if n else ""
    for period in range(1, min(MAX_PERIOD, n // MIN_REPEATS) + 1):
        copies = max(MIN_REPEATS, -(-MIN_SPAN // period))
        span = copies * period
        if span > n or text[n - 1 - period] != last:
            continue
        block = text[n - period :]
        if text[n - 2 * period : n - period] == block and text[n - span :] == block * copies:
            return period
    return None


class ReplyWatch:
    """The ``StreamWatch`` of one request: progress, and (``stop_repeats``) the repeat stop.

    Args:
        rt: The session (its step, clock, and where the progress goes).
        stop_repeats: Stop the reply when its tail repeats (``repeated_tail``).
        now: The monotonic clock.
        report: Publish progress (False for all but one of several requests made at once).
    """

    def __init__(
        self,
        rt: Runtime,
        *,
        stop_repeats: bool,
        now: Callable[[], float] = time.monotonic,
        report: bool = True,
    ) -> None:
        self.rt = rt
        self.stop_repeats = stop_repeats
        self.report = report
        self.now = now
        self.deltas = 0
        self.repeated: int | None = None
        """The repeated block's length once the reply was stopped for it."""
        self._head = ""
        """The reply's start (where a call's name is)."""
        self._tail = ""
        """The reply's end, as much as a look for a repeated tail needs."""
        self._doing = "writing a reply"
        self._reported = now()

    def __call__(self, delta: str) -> bool:
        """Take one delta; True stops the reply (its tail repeats)."""
        self.deltas += 1
        if len(self._head) < HEAD_CHARS:
            self._head += delta
        self._tail = (self._tail + delta)[-TAIL_CHARS:]
        if self.report and self.now() - self._reported >= REPORT_EVERY_S:
            self._report()
        if not self.stop_repeats or self.deltas % CHECK_EVERY:
            return False
        self.repeated = repeated_tail(self._tail)
        return self.repeated is not None

    async def keep_reporting(self) -> None:
        """Report while no delta comes, until cancelled.

        The model server reads the request first (on a CPU, a minute or more): the person's
        clock must not stand still meanwhile.
        """
        while True:
            await anyio.sleep(REPORT_EVERY_S)
            if self.report and self.now() - self._reported >= REPORT_EVERY_S:
                self._report()

    def _report(self) -> None:
        self._reported = self.now()
        if self._doing == "writing a reply" and (name := _CALL_NAME.search(self._head)):
            self._doing = WRITING.get(name[1], f"writing a call of {name[1]}")
        rt = self.rt
        rt.publish(
            Activity(
                step=rt.steps - rt.run_start,
                max_steps=rt.settings.max_steps,
                doing=self._doing if self.deltas else READING,
                tokens=self.deltas,
                elapsed_s=round(rt.clock.elapsed_s, 1),
                budget_s=rt.clock.budget_s,
            )
        )
