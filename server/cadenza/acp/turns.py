"""How a prompt turn reads and ends: the prompt's text, ACP stop reasons, the final message.

Engine stop reasons → ACP ``stopReason``:

- ``waiting_human`` does not end a turn (the person is asked in it: ``acp.human``).
- ``end_turn``, ``needs_user_input``, ``failed``, ``aborted`` and ``error``
  → ``end_turn``: the turn is over and the person speaks next (an answer to a question is just
  the next prompt, which resumes the conversation). The final message (the answer, the
  question, the reason it failed, the error) is sent as ``agent_message_chunk`` first, unless
  the model already streamed exactly that text in its last step. A provider error is thus a
  turn that ends with the error text, not a JSON-RPC error: the session stays usable.
- ``max_steps`` → ``max_turn_requests``.
- ``cancelled`` → ``cancelled``.

``refusal`` and ``max_tokens`` are not used.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    StopReason,
    TextContentBlock,
    TextResourceContents,
)

from cadenza.types import StopReason as EngineStopReason

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)

ERROR_PREFIX = {
    "failed": "The task failed: ",
    "aborted": "Stopped: ",
    "error": "Error: ",
}
"""What the final message of an unsuccessful end starts with."""


def prompt_text(blocks: Sequence[PromptBlock]) -> str:
    """The task (or follow-up) a prompt asks for: its text blocks, one per line.

    A resource link (an @-mention) becomes ``@<uri>``; an embedded text resource its URI and
    text. Images and audio are not advertised (``promptCapabilities``) and are skipped.
    """
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"@{block.uri}")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f"@{resource.uri}:\n{resource.text}")
    return "\n".join(part for part in parts if part.strip())


def acp_stop_reason(reason: EngineStopReason) -> StopReason:
    """ACP's ``stopReason`` for an engine stop reason (see the module docstring)."""
    if reason == "cancelled":
        return "cancelled"
    if reason == "max_steps":
        return "max_turn_requests"
    return "end_turn"


def final_message(
    reason: EngineStopReason, message: str, streamed: str, missing_info: str | None = None
) -> str | None:
    """The text to send as the turn's last ``agent_message_chunk``, or None.

    Args:
        reason: How the run ended.
        message: The outcome's message (answer, question, reason or error).
        streamed: The assistant text already sent in the run's last step.
        missing_info: ``needs_user_input``: what the agent needs from the person (added
            after the message unless the message says it already).
    """
    if missing_info and missing_info.strip() not in message:
        message = f"{message}\n\n{missing_info}" if message.strip() else missing_info
    if reason == "cancelled" or not message.strip():
        return None
    if message.strip() == streamed.strip():
        return None
    return ERROR_PREFIX.get(reason, "") + message
