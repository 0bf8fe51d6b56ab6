"""The prompt contract of prompt-in, text-out backends, with exactly-once repair.

A CLI has no native tool calling that Cadenza can use, so tools are offered by prompt: the whole
conversation is rendered as text with the envelope instructions of ``envelope``, and the answer
must contain one JSON envelope ``{"content": str, "tool_calls": [{"name", "arguments"}]}``, found
by ``find_envelope`` (a structural scan with the JSON decoder, in a code fence or amid prose).

**Exactly-once repair** (``cli_turn``): an answer without an envelope while tools are offered is
a contract miss; the turn asks again exactly once, with ``CORRECTION_PROMPT``; if that answer has
no envelope either, the FIRST answer's text is accepted as the final answer (no tool calls).
Never more than one retry. A valid envelope with an empty ``tool_calls`` ends the turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from cadenza.messages import AssistantReply, Usage
from cadenza.providers.base import ModelRequest
from cadenza.providers.envelope import find_envelope
from cadenza.providers.envelope import map_messages as map_envelope_messages

PREVIOUS_REPLY_CHARS = 4000
"""How much of a rejected answer the correction prompt quotes back (characters)."""

REPLY_INSTRUCTION = """\
# Your reply
Reply now with exactly one JSON object, {"tool_calls": [...], "content": "..."}, and nothing \
else: no prose around it, no code fence. To act, put the call in tool_calls; an empty \
tool_calls list ends your turn at once, so never describe an action without making its call."""

REQUIRED_CALL = "This reply must contain at least one tool call."

CORRECTION_PROMPT = """\
# Correction
Your previous reply (quoted above) did not contain the required JSON object, so it could not \
be used. Reply again with exactly one JSON object of the form \
{"tool_calls": [{"name": "<tool>", "arguments": {...}}], "content": "<short note>"} and \
nothing else. Use an empty tool_calls list only if the task is done."""
"""Sent once, after a contract miss; tests look for its first line in the second call."""


@dataclass(frozen=True, kw_only=True)
class CliAnswer:
    """What a CLI answered: the model's text, and token counts when the CLI reports them."""

    text: str
    usage: Usage | None = None


def render_prompt(request: ModelRequest) -> str:
    """The conversation as one prompt: system text with the envelope instructions, then turns.

    Assistant turns appear as the envelopes they were; tool results as user turns (the same
    rendering as the JSON-envelope mode of HTTP servers).
    """
    parts: list[str] = []
    turns: list[str] = []
    for message in map_envelope_messages(request.messages, request.tools, request.ending):
        if message["role"] == "system":
            parts.append(message["content"])
        else:
            turns.append(f"## {message['role']}\n{message['content']}")
    if turns:
        parts.append("# Conversation so far\n" + "\n\n".join(turns))
    instruction = REPLY_INSTRUCTION
    if request.tools and request.tool_choice == "required":
        instruction += "\n" + REQUIRED_CALL
    parts.append(instruction)
    return "\n\n".join(parts)


def correction_prompt(prompt: str, rejected: str) -> str:
    """The second prompt after a contract miss: the first, the rejected answer, the correction."""
    quoted = rejected[:PREVIOUS_REPLY_CHARS]
    return f"{prompt}\n\n## assistant (previous reply, rejected)\n{quoted}\n\n{CORRECTION_PROMPT}"


RunPrompt = Callable[[str], Awaitable[CliAnswer]]
"""Runs one prompt through a CLI and returns its answer."""


async def cli_turn(request: ModelRequest, run: RunPrompt, *, id_prefix: str) -> AssistantReply:
    """One model turn through a prompt-in, text-out backend, with exactly-once repair.

    Args:
        request: The conversation and the tools offered.
        run: Calls the backend once (the CLI); raises ``ProviderError`` when it fails.
        id_prefix: Tool call ids are ``{id_prefix}_{i}``.

    Returns:
        The envelope's content and calls; or, after two answers without an envelope, the
        first answer's text with no calls (the final answer). Without tools offered, an answer
        without an envelope is the final answer at once.

    Raises:
        ProviderError: The backend failed (the repair never retries failures, only misses).
    """
    prompt = render_prompt(request)
    first = await run(prompt)
    found = find_envelope(first.text, id_prefix=id_prefix)
    if found is None and request.tools:
        second = await run(correction_prompt(prompt, first.text))
        repaired = find_envelope(second.text, id_prefix=id_prefix)
        if repaired is not None:
            return _reply(repaired, second.usage)
    if found is None:
        return AssistantReply(content=first.text.strip(), finish_reason="stop", usage=first.usage)
    return _reply(found, first.usage)


def _reply(found: tuple[str, list[Any]], usage: Usage | None) -> AssistantReply:
    content, calls = found
    return AssistantReply(
        content=content,
        tool_calls=calls,
        finish_reason="tool_calls" if calls else "stop",
        usage=usage,
    )
