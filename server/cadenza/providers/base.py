"""The provider protocol: one model call in, one normalized ``AssistantReply`` out.

Imports neither httpx nor pygls, so the engine can depend on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from cadenza.messages import AssistantReply, Message, ToolSpec
from cadenza.types import Ending, ReplyFormat

ToolChoice = Literal["auto", "required"]

TextSink = Callable[[str], None]
"""Receives text deltas as the model writes (for ``agent_message_chunk``)."""

StreamWatch = Callable[[str], bool]
"""Sees every raw delta of a streamed reply (its text, its calls' arguments, an envelope's
JSON), in order; True stops the reply there: the provider stops reading, closes the stream
(the server stops generating) and returns what came so far with ``finish_reason``
``repetition``."""


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """One model call.

    Attributes:
        messages: The whole conversation, system message first; every assistant tool call
            already has its ``tool`` message.
        tools: The tools offered this step (may be empty).
        max_tokens: Upper bound on completion tokens, or None for the provider's default.
        temperature: Sampling temperature, or None for the provider's default.
        tool_choice: ``"auto"`` lets the model end its turn; ``"required"`` makes it call at
            least one tool (OpenAI's ``tool_choice``; in envelope mode ``minItems: 1``).
        parallel_tool_calls: False allows at most one call per reply (OpenAI's
            ``parallel_tool_calls``; in envelope mode ``maxItems: 1``), so a small model sees
            each result before its next call. None: the provider's default.
        ending: How the session's turns end (``cadenza.types.Ending``): envelope-mode
            instructions then describe finishing as an empty list or as the ``complete``
            call. Native-tool providers need nothing more than ``tool_choice``.
        frequency_penalty: Penalty on tokens by how often they already occur (OpenAI's and
            llama.cpp's ``frequency_penalty``), or None for none. Providers without one
            (Anthropic, CLI agents) ignore it: the repair of a runaway reply sets it.
        reply_format: ``text`` asks for a plain-text reply in the text edit format (the
            tools described in the system message, no schema, no grammar, the history as
            text); the engine reads the calls out of it. Providers that do not speak it
            (Anthropic, CLI agents) offer the tools natively, and their calls are kept.
        watch: Sees the reply as it streams and may stop it (``StreamWatch``), or None.
            Providers that do not stream over HTTP (CLI agents) and Anthropic's ignore it.
        seed: The sampling seed (OpenAI's and llama.cpp's ``seed``), or None for the
            provider's own: requests that differ only in their seed give different replies
            when sampled. Providers without one (Anthropic, CLI agents) ignore it.
        example_file: A file of the workspace the text edit format's instructions name in
            their blocks, and its fence tag (``("inventory.py", "python")``; None: a
            placeholder path). A small model copies the example's path: a real one keeps its
            blocks on real files.
        lane: Which of several requests made at once this is (0: the step's own request).
            A provider serving them from server slots (the embedded llama-server) gives each
            lane its own slot, so they run side by side; others ignore it.
    """

    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int | None = None
    temperature: float | None = None
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool | None = None
    ending: Ending = "empty"
    frequency_penalty: float | None = None
    reply_format: ReplyFormat = "tools"
    watch: StreamWatch | None = field(default=None, compare=False)
    seed: int | None = None
    lane: int = 0
    example_file: tuple[str, str] | None = None


class ProviderError(Exception):
    """A model call failed for good (after the provider's own retries).

    The message is safe to show to the person: it never contains secrets.
    """


@runtime_checkable
class Provider(Protocol):
    """A model backend."""

    @property
    def name(self) -> str:
        """``PROVIDER/MODEL`` as the person named it (e.g. ``local/qwen2.5-coder-1.5b``)."""
        ...

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        """Run one model call.

        Args:
            request: The conversation and the tools offered.
            on_text: Called with text deltas while the reply streams, when the provider streams.

        Returns:
            The normalized reply.

        Raises:
            ProviderError: The call failed after retries; the session ends with ``error``.
        """
        ...

    async def aclose(self) -> None:
        """Release connections and child processes."""
        ...
