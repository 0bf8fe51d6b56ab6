"""Tool-call ids unique in a session, whatever the provider sent.

Some OpenAI-compatible servers number their calls afresh each turn (``call_0`` every time) or
send empty ids. Editors key their cards by ``toolCallId``, so a reused id would make a client
show two calls as one. When a reply enters the session its calls are checked against every id
the session has used (the restored history included): an empty or already used id gets a
fresh one, before the reply reaches the history, the events, a permission prompt or the
transcript, so all of them agree. A fresh id keeps to ``[A-Za-z0-9_-]`` (what every provider
accepts back), as ``<id>-<n>`` or ``call-<n>`` for an empty id.
"""

from __future__ import annotations

from collections.abc import Iterable

from cadenza.messages import AssistantMessage, AssistantReply, Message, ToolCall


class CallIds:
    """The tool-call ids a session has used."""

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._used: set[str] = set()
        for message in messages:
            if isinstance(message, AssistantMessage):
                self._used.update(call.id for call in message.tool_calls)

    def __contains__(self, call_id: str) -> bool:
        return call_id in self._used

    def note(self, call_ids: Iterable[str]) -> None:
        """Count ``call_ids`` as used (a restored session's calls its history does not hold)."""
        self._used.update(call_ids)

    def fresh(self, reply: AssistantReply) -> AssistantReply:
        """``reply`` with every empty or already used call id replaced, all noted as used.

        Returns ``reply`` itself when no id changes (the common case costs no copy).
        """
        calls = [self._claim(call) for call in reply.tool_calls]
        if all(new is old for new, old in zip(calls, reply.tool_calls, strict=True)):
            return reply
        return reply.model_copy(update={"tool_calls": calls})

    def claim(self, call: ToolCall) -> ToolCall:
        """``call`` with an id no other call of the session has, noted as used.

        For the engine's own calls (a done check running the tests).
        """
        return self._claim(call)

    def _claim(self, call: ToolCall) -> ToolCall:
        named = bool(call.id.strip())
        if named and call.id not in self._used:
            self._used.add(call.id)
            return call
        base = f"{call.id}-" if named else "call-"
        n = 2 if named else 1
        while f"{base}{n}" in self._used:
            n += 1
        self._used.add(f"{base}{n}")
        return call.model_copy(update={"id": f"{base}{n}"})
