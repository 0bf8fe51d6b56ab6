"""The done gate: ``complete(done)`` right after a failed call is refused once.

Small models, after an edit failed (``old_string`` not found, a syntax error refused), often
claim the task done at once, claiming a change that was never made. The gate refuses such a
call once per movement, structurally (the last workspace call of this movement run failed, and
not with a settled error such as "already made", nor declined by the person), and says what
failed; a later ``complete`` is accepted (the same reply's later ones are refused too).
docs/lab/local-model-log.md has the measurements.
"""

from __future__ import annotations

import json

from cadenza.messages import ToolCall


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
