"""Futile replies (issue 17): calls known to do nothing, which the request asks for again once.

The 1.5B model at temperature 0 sends a failed call again word for word whatever its error
said, and sends edits whose ``new_string`` equals ``old_string``; 8 of 13 sessions of the
``checked`` task set ended ``complete(failed)`` right after such a call. Both fail before they
run, so under ``LoopSettings.resample`` the request is made once more before the reply reaches
the history, changing what produced it: a note naming the futile call, and sampling at
``RESAMPLE_TEMPERATURE`` (at temperature 0 the same request gives the same reply). A second
futile reply goes on as any reply does (the repeat note, the edit's error). The request itself
is made by ``engine.request``.
"""

from __future__ import annotations

import json

from cadenza.engine.events import FutileReason
from cadenza.engine.runtime import Runtime
from cadenza.messages import AssistantReply, ToolCall

RESAMPLE_TEMPERATURE = 0.7
"""The retry's temperature: enough for another reply, no frequency penalty (an edit must copy
the file's text, which the penalty would push away from)."""

NO_CHANGE_TOOLS = frozenset({"edit_file"})
"""Edit tools whose call changes nothing when ``new_string`` equals ``old_string``."""


def futile_note(rt: Runtime, reply: AssistantReply) -> tuple[FutileReason, str] | None:
    """Why ``reply`` cannot do anything, as (reason, note for the model); None if it can."""
    for call in reply.tool_calls:
        failure = rt.stuck.failure(call)
        if failure is not None:
            return "repeat", (
                f"Your reply called {call.name} with exactly the arguments that failed at step "
                f"{failure.step} ({failure.error}), so it was not run: it would fail the same "
                "way. Send a different call: correct the arguments using that error and the "
                "file's text as the conversation shows it, or use another tool."
            )
        if _changes_nothing(call):
            return "no_change", (
                f"Your reply called {call.name} with new_string equal to old_string, so it "
                "would change nothing and was not run. old_string is the text as the file has "
                "it now; new_string must be that text as it must become after the change."
            )
    return None


def _changes_nothing(call: ToolCall) -> bool:
    if call.name not in NO_CHANGE_TOOLS:
        return False
    try:
        arguments = json.loads(call.arguments)
    except ValueError:
        return False
    if not isinstance(arguments, dict):
        return False
    old, new = arguments.get("old_string"), arguments.get("new_string")
    return isinstance(old, str) and old == new
