"""The done gate (``LoopSettings.done_gate``): ``complete(done)`` right after a failed call.

Measured with the 1.5B local model (issue 11): after an edit failed (``old_string`` not found,
a syntax error refused) it often called ``complete`` with status ``done`` at once, claiming a
change that was never made. The gate refuses such a call once per movement, structurally (the
previous tool result was an error), and says what failed; a second ``complete`` is accepted.
"""

from __future__ import annotations

import json

from cadenza.messages import Message, ToolCall, ToolMessage


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else ""


def claims_done(call: ToolCall) -> bool:
    """Whether ``call`` is ``complete`` with status ``done`` (arguments that parse)."""
    try:
        arguments = json.loads(call.arguments)
    except ValueError:
        return False
    return isinstance(arguments, dict) and arguments.get("status") == "done"


def failed_before(messages: list[Message]) -> ToolMessage | None:
    """The last tool result of the history when it is an error, else None."""
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            return message if message.is_error else None
    return None


def refusal(failed: ToolMessage) -> str:
    """The error result that answers the gated ``complete``."""
    return (
        f"not accepted yet: your last call ({failed.name}) failed: {_first_line(failed.content)} "
        "So that change was not made. Make it again with corrected arguments (read the file if "
        'needed), or call complete with status "failed" if it cannot be done.'
    )
