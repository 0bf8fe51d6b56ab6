"""The stuck detector, as an observation: a repeated identical call is answered, not executed.

A call counts as repeated when the same tool was called with the same (canonical) arguments
since the workspace last changed (an edit by the agent, or for a read a new fingerprint of the
file: the person may have typed in the meantime); the model then reads a note saying so, and
the turn goes on. It never ends the turn by itself (the step bound does that).
"""

from __future__ import annotations

import json

from cadenza.messages import ToolCall


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return arguments


class StuckDetector:
    """Remembers calls made since the last workspace change."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str, tuple[object, ...]], int] = {}

    def check(self, call: ToolCall, step: int, state: tuple[object, ...] = ()) -> str | None:
        """Record ``call``; return an observation if it repeats an earlier one, else None.

        Args:
            call: The call.
            step: The session step it was made in.
            state: A fingerprint of what the call reads (empty when unknown); a changed
                fingerprint makes the same call new.
        """
        key = (call.name, _canonical(call.arguments), state)
        first = self._seen.get(key)
        if first is None:
            self._seen[key] = step
            return None
        return (
            f"You already called {call.name} with exactly these arguments at step {first}, and "
            "nothing has changed since: its result is above in the conversation. Do not repeat "
            "it. Take the next step of the task with a different call, or, if the task is done, "
            "reply with an empty tool_calls list and a summary."
        )

    def workspace_changed(self) -> None:
        """Forget earlier calls: after an edit, the same read may give a new answer."""
        self._seen.clear()
