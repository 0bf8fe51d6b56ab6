"""The stuck detector, as an observation: a repeated identical call is answered, not executed.

A call counts as repeated when the same tool was called with the same (canonical) arguments
since the workspace last changed (an edit by the agent, or for a read a new fingerprint of the
file: the person may have typed in the meantime); the model then reads a note saying what it
repeated and what to do instead, and the turn goes on. After ``stuck_limit`` noted repeats of
one call the runner stops the movement with a question rather than spend the step budget
(``LoopSettings.stuck_limit``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from cadenza.engine.variants import finish_hint
from cadenza.messages import ToolCall
from cadenza.types import Ending

READS = frozenset({"read_file", "list_files", "search"})


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return arguments


@dataclass(frozen=True, kw_only=True)
class Repeat:
    """A call that repeats an earlier identical one.

    Attributes:
        name: The tool.
        first_step: The session step of the first identical call.
        times: How often it was repeated since (1 for the first repeat).
    """

    name: str
    first_step: int
    times: int


class StuckDetector:
    """Remembers calls made since the last workspace change."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str, tuple[object, ...]], list[int]] = {}

    def check(self, call: ToolCall, step: int, state: tuple[object, ...] = ()) -> Repeat | None:
        """Record ``call``; return the ``Repeat`` if it repeats an earlier one, else None.

        Args:
            call: The call.
            step: The session step it was made in.
            state: A fingerprint of what the call reads (empty when unknown); a changed
                fingerprint makes the same call new.
        """
        key = (call.name, _canonical(call.arguments), state)
        seen = self._seen.setdefault(key, [])
        seen.append(step)
        if len(seen) == 1:
            return None
        return Repeat(name=call.name, first_step=seen[0], times=len(seen) - 1)

    def workspace_changed(self) -> None:
        """Forget earlier calls: after an edit, the same read may give a new answer."""
        self._seen.clear()


def repeat_note(repeat: Repeat, *, ending: Ending, edit_tool: str) -> str:
    """The observation the model reads instead of the repeated call's result.

    Says what was repeated, that its result is unchanged and above, and what to do instead:
    after a read, the edit (with ``edit_tool``) or finishing; after another call, different
    arguments or finishing.
    """
    said = (
        f"You already called {repeat.name} with exactly these arguments at step "
        f"{repeat.first_step}, and nothing has changed since: the result is the same and it is "
        "above in the conversation. Do not call it again."
    )
    if repeat.name in READS:
        instead = (
            f"Use what it showed: if the task still needs a change, make it now with "
            f"{edit_tool}; if the task is done, {finish_hint(ending)}."
        )
    else:
        instead = (
            f"It would fail or do the same again: change the arguments (read the result above), "
            f"or if the task is done, {finish_hint(ending)}."
        )
    return f"{said} {instead}"
