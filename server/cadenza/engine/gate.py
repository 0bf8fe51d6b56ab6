"""The done gate (``LoopSettings.done_gate``): ``complete(done)`` right after a failed call.

Measured with the 1.5B local model (issue 11): after an edit failed (``old_string`` not found,
a syntax error refused) it often called ``complete`` with status ``done`` at once, claiming a
change that was never made. The gate refuses such a call once per movement, structurally (the
last workspace call of this movement run failed, and not with a settled error such as "already
made"), and says what failed; a later ``complete`` is accepted (the same reply's later ones are
refused too).
"""

from __future__ import annotations

import json

from cadenza.messages import ToolCall


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else ""


def claims_done(call: ToolCall) -> bool:
    """Whether ``call`` is ``complete`` with status ``done`` (arguments that parse)."""
    try:
        arguments = json.loads(call.arguments)
    except ValueError:
        return False
    return isinstance(arguments, dict) and arguments.get("status") == "done"


def refusal(name: str, failure: str) -> str:
    """The error result that answers the gated ``complete`` (``name`` failed with ``failure``)."""
    return (
        f"not accepted yet: your last call ({name}) failed: {_first_line(failure)} "
        "So that change was not made. Make it again with corrected arguments (read the file if "
        'needed), or call complete with status "failed" if it cannot be done.'
    )
