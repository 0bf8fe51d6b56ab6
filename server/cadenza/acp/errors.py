"""Words for a client's JSON-RPC error answer, with the detail clients put in ``data``.

Clients often answer with a generic code and message and say what happened in ``data``: acpx
refuses a write as ``-32603 "Internal error"`` with ``{"details": "Permission denied for
fs/write_text_file"}``. Only the message reached the model ("Internal error"), so it could
not tell a denied write from a broken editor; the detail goes with it now.
"""

from __future__ import annotations

import json
from typing import Any

from cadenza.secrets import redact_then_cut

DETAIL_CHARS = 300
"""Longest detail quoted (characters): a client may put a whole stack trace in ``data``."""


def _detail(data: Any) -> str:
    if data is None:
        return ""
    if isinstance(data, dict) and isinstance(data.get("details"), str):
        text = str(data["details"])
    elif isinstance(data, str):
        text = data
    else:
        text = json.dumps(data, ensure_ascii=False, default=str)
    return redact_then_cut(text, DETAIL_CHARS)


def describe_error(exc: Exception) -> str:
    """``exc``'s message, followed by its ``data`` detail in parentheses when it has one."""
    detail = _detail(getattr(exc, "data", None))
    message = str(exc)
    return f"{message} ({detail})" if detail and detail not in message else message
