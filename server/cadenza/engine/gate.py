"""The done and give-up gates: ``complete`` right after a failed call.

Measured with the 1.5B local model (issue 11): after an edit failed (``old_string`` not found,
a syntax error refused) it often called ``complete`` with status ``done`` at once, claiming a
change that was never made. The gate refuses such a call once per movement, structurally (the
last workspace call of this movement run failed, and not with a settled error such as "already
made"), and says what failed; a later ``complete`` is accepted (the same reply's later ones are
refused too).

The give-up gate (``LoopSettings.give_up_gate``), measured on the ``checked`` task set (issue
17): after one failed edit (``old_string`` equal to ``new_string``, or not found) the same model
called ``complete(failed)`` at once, its summary the edit's error, in 8 of 13 sessions; a task
was given up over a mistake in one call's arguments. The gate refuses ``complete(failed)`` right
after a failed edit once per movement the same way, saying the error is the call's, not the
task's. It is off by default: on that set it fired in 6 sessions and the model recovered in
none (it sent the failed call again, word for word).
"""

from __future__ import annotations

import json

from cadenza.messages import ToolCall

GIVE_UP_GATED = frozenset(
    {"edit_file", "write_file", "replace_lines", "create_file", "rename_symbol"}
)
"""The calls whose failure is a mistake in their arguments (text not found, the same text, a
file that exists, a symbol not on that line), never a verdict on the task."""


def _first_line(text: str, limit: int = 300) -> str:
    """The error's first line; a long one cut at its last sentence end before ``limit``."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    if len(line) <= limit:
        return line
    cut = line[:limit]
    end = cut.rfind(". ")
    return cut[: end + 1] if end > 0 else cut + "…"


def claimed_status(call: ToolCall) -> str | None:
    """The status ``call`` (a ``complete``) claims, if its arguments parse and name one."""
    try:
        arguments = json.loads(call.arguments)
    except ValueError:
        return None
    status = arguments.get("status") if isinstance(arguments, dict) else None
    return status if isinstance(status, str) else None


def refusal(name: str, failure: str) -> str:
    """The error result that answers the gated ``complete`` (``name`` failed with ``failure``)."""
    return (
        f"not accepted yet: your last call ({name}) failed: {_first_line(failure)} "
        "So that change was not made. Make it again with corrected arguments (read the file if "
        'needed), or call complete with status "failed" if it cannot be done.'
    )


def give_up_refusal(name: str, failure: str) -> str:
    """The error result that answers a gated ``complete(failed)`` after ``name`` failed."""
    return (
        f"not accepted yet: your last call ({name}) failed: {_first_line(failure)} "
        "That is a mistake in the call's arguments, not a reason the task cannot be done. "
        f"Call {name} again with corrected arguments (read the file if needed). Call complete with "
        'status "failed" only if the task itself cannot be done.'
    )
