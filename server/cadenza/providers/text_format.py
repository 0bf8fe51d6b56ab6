"""The text edit format's request side: the instructions, and the history as the model reads it.

A request in this format (``ModelRequest.reply_format == "text"``) carries no tool schema and
no grammar: the system message says how to write a file block, a SEARCH/REPLACE block and a
tool block, and lists the other tools in one line each (``providers.text_reply`` reads the
reply). The history goes back as the model wrote and read it: each assistant message is its
own text, and the results of one reply's calls are one user message, each headed by what it
answers (``[block for util.py: error]``, ``[read_file result]``), so any chat template works.

The engine's and the tools' messages name the calls' JSON arguments (``old_string``,
``edit_file``, "an empty tool_calls list"); the model of this format never wrote those, so
the messages it reads about its blocks (errors, edit results, refused claims of done,
repairs) name the blocks instead (``TEXT_TERMS``). What a tool read from the workspace (a
file, a search) is never rewritten.
"""

from __future__ import annotations

import json
import re
from typing import Any

from cadenza.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
    fence_for,
)
from cadenza.providers.text_reply import SEARCH_REPLACE, WHOLE_FILE, read_text
from cadenza.types import Ending

FILE_TOOLS = frozenset({"edit_file", "write_file", "create_file", "replace_lines"})
"""The tools a file block stands for: not listed as tools in this format."""

BLOCKS = """\

## How to reply
Reply in plain text. To change a file, write its path alone on a line, then a fenced block \
with the complete new text of the file, as files are shown to you. For example, for {path}:

{path}
```{language}
(the complete new text of the file)
```

Write only the files you change. For a small change in a long file, send only the lines that \
change instead, as SEARCH/REPLACE sections:

{path}
```{language}
<<<<<<< SEARCH
(lines copied exactly from the file)
=======
(what they become)
>>>>>>> REPLACE
```
"""
"""The blocks, with placeholders for the text: the 1.5B model copied a concrete example's code
(``def scale``) into the task's file and its SEARCH/REPLACE example onto a test file. The path
is a real file of the workspace (``ModelRequest.example_path``): given ``path/to/file.py`` it
wrote its blocks to ``path/to/inventory.py``, a new file, instead of ``inventory.py``."""
PLACEHOLDER_PATH = "path/to/file.py"

TOOLS = """
To use a tool, write one call in a tool block:
```tool
{{"name": "{example}", "arguments": {{"path": "{path}"}}}}
```
Tools:
{tools}
"""

FINISHED = "reply with one sentence saying what you did, and no block"
FINISH = {
    # Nothing: told up front how to finish, the 1.5B model "finished" at once, with a sentence
    # claiming the work and no block. An edit's result says it (``engine.echo``).
    "empty": "",
    "complete": (
        "\nWhen the task is done, call complete with status done and a one-sentence summary.\n"
    ),
}

TEXT_TERMS: tuple[tuple[str, str], ...] = (
    (", or set replace_all to true", ""),
    ("called edit_file with exactly these arguments", "sent this same SEARCH/REPLACE block"),
    ("called write_file with exactly these arguments", "sent this same file block"),
    ("called create_file with exactly these arguments", "sent this same file block"),
    ("this call's arguments were complete", "this block was complete"),
    (
        "Make the call again with shorter arguments (for example a smaller edit)",
        "Send it again, shorter: SEARCH/REPLACE sections instead of the whole file",
    ),
    (
        "one complete call, with shorter arguments (a smaller edit)",
        "complete blocks, shorter: SEARCH/REPLACE sections instead of the whole file",
    ),
    # A refused claim of done ends with the action: the model acts on the last sentence it
    # reads, and "then reply with one sentence" made it claim a fix it never wrote.
    (
        "Do that now; then reply with an empty tool_calls list and a one-sentence summary.",
        "Do that now: send the file with the fix as a block.",
    ),
    ("claim done again with the answer as the summary", "reply again with the answer, no block"),
    ("reply with an empty tool_calls list and a one-sentence summary", FINISHED),
    ("an empty tool_calls list", "no block"),
    ("old_string", "the SEARCH text"),
    ("new_string", "the REPLACE text"),
    ("edit_file", "a SEARCH/REPLACE block"),
    ("write_file", "a file block"),
    ("create_file", "a file block"),
)
"""Phrases of the tools' and the engine's messages, as a model of this format reads them
(longer phrases first: the words they hold are replaced after them)."""
_TRANSLATED_TAGS = frozenset({"check", "repair", "movement"})
_THE_THE = re.compile(r"\b(the|a|an) (the|a) ")
_FENCE_LINE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


def text_instructions(
    tools: list[ToolSpec], ending: Ending = "empty", example_file: tuple[str, str] | None = None
) -> str:
    """What the system message adds in this format.

    The blocks (when a file tool is offered; their path and fence tag ``example_file``, a
    file of the workspace), the tool block and one line per other tool, and how to finish
    under ``ending``.
    """
    edits = any(t.name in FILE_TOOLS for t in tools)
    others = [t for t in tools if t.name not in FILE_TOOLS]
    path, language = example_file or (PLACEHOLDER_PATH, "python")
    blocks = BLOCKS.format(path=path, language=language)
    parts = [blocks] if edits else ["\n## How to reply\nReply in plain text.\n"]
    if others:
        example = next((t.name for t in others if t.name == "read_file"), others[0].name)
        lines = "\n".join(f"- {_signature(t)}: {_first_sentence(t.description)}" for t in others)
        parts.append(TOOLS.format(example=example, path=path, tools=lines))
    parts.append(FINISH[ending])
    return "".join(parts)


def _signature(tool: ToolSpec) -> str:
    """``name(required, optional?)``: the argument names (the tool validates their types)."""
    props = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    names = [f"{name}{'' if name in required else '?'}" for name in props]
    return f"{tool.name}({', '.join(names)})"


def _first_sentence(text: str) -> str:
    end = re.search(r"(?<=[.!?])\s", text)
    return text[: end.start()] if end else text


def in_text_terms(text: str) -> str:
    """``text`` with the call vocabulary replaced by the blocks' (``TEXT_TERMS``).

    Fenced blocks (a file's text quoted in an error) are left as they are.
    """
    parts: list[str] = []
    prose: list[str] = []
    fence = ""
    for line in text.split("\n"):
        opener = _FENCE_LINE.match(line)
        if not fence and opener:
            parts.append(_terms("\n".join(prose)))
            prose, fence = [], opener["fence"]
            parts.append(line)
        elif fence:
            parts.append(line)
            if opener and opener["fence"][0] == fence[0] and len(opener["fence"]) >= len(fence):
                fence = "" if not opener["info"].strip() else fence
        else:
            prose.append(line)
    if prose or not parts:
        parts.append(_terms("\n".join(prose)))
    return "\n".join(parts)


def _terms(text: str) -> str:
    for old, new in TEXT_TERMS:
        text = text.replace(old, new)
    return _THE_THE.sub(r"\2 ", text)


def render_call(call: ToolCall) -> str:
    """A call the model did not write as text (an earlier model's), as this format writes it."""
    try:
        args: Any = json.loads(call.arguments)
    except ValueError:
        args = {}
    if not isinstance(args, dict):
        args = {}
    path = args.get("path", "")
    text = None
    if call.name in ("write_file", "create_file") and "content" in args:
        text = str(args["content"]).rstrip("\n")
    elif call.name == "edit_file" and "old_string" in args:
        old = str(args["old_string"]).rstrip("\n")
        new = str(args.get("new_string", "")).rstrip("\n")
        text = f"<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE"
    if text is not None:
        fence = fence_for(text)  # the text's own fence lines stay inside the block
        return f"{path}\n{fence}\n{text}\n{fence}"
    body = json.dumps({"name": call.name, "arguments": args}, ensure_ascii=False)
    return f"```tool\n{body}\n```"


QUOTING_TOOLS = frozenset({"read_file", *FILE_TOOLS})
"""The tools whose results show a file between fences longer than its own fence lines."""


def shown_texts(messages: list[Message]) -> list[str]:
    """The texts the model read, as ``text_reply.read_text`` weighs them (its ``shown``).

    A file quoted between fences longer than its own lines counts by those fences; another
    tool's result (a command's output, a web page) shows text as it is, so its own lines of
    backticks count: the fence that would quote it stands beside it.
    """
    texts = [m.content for m in messages]
    quoted = (m for m in messages if isinstance(m, ToolMessage) and m.name not in QUOTING_TOOLS)
    return texts + [fence_for(m.content) for m in quoted]


QUOTING_TAGS = frozenset({"files", "check", "workspace"})
"""The person's side of the conversation that holds the workspace's text, not their words."""


def quoted_texts(messages: list[Message]) -> list[str]:
    """The workspace's texts the model read (``text_reply.read_text``'s ``quoted``).

    Tool results, and the files, overview and test output sent with the task.
    """
    return [
        m.content
        for m in messages
        if isinstance(m, ToolMessage) or (isinstance(m, UserMessage) and m.tag in QUOTING_TAGS)
    ]


def _assistant_text(message: AssistantMessage) -> str:
    """The assistant's text; calls it did not write in it (another format's) appended."""
    if not message.tool_calls or read_text(message.content).calls:
        return message.content
    rendered = "\n\n".join(render_call(c) for c in message.tool_calls)
    return f"{message.content}\n\n{rendered}" if message.content else rendered


RESULT_HEAD = re.compile(r"^\[(?:block for .+: |[\w.-]+ )(?:result|error)\]$")
"""A line that heads a result as the model reads it (``_result_head``)."""


def _result_head(call: ToolCall | None, message: ToolMessage) -> str:
    status = "error" if message.is_error else "result"
    if call is not None and call.name in (SEARCH_REPLACE, WHOLE_FILE, "create_file"):
        try:
            path = json.loads(call.arguments).get("path")
        except (ValueError, AttributeError):
            path = None
        if path:
            return f"[block for {path}: {status}]"
    return f"[{message.name} {status}]"


def _result_text(call: ToolCall | None, message: ToolMessage) -> str:
    """One result as the model reads it: its head, then its text.

    In block terms when it is about a block, an error, or a control call.
    """
    content = message.content
    if (
        message.is_error
        or (call is not None and call.name in FILE_TOOLS)
        or message.name
        in (
            "complete",
            "transition",
        )
    ):
        content = in_text_terms(content)
    return f"{_result_head(call, message)}\n{content}"


def map_messages(
    messages: list[Message],
    tools: list[ToolSpec],
    ending: Ending = "empty",
    example_file: tuple[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Chat messages for a text-format request (see the module docstring)."""
    out: list[dict[str, Any]] = []
    pending: list[str] = []
    calls: dict[str, ToolCall] = {}

    def flush() -> None:
        if pending:
            out.append({"role": "user", "content": "\n\n".join(pending)})
            pending.clear()

    for message in messages:
        if isinstance(message, ToolMessage):
            pending.append(_result_text(calls.get(message.tool_call_id), message))
            continue
        flush()
        if isinstance(message, SystemMessage):
            text = message.content + text_instructions(tools, ending, example_file)
            out.append({"role": "system", "content": text})
        elif isinstance(message, UserMessage):
            text = message.content
            if message.tag in _TRANSLATED_TAGS:
                text = in_text_terms(text)
            out.append({"role": "user", "content": text})
        elif isinstance(message, AssistantMessage):
            calls = {c.id: c for c in message.tool_calls}
            out.append({"role": "assistant", "content": _assistant_text(message)})
    flush()
    return out
