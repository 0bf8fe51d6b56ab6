"""One step's model request: build it, stream the reply, repair a cut reply once, take it in.

A step may make its first reply another way (a ``Pick``: the candidates of
``engine.candidates``); what follows is the same. Under the text edit format
(``LoopSettings.edit == "text"``) the request asks for plain text and each reply's calls are
read out of its text (``providers.text_reply``) as it arrives, before anything looks at them.

The request offers the movement's tools with the loop variant's tool choice, and a completion
bound: ``maxTokens`` when configured, else under ``LoopSettings.reply_budget`` one sized from
the files in play (``engine.budget.reply_tokens``). Streamed text is shown as
``agent_message_chunk`` as it comes; every delta also goes to the step's ``ReplyWatch``
(progress, and the stop of a reply that repeats itself). A reply cut in the middle of a call
(by the token limit, or stopped for repeating itself) is a contract miss: under
``LoopSettings.repair`` the request is made exactly once more (a note, twice the tokens, and
sampling that cannot loop the same way) before anything reaches the history. The reply that
stays then enters the session: call ids unique in the session (``engine.call_ids``), its text
shown if it was not streamed, the history, the context's token count.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from cadenza.engine.budget import files_in_play, reply_tokens
from cadenza.engine.events import AgentMessageChunk, ContractRepaired, ModelReplied
from cadenza.engine.reply_watch import ReplyWatch
from cadenza.engine.runtime import Runtime
from cadenza.engine.testsuite import is_test_file
from cadenza.messages import AssistantReply, ToolMessage, ToolSpec, UserMessage
from cadenza.providers.base import ModelRequest, TextSink, ToolChoice
from cadenza.providers.text_format import quoted_texts, shown_texts
from cadenza.providers.text_reply import parse_text_reply
from cadenza.tools.paths import relative_name
from cadenza.tools.read import language_of, walk_files

REPAIR_TEMPERATURE = 0.5
"""At least this temperature for the repair: a greedy model that ran away (a small model
that repeats one number to the token limit) runs away the same way at temperature 0."""
REPAIR_FREQUENCY_PENALTY = 0.3
"""The repair's penalty on tokens already repeated (where the provider has one): it breaks
the loop that cut the first reply, mild enough not to distort an edit's indentation much."""

REPAIR_CUT = (
    "Your last reply was cut by the token limit before it was complete, so it was dropped. "
    "Reply again with one complete call, with shorter arguments (a smaller edit)."
)
REPAIR_REPEATING = (
    "Your last reply kept repeating the same text, so it was stopped and dropped. Reply "
    "again with one complete call; write each line once."
)


Pick = Callable[[ModelRequest], Awaitable[AssistantReply]]
"""Makes a step's first reply from its request in place of the one call (``engine.candidates``);
it publishes each reply it got (``complete_reply``)."""


class StreamSink:
    """Forwards streamed text as ``agent_message_chunk`` and remembers that it did."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.used = False

    def __call__(self, delta: str) -> None:
        """Show ``delta`` now: the person reads the reply as the model writes it."""
        self.used = True
        self.runtime.publish(AgentMessageChunk(text=delta))


async def ask_model(rt: Runtime, tools: list[ToolSpec], pick: Pick | None = None) -> AssistantReply:
    """Make this step's request (repaired once if cut) and append the reply to the history.

    Args:
        rt: The session.
        tools: The tools offered.
        pick: Makes the first reply instead of one call of the request (candidates).

    Returns:
        The reply as the history holds it (call ids made unique in the session).
    """
    sink = StreamSink(rt)
    request = model_request(rt, tools)
    if pick is None:
        reply = await complete_reply(rt, request, sink)
    else:
        reply = await pick(request)
    if rt.settings.loop.repair and is_cut(reply):
        sink = StreamSink(rt)  # the retry's own text is shown too
        reply = await _repair(rt, request, reply, sink)
    reply = rt.call_ids.fresh(reply)
    if reply.content and not sink.used:
        rt.publish(AgentMessageChunk(text=reply.content))
    rt.append(reply.to_message())
    rt.context.record_usage(reply.usage, covered=len(rt.messages))
    return reply


def model_request(rt: Runtime, tools: list[ToolSpec]) -> ModelRequest:
    """The request of this step: the whole history, ``tools``, the variant's tool choice."""
    loop, settings = rt.settings.loop, rt.settings
    first = not any(isinstance(m, ToolMessage) for m in rt.messages)
    choice: ToolChoice
    if loop.ending == "complete":
        choice = "required"  # finishing is itself a call: every reply holds one
    else:
        choice = settings.first_step_tool_choice if first else "auto"
    return ModelRequest(
        messages=list(rt.messages),
        tools=tools,
        max_tokens=completion_bound(rt),
        temperature=settings.temperature,
        tool_choice=choice,
        ending=loop.ending,
        reply_format="text" if loop.edit == "text" else "tools",
        watch=ReplyWatch(rt, stop_repeats=loop.reply_budget),
        example_file=example_file(rt) if loop.edit == "text" else None,
    )


def example_file(rt: Runtime) -> tuple[str, str] | None:
    """The file the text format's instructions show in their blocks, and its fence tag.

    The first file the task is about that is not a test (else the first), else the first the
    model was shown whole, else the workspace's first file: a small model writes its blocks to
    the example's path, so it is a real one, and the code rather than its tests (given
    "the tests in test_stats.py fail", the 1.5B model wrote test_stats.py back unchanged,
    claim after claim, while the bug was in stats.py).
    """
    code = (f for f in rt.task_files if not is_test_file(Path(f)))
    name = next(code, None) or next(iter(rt.task_files), None)
    if name is None and rt.shown:
        name = relative_name(rt.root, min(rt.shown))
    if name is None:
        files = (p for p in walk_files(rt.root, rt.root) if not p.name.startswith("."))
        name = next((relative_name(rt.root, p) for p in files), None)
    return None if name is None else (name, language_of(name))


async def complete_reply(
    rt: Runtime, request: ModelRequest, sink: TextSink | None
) -> AssistantReply:
    """One model call, its reply published (``ModelReplied``); not in the history yet."""
    reply = await _complete(rt, request, sink)
    _replied(rt, reply)
    return reply


async def _complete(rt: Runtime, request: ModelRequest, sink: TextSink | None) -> AssistantReply:
    """One model call; a text-format reply with the calls its text holds."""
    reply = await _reported(rt, request, sink)
    if request.reply_format != "text":
        return reply
    shown = shown_texts(request.messages)  # the fence lines a copied text may hold
    quoted = quoted_texts(request.messages)  # a tool block copied from one is no call
    return parse_text_reply(reply, id_prefix=f"text_{rt.steps}", shown=shown, quoted=quoted)


async def _reported(rt: Runtime, request: ModelRequest, sink: TextSink | None) -> AssistantReply:
    """``provider.complete``, its watch reporting progress meanwhile (``keep_reporting``)."""
    watch = request.watch
    if not isinstance(watch, ReplyWatch):
        return await rt.provider.complete(request, on_text=sink)
    replies: list[AssistantReply] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as group:
        group.start_soon(watch.keep_reporting)
        try:
            replies.append(await rt.provider.complete(request, on_text=sink))
        except Exception as exc:  # raised as it is, not inside the group's exception group
            failed.append(exc)
        finally:
            group.cancel_scope.cancel()
    if failed:
        raise failed[0]
    return replies[0]


def completion_bound(rt: Runtime) -> int | None:
    """This step's completion bound: the configured one, else one sized from the task."""
    settings = rt.settings
    if settings.max_tokens is not None or not settings.loop.reply_budget:
        return settings.max_tokens
    sizes = files_in_play(rt.root, rt.messages, rt.task_files, rt.written)
    free = rt.context.limits.context_size - rt.context.tokens(rt.messages)
    return reply_tokens(sizes, free_tokens=free)


def is_cut(reply: AssistantReply) -> bool:
    """A reply cut in the middle of a call: by the token limit, or stopped (a contract miss)."""
    return reply.cut and bool(reply.tool_calls)


def _fresh_watch(rt: Runtime, request: ModelRequest) -> ReplyWatch | None:
    """A new watch like ``request``'s, for a second request of the step."""
    watch = request.watch
    return (
        ReplyWatch(rt, stop_repeats=watch.stop_repeats) if isinstance(watch, ReplyWatch) else None
    )


def _replied(rt: Runtime, reply: AssistantReply) -> None:
    usage = reply.usage
    rt.publish(
        ModelReplied(
            step=rt.steps,
            tool_calls=len(reply.tool_calls),
            finish_reason=reply.finish_reason,
            prompt_tokens=usage.prompt_tokens if usage is not None else None,
            completion_tokens=usage.completion_tokens if usage is not None else None,
            cost=usage.cost if usage is not None else None,
            currency=usage.currency if usage is not None and usage.cost is not None else None,
            context_size=rt.context.limits.context_size,
        )
    )


async def _repair(
    rt: Runtime, request: ModelRequest, cut: AssistantReply, sink: StreamSink
) -> AssistantReply:
    """Exactly-once repair of a cut reply: ask once more, changing what produced it.

    A note, twice the tokens when the request set a bound (``local/`` sessions always do),
    and sampling that does not repeat the runaway: a temperature of at least
    ``REPAIR_TEMPERATURE`` and ``REPAIR_FREQUENCY_PENALTY``. The cut reply never enters the
    history; a second miss goes on as a miss (the call is answered with
    ``pipeline.CUT_ARGUMENTS``).
    """
    max_tokens = request.max_tokens * 2 if request.max_tokens else None
    temperature = max(request.temperature or 0.0, REPAIR_TEMPERATURE)
    note = REPAIR_REPEATING if cut.finish_reason == "repetition" else REPAIR_CUT
    retry = ModelRequest(
        messages=[*request.messages, UserMessage(tag="repair", content=note)],
        tools=request.tools,
        max_tokens=max_tokens,
        temperature=temperature,
        tool_choice="required",
        ending=request.ending,
        frequency_penalty=REPAIR_FREQUENCY_PENALTY,
        reply_format=request.reply_format,
        watch=_fresh_watch(rt, request),
    )
    reply = await _complete(rt, retry, sink)
    _replied(rt, reply)
    recovered = not is_cut(reply)
    rt.publish(ContractRepaired(step=rt.steps, reason="cut", recovered=recovered))
    return reply
