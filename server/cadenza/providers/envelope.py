"""The JSON-envelope contract: tool calls requested as one JSON object instead of native tools.

For servers that enforce a JSON schema (llama.cpp's ``response_format: {type: json_schema}``),
the reply is constrained to ``{"content": str, "tool_calls": [{"name", "arguments"}]}`` whose
schema lists each tool's argument schema, so every reply is a well-formed call or an explicit
end of turn (an empty list). The same envelope is what CLI adapters ask for by prompt.
"""

from __future__ import annotations

import json
from typing import Any

from cadenza.messages import (
    CUT_REASONS,
    AssistantMessage,
    AssistantReply,
    FinishReason,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from cadenza.types import Ending


class EnvelopeError(ValueError):
    """The text is not a JSON envelope."""


def envelope_schema(
    tools: list[ToolSpec], *, require_call: bool = False, max_calls: int = 8
) -> dict[str, Any]:
    """The JSON Schema of a reply: content plus a list of calls, one variant per tool.

    With ``require_call`` the list must hold at least one call (``tool_choice: required``);
    ``max_calls`` bounds it (1 for ``parallel_tool_calls: false``).
    """
    variants = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": t.parameters},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    call: dict[str, Any] = {"anyOf": variants} if variants else {"type": "object"}
    return {
        "type": "object",
        # tool_calls first: constrained decoding writes properties in this order, and a model
        # that writes its summary before its calls tends to claim work it has not done.
        "properties": {
            "tool_calls": {
                "type": "array",
                "items": call,
                "minItems": 1 if require_call and tools else 0,
                "maxItems": max_calls if tools else 0,
            },
            "content": {"type": "string"},
        },
        "required": ["tool_calls", "content"],
        "additionalProperties": False,
    }


ENVELOPE_INSTRUCTIONS = """\

## How to reply
Every reply is exactly one JSON object: {{"tool_calls": [{{"name": "<tool>", \
"arguments": {{...}}}}], "content": "<short note for the person>"}}.
- To act, put the call in tool_calls. Example:
  {{"tool_calls": [{{"name": "list_files", "arguments": {{}}}}], "content": ""}}
- {finish}

Example 1, a change in one place. Task: "in util.py, make scale return twice its argument". \
util.py, as read:
def scale(x):
    return x
Your replies, one per step:
1. {{"tool_calls": [{{"name": "{edit}", "arguments": {edit_args}}}], "content": ""}}
2. {last}

Example 2, a rename everywhere. Task: "rename helper to assist everywhere". Your replies:
1. {{"tool_calls": [{{"name": "search", "arguments": {{"pattern": "helper"}}}}], "content": ""}}
   (the result shows matches in util.py and main.py)
2. {{"tool_calls": [{{"name": "{edit}", "arguments": {rename_util}}}], "content": ""}}
3. {{"tool_calls": [{{"name": "{edit}", "arguments": {rename_main}}}], "content": ""}}
4. then finish as in example 1.

## Tools
{tools}
"""

FINISH_LINES = {
    "empty": (
        "Only when the task is done (your edits succeeded), reply with an empty list and say "
        'what\n  you changed: {"tool_calls": [], "content": "<what you changed>"}'
    ),
    "complete": (
        "Every reply holds a call. Only when the task is done (your edits succeeded), call "
        'complete:\n  {"tool_calls": [{"name": "complete", "arguments": {"status": "done", '
        '"summary": "<what you changed>"}}], "content": ""}'
    ),
}
_SUMMARY = "scale in util.py now returns twice its argument."
LAST_REPLIES = {
    "empty": json.dumps({"tool_calls": [], "content": _SUMMARY}),
    "complete": json.dumps(
        {
            "tool_calls": [
                {"name": "complete", "arguments": {"status": "done", "summary": _SUMMARY}}
            ],
            "content": "",
        }
    ),
}


def _example_rename(edit: str, path: str) -> str:
    """The rename example's edit of ``path`` with the session's edit tool."""
    if edit == "edit_file":
        args: dict[str, object] = {
            "path": path,
            "old_string": "helper",
            "new_string": "assist",
            "replace_all": True,
        }
    elif edit == "replace_lines":
        args = {"path": path, "start_line": 1, "end_line": 1, "new_text": "def assist(x):"}
    else:
        args = {"path": path, "content": "<the whole new text, with helper renamed to assist>"}
    return json.dumps(args)


def _example_edit(tools: list[ToolSpec]) -> tuple[str, str]:
    """The worked example's edit call with the edit tool the session offers.

    Several lines, copied as they are and changed as they must become. Small models imitate
    the examples closely (docs/lab/local-model-log.md): with only a rename example they edited
    single lines found by a search; with only this one they stopped finding every place of a
    rename.
    """
    names = {t.name for t in tools}
    if "edit_file" in names or not names & {"write_file", "replace_lines"}:
        args: dict[str, object] = {
            "path": "util.py",
            "old_string": "def scale(x):\n    return x",
            "new_string": "def scale(x):\n    return 2 * x",
        }
        return "edit_file", json.dumps(args)
    if "replace_lines" in names:
        args = {"path": "util.py", "start_line": 2, "end_line": 2, "new_text": "    return 2 * x"}
        return "replace_lines", json.dumps(args)
    args = {"path": "util.py", "content": "def scale(x):\n    return 2 * x\n"}
    return "write_file", json.dumps(args)


def signature(tool: ToolSpec) -> str:
    """A one-line signature, e.g. ``read_file(path: string, offset?: integer)``.

    The grammar already enforces the full schema, so the prompt only needs names and types:
    short prompts serve small models better than JSON Schema dumps.
    """
    props = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    params = []
    for name, schema in props.items():
        kind = schema.get("type") or "/".join(
            str(v.get("type")) for v in schema.get("anyOf", []) if v.get("type") != "null"
        )
        params.append(f"{name}{'' if name in required else '?'}: {kind or 'any'}")
    return f"{tool.name}({', '.join(params)})"


def envelope_instructions(tools: list[ToolSpec], ending: Ending = "empty") -> str:
    """The text appended to the system prompt that describes the envelope and each tool.

    ``ending`` (``cadenza.types.Ending``) says how a turn ends: an empty list, or the
    ``complete`` call; the worked example uses the edit tool offered.
    """
    lines = [f"- {signature(t)}: {t.description}" for t in tools]
    edit, edit_args = _example_edit(tools)
    return ENVELOPE_INSTRUCTIONS.format(
        finish=FINISH_LINES[ending],
        edit=edit,
        edit_args=edit_args,
        rename_util=_example_rename(edit, "util.py"),
        rename_main=_example_rename(edit, "main.py"),
        last=LAST_REPLIES[ending],
        tools="\n".join(lines),
    )


def render_call(call: ToolCall) -> dict[str, Any]:
    """A stored call as it appears inside an envelope (arguments as an object when they parse)."""
    try:
        arguments: Any = json.loads(call.arguments)
    except ValueError:
        arguments = call.arguments
    return {"name": call.name, "arguments": arguments}


def map_messages(
    messages: list[Message], tools: list[ToolSpec], ending: Ending = "empty"
) -> list[dict[str, Any]]:
    """Chat messages for an envelope-mode request.

    Assistant turns are rendered as the envelopes the model wrote; tool results become one user
    message per batch, so any chat template (which may not know the ``tool`` role) works.
    """
    out: list[dict[str, Any]] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            out.append({"role": "user", "content": "\n\n".join(pending)})
            pending.clear()

    for message in messages:
        if isinstance(message, ToolMessage):
            status = "error" if message.is_error else "result"
            pending.append(f"[{message.name} {status}]\n{message.content}")
            continue
        flush()
        if isinstance(message, SystemMessage):
            out.append(
                {
                    "role": "system",
                    "content": message.content + envelope_instructions(tools, ending),
                }
            )
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            body = {
                "tool_calls": [render_call(c) for c in message.tool_calls],
                "content": message.content,
            }
            out.append({"role": "assistant", "content": json.dumps(body, ensure_ascii=False)})
    flush()
    return out


ENVELOPE_KEYS = frozenset({"content", "tool_calls"})


def _from_object(data: Any, *, id_prefix: str) -> tuple[str, list[ToolCall]]:
    """An envelope object's ``(content, tool_calls)``.

    Raises:
        EnvelopeError: ``data`` is not an object of the envelope's shape.
    """
    if not isinstance(data, dict) or not isinstance(data.get("tool_calls", []), list):
        raise EnvelopeError("not an envelope object")
    content = data.get("content", "")
    calls: list[ToolCall] = []
    for i, item in enumerate(data.get("tool_calls", [])):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise EnvelopeError("a tool call without a name")
        arguments = item.get("arguments", {})
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        calls.append(ToolCall(id=f"{id_prefix}_{i}", name=item["name"], arguments=raw))
    return (content if isinstance(content, str) else json.dumps(content)), calls


def parse_envelope(text: str, *, id_prefix: str) -> tuple[str, list[ToolCall]]:
    """Parse a whole envelope (the full text is one JSON object).

    Returns:
        ``(content, tool_calls)``, calls numbered ``{id_prefix}_{i}``.

    Raises:
        EnvelopeError: ``text`` is not one JSON object of the envelope's shape.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise EnvelopeError(f"not JSON: {exc}") from None
    return _from_object(data, id_prefix=id_prefix)


def find_envelope(text: str, *, id_prefix: str) -> tuple[str, list[ToolCall]] | None:
    """The first JSON envelope anywhere in ``text``: alone, in a code fence, or amid prose.

    A structural scan, not a pattern on the prose: at each ``{`` the JSON decoder tries to read
    one value (``json.JSONDecoder.raw_decode``); the first object whose keys are only
    ``content`` and ``tool_calls`` (at least one of them, with the envelope's types) is the
    envelope. An object that is not one (say a wrapper) is searched inside, from its next
    ``{``. Truncated or malformed JSON is no envelope.

    Returns:
        ``(content, tool_calls)`` (calls numbered ``{id_prefix}_{i}``), or None.
    """
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict) and value and set(value) <= ENVELOPE_KEYS:
            try:
                return _from_object(value, id_prefix=id_prefix)
            except EnvelopeError:
                pass
        start = text.find("{", start + 1)
    return None


def _cut_call_name(text: str) -> str:
    """The name of the first call in a cut envelope, when it got that far (JSON decoding only)."""
    key = text.find('"name"')
    if key < 0:
        return "unknown"
    colon = text.find(":", key)
    try:
        value, _ = json.JSONDecoder().raw_decode(text[colon + 1 :].lstrip())
    except ValueError:
        return "unknown"
    return value if isinstance(value, str) else "unknown"


def envelope_reply(
    text: str, *, finish_reason: FinishReason, usage: Usage | None, id_prefix: str
) -> AssistantReply:
    """Normalize an envelope-mode completion.

    A cut reply (``finish_reason`` ``length``, the token limit, or ``repetition``, stopped
    while it streamed) that does not parse is kept as one call with the cut text as its
    arguments and the same finish reason: the engine then answers it with an error result and
    runs nothing, rather than ending the turn.

    Raises:
        EnvelopeError: A whole (not cut) reply that is not an envelope.
    """
    try:
        content, calls = parse_envelope(text, id_prefix=id_prefix)
    except EnvelopeError:
        if finish_reason not in CUT_REASONS:
            raise
        call = ToolCall(id=f"{id_prefix}_0", name=_cut_call_name(text), arguments=text)
        return AssistantReply(
            content="", tool_calls=[call], finish_reason=finish_reason, usage=usage
        )
    return AssistantReply(
        content=content,
        tool_calls=calls,
        finish_reason="tool_calls" if calls else finish_reason,
        usage=usage,
    )
