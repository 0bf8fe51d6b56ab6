"""Small shared literal types of the ground floor, declared once for every layer.

The engine, the providers, the config and the wire schema all name these; keeping them here
lets each layer use them without importing a layer above it.
"""

from __future__ import annotations

from typing import Literal

Ending = Literal["empty", "complete"]
"""How a movement's turn ends: a reply with no tool calls (``empty``), or only through the
``complete`` control call (``complete``: every reply must carry a call)."""

ReplyFormat = Literal["tools", "text"]
"""How the model is asked to act: ``tools``, tool calls (native, or the JSON envelope where the
provider uses one); ``text``, plain text with code in fenced blocks (the text edit format,
``providers.text_format``), which the engine reads into calls."""

StopReason = Literal[
    "end_turn",
    "needs_user_input",
    "waiting_human",
    "failed",
    "aborted",
    "cancelled",
    "max_steps",
    "error",
]
"""Why a session ended: a final answer or ``complete(done)``, a question for the
person, a person must act in the browser, ``complete(failed)``, an ``ABORT`` exit (e.g. context
overflow), a cancel, the session's step bound, or a provider/internal error."""

ToolStatus = Literal["pending", "in_progress", "completed", "failed"]
"""A tool call's state as ACP's ``tool_call_update`` names it."""
