"""The text edit format's reply side: plain text with code in fenced blocks → tool calls.

Models write code better as plain text in a fenced block than as an escaped string inside JSON
(Aider measured it on every model it tried: escaping, and the pull of the JSON shape, cost
correctness). In this format a reply is Markdown, and only these structures in it act:

- **whole file**: a line holding only the file's path (``util.py``, ``**util.py**``,
  ```` `util.py` ````, ``### util.py``, ``File: util.py``), then a fenced block with the file's
  complete new text → ``write_file(path, content)`` (it creates a file that does not exist);
- **search/replace**: the path line, then a fenced block that begins with one or more
  ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE`` sections → one
  ``edit_file(path, old_string, new_string)`` per section (the markers are found without the
  fence too, as Aider does); a section without its path uses the reply's previous path. A
  whole file whose text holds such lines further down is a file;
- **a tool call**: a fenced block tagged ``tool`` (or ``json`` without a path line) holding a
  JSON object ``{"name": ..., "arguments": {...}}`` → that call. JSON stays for the other
  tools because their arguments are short values, never code (a path, a pattern, a command),
  it is one shape for every tool (MCP tools included) and their schemas validate it as they
  validate native calls.

A fence with no path line before it is not an edit (an example, a command for the person),
as Aider treats it. A reply without any of these has no calls: its turn ends.

A block closes at a line of its fence character at least as long as its opening fence
(CommonMark). Files are shown to the model between fences longer than any line of backticks
they hold (``messages.fence_for``), so a file written back between the fences it was shown in
reads whole, whatever it holds. Written back between shorter fences, a fence line of the
file's own would close its block early and turn the rest of the file into blocks; so a block
closed by a fence line as short as one a shown file holds, with calls after it, uses none of
them (``read_text``).

The calls go through the same path as the tools' own calls (versions, review, checkpoints,
``workspace/applyEdit``, undo). What cannot become a call is still a call, carrying its error
(``ToolCall.error``): an unclosed fence, a SEARCH section without ``=======`` or
``>>>>>>> REPLACE``, a search/replace block with no path, an empty whole-file block, a tool
block that is not one JSON call. The engine answers it with that error and runs nothing, so
the model reads what was wrong and the turn goes on. A fence still open when the reply was cut
by the token limit marks the reply cut (``finish_reason == "length"``): nothing of it runs.
What the tools check themselves (a path outside the workspace, a SEARCH text found twice or
nowhere, with the near-miss and whitespace-forgiving matching) comes back as their results.

This is a structural reading of a declared format, as the JSON envelope's is: nothing here
guesses intent from prose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from cadenza.messages import AssistantReply, ToolCall, longest_fence
from cadenza.providers.text_paths import (
    fence_info,
    path_before,
    path_index,
    path_line,
)

WHOLE_FILE = "write_file"
SEARCH_REPLACE = "edit_file"
TOOL_BLOCK = "tool"
"""The name of a broken tool block's call when the block names no tool."""

NESTING_SCANS = 8
"""A reply's nested fence readings scan at most this many times its lines in all: an opener
whose nested reading runs to the end, repeated, made the reading quadratic (1,200 such
blocks: 1.5 s)."""
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}(?=[^`]*$)|~{3,})(?P<info>.*)$")
"""A fence line; a backtick fence's info string holds no backtick (CommonMark), so a line of
inline code such as ```` ```x``` ```` opens nothing."""
_SEARCH = re.compile(r"^\s*<{5,9}\s*SEARCH\b.*$", re.IGNORECASE)
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9}\s*REPLACE\b.*$", re.IGNORECASE)
TOOL_TAGS = frozenset({"tool", "tool_call", "tool_code"})
_TILDE_RUN = re.compile(r"^[ \t]*(~{3,})", re.MULTILINE)
_MARKER = re.compile(r"^\s*>{5,9}\s*REPLACE\b", re.MULTILINE | re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class _Fence:
    """A fenced block: where it opened, its info string, its lines, whether it closed."""

    line: int
    fence: str
    """The opening fence (its character and length)."""
    info: str
    body: list[str]
    closed: bool
    end: int
    """The index of the line after the block."""


@dataclass(frozen=True, kw_only=True)
class Block:
    """Where a block that became calls lies in its text, and its calls.

    Lines ``start`` (its path line, when one precedes it) to ``end`` (exclusive), as
    ``read_text`` splits the text into lines.
    """

    start: int
    end: int
    calls: list[ToolCall]


@dataclass
class Reading:
    """The calls of a text, in reply order, and whether a block was cut by the token limit."""

    calls: list[ToolCall] = field(default_factory=list)
    cut: bool = False
    last_path: str | None = None
    id_prefix: str = "text"
    blocks: list[Block] = field(default_factory=list)
    quoted: Sequence[str] = ()

    def add(self, name: str, arguments: dict[str, object], error: str | None = None) -> None:
        """Add a call of ``name``; ``error``: the block could not be read as it (never run)."""
        self.calls.append(
            ToolCall(
                id=f"{self.id_prefix}_{len(self.calls)}",
                name=name,
                arguments=json.dumps(arguments, ensure_ascii=False),
                error=error,
            )
        )


def parse_text_reply(
    reply: AssistantReply, *, id_prefix: str, shown: Sequence[str] = (), quoted: Sequence[str] = ()
) -> AssistantReply:
    """``reply`` with the calls its text holds (see the module docstring).

    The text stays as the model wrote it (the history keeps it so). A reply cut by the token
    limit inside a block keeps ``finish_reason == "length"`` with its calls (none of them
    runs); one whose blocks are all complete is a reply with calls.

    Args:
        reply: A plain-text reply (one that carries calls already is returned as it is: the
            provider did not speak the text format).
        id_prefix: Calls are numbered ``{id_prefix}_{i}``.
        shown: The texts of the conversation the model read (``read_text``).
        quoted: The files and tool results among them (``read_text``).
    """
    if reply.tool_calls:
        return reply
    cut = reply.finish_reason == "length"
    reader = read_text(reply.content, cut=cut, id_prefix=id_prefix, shown=shown, quoted=quoted)
    finish = reply.finish_reason
    if reader.calls:
        finish = "length" if reader.cut else "tool_calls"
    return reply.model_copy(update={"tool_calls": reader.calls, "finish_reason": finish})


def read_text(
    text: str,
    *,
    cut: bool = False,
    id_prefix: str = "text",
    shown: Sequence[str] = (),
    quoted: Sequence[str] = (),
) -> Reading:
    """Every call in ``text``, in order, and where its blocks lie.

    ``cut``: the text was cut by the token limit.

    ``shown``: the texts the model read before writing ``text``. A file is shown between
    fences longer than its own fence lines (``messages.fence_for``), so the longest fence in
    them tells how long a fence line a file the model may copy holds. A block closed by a
    fence line no longer than that may have been closed by a line of the copied text, and
    what follows be the rest of that text: when calls follow it, or a later line could have
    closed its own call's block, that call and all after it become one error asking for a
    longer fence. Likewise ``~~~`` fences (files are not shown between them, so any such line
    in them counts), and SEARCH/REPLACE sections outside a fence once a shown text held their
    marker lines: a section ends at its ``>>>>>>> REPLACE`` line, which may be the file's.

    ``quoted``: the files and tool results the model read. A tool block that is word for word
    one of theirs is taken as a quotation of that text (a README's example), never run.
    """
    reader = Reading(id_prefix=id_prefix, quoted=quoted)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    nesting = [NESTING_SCANS * len(lines)]
    held = max((longest_fence(t) for t in shown), default=0) - 1
    tildes = max((len(run) for t in shown for run in _TILDE_RUN.findall(t)), default=0)
    markers = any(_MARKER.search(t) for t in shown)
    early: tuple[int, int, str, _Fence | None] | None = None  # the first that may end early
    i = 0
    while i < len(lines):
        start, taken = i, len(reader.calls)
        if _FENCE.match(lines[i]):
            fence = _read_fence(lines, i, nesting)
            _take_fence(reader, lines, fence, cut=cut)
            limit = held if fence.fence[0] == "`" else tildes
            short = len(fence.fence) <= limit
            if early is None and fence.closed and short and not _calls_read(reader, taken, fence):
                early = (taken, len(reader.calls), fence.fence, fence)
            i = fence.end
        elif _SEARCH.match(lines[i]):
            end = _section_end(lines, i)
            path = path_before(lines, i) or reader.last_path
            _take_sections(reader, path, lines[i:end], cut=cut and end == len(lines))
            if early is None and markers:
                early = (taken, len(reader.calls), ">>>>>>> REPLACE", None)
            i = end
        else:
            i += 1
            continue
        if len(reader.calls) > taken:
            named = path_index(lines, start)
            head = start if named is None else named
            reader.blocks.append(Block(start=head, end=i, calls=reader.calls[taken:]))
    if early is not None:
        first, end, closing, block = early
        later = block is not None and end > first
        if block is not None and later:
            later = any(_closes(x, block.fence) for x in lines[block.end :])
        if len(reader.calls) > end or later:  # calls after it, or its own cut short
            _drop_after(reader, first, end, closing, longer="`" * max(3, held + 1))
    return reader


def _calls_read(reader: Reading, first: int, fence: _Fence) -> bool:
    """Whether ``fence`` was a tool block read as calls, none broken.

    JSON holds no fence line, so a file's line cannot have closed it: one that did left its
    JSON broken, an error.
    """
    calls = reader.calls[first:]
    tool = fence_info(fence.info)[0] in (*TOOL_TAGS, "json")
    return tool and bool(calls) and all(c.error is None for c in calls)


def _drop_after(reader: Reading, first: int, end: int, closing: str, *, longer: str) -> None:
    """The calls from a block that ended at a ``closing`` line on as one error.

    Its own calls: ``first``..``end``.
    """
    own = [json.loads(c.arguments) for c in reader.calls[first:end]]
    path = next((a["path"] for a in own if isinstance(a.get("path"), str)), None)
    name = reader.calls[first].name if first < end else TOOL_BLOCK
    dropped = reader.calls[first:]
    del reader.calls[first:]
    reader.blocks = [b for b in reader.blocks if not any(c in dropped for c in b.calls)]
    reader.cut = False  # what was cut lies after the block: not used either
    what = f"the block for {path}" if path else "a block"
    reader.add(
        name,
        _path_args(path),
        f"{what} ended at a {closing} line, and files shown to you hold such lines in "
        "their text, so it may have ended inside a file: nothing was used from this block on, "
        f"nor any block after it. Send {'the whole file' if closing[0] == '>' else 'it'} again "
        f"between {longer} lines, as files are shown to you, then the blocks after it",
    )


def code_blocks(text: str) -> list[str]:
    """The bodies of ``text``'s closed fenced blocks, in order, whatever precedes them."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    nesting = [NESTING_SCANS * len(lines)]
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        if not _FENCE.match(lines[i]):
            i += 1
            continue
        fence = _read_fence(lines, i, nesting)
        if fence.closed:
            blocks.append("\n".join(fence.body) + "\n")
        i = fence.end
    return blocks


def _section_end(lines: list[str], start: int) -> int:
    """The line after the unfenced search/replace sections that begin at ``start``.

    A fence line inside a section is its text (lines copied from a Markdown file), so a
    section left open runs to the next SEARCH line or the end.
    """
    i = start
    while i < len(lines):
        if _REPLACE.match(lines[i]):
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            if i < len(lines) and _SEARCH.match(lines[i]):
                continue
            return i
        if i > start and _SEARCH.match(lines[i]):
            return i  # a section left open: the next one starts here
        i += 1
    return i


def _read_fence(lines: list[str], start: int, nesting: list[int]) -> _Fence:
    """The fenced block opening at ``start`` (the opener matched ``_FENCE``).

    It closes at a line of only the same fence character, at least as long as the opener:
    shorter fence lines are its text (CommonMark). In a block of SEARCH/REPLACE sections, a
    fence line inside a section is its text too (lines copied from a Markdown file). Otherwise
    fences as long opened inside it (a line of the fence character with an info string, as a
    Markdown file's own code blocks) are matched first, so a whole ``README.md`` with code
    blocks in it reads as one block; if that leaves the block open, the plain CommonMark
    reading (the first closing line closes it) is used. ``nesting`` holds the lines the
    reply's nested readings may still scan (``NESTING_SCANS``); once spent, only the plain one.
    """
    opener = _FENCE.match(lines[start])
    assert opener is not None
    indent, fence, info = opener["indent"], opener["fence"], opener["info"].strip()
    nested = None
    if _opens_sections(lines, start):
        nested = _sections_close(lines, start, fence)
    elif nesting[0] > 0:
        nested = _close(lines, start, fence, nesting=True)
        nesting[0] -= (len(lines) if nested is None else nested) - start
    end = nested if nested is not None else _close(lines, start, fence, nesting=False)
    body = lines[start + 1 : end if end is not None else len(lines)]
    if indent:
        body = [line[len(indent) :] if line.startswith(indent) else line for line in body]
    return _Fence(
        line=start,
        fence=fence,
        info=info,
        body=body,
        closed=end is not None,
        end=end + 1 if end is not None else len(lines),
    )


def _opens_sections(lines: list[str], start: int) -> bool:
    """Whether the block opening at ``start`` begins with a SEARCH line (after its path)."""
    i = start + 1
    if i < len(lines) and path_line(lines[i]):
        i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i < len(lines) and bool(_SEARCH.match(lines[i]))


def _sections_close(lines: list[str], start: int, fence: str) -> int | None:
    """The line closing a block of sections: a closing fence outside every section."""
    inside = False
    for i in range(start + 1, len(lines)):
        if _SEARCH.match(lines[i]):
            inside = True
        elif _REPLACE.match(lines[i]):
            inside = False
        elif not inside and _closes(lines[i], fence):
            return i
    return None


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a block opened with ``fence``."""
    match = _FENCE.match(line)
    return (
        match is not None
        and match["fence"][0] == fence[0]
        and len(match["fence"]) >= len(fence)
        and not match["info"].strip()
    )


def _close(lines: list[str], start: int, fence: str, *, nesting: bool) -> int | None:
    """The index of the line closing the block opened at ``start``, or None."""
    char, inner = fence[0], []
    for i in range(start + 1, len(lines)):
        match = _FENCE.match(lines[i])
        if match is None or match["fence"][0] != char or len(match["fence"]) < len(fence):
            continue  # text: a shorter fence line neither opens nor closes inside this block
        length, info = len(match["fence"]), match["info"].strip()
        if info:
            if nesting:
                inner.append(length)
        elif inner and length >= inner[-1]:
            inner.pop()
        elif length >= len(fence):
            return i
    return None


def _take_fence(reader: Reading, lines: list[str], fence: _Fence, *, cut: bool) -> None:
    """The calls of one fenced block (none for a fence that is not an edit or a call)."""
    language, info_path = fence_info(fence.info)
    path = info_path or path_before(lines, fence.line)
    body = fence.body
    if body and path_line(body[0]) and _holds_sections(body[1:]):
        path, body = path or path_line(body[0]), body[1:]  # the path written inside the fence
    if _holds_sections(body):
        # The markers bound each section: a fence left open after a whole one loses nothing.
        _take_sections(reader, path or reader.last_path, body, cut=cut and not fence.closed)
        return
    if language in TOOL_TAGS or (path is None and language == "json" and _is_call(body)):
        if not fence.closed:
            reader.cut |= cut
            reader.add(TOOL_BLOCK, {}, None if cut else unclosed(None))
            return
        _take_tool(reader, "\n".join(body))
        return
    if path is None:
        return  # not an edit: an example, a command for the person
    reader.last_path = path
    if not fence.closed:
        reader.cut |= cut
        reader.add(WHOLE_FILE, {"path": path}, None if cut else unclosed(path))
    elif not "".join(body).strip():
        reader.add(
            WHOLE_FILE,
            {"path": path},
            f"the block for {path} holds nothing, so nothing was written: a whole-file block "
            "holds the complete new text of the file",
        )
    elif problem := _not_a_file(body):
        reader.add(WHOLE_FILE, {"path": path}, f"the block for {path} {problem}")
    else:
        content = "\n".join(body).rstrip("\n") + "\n"
        reader.add(WHOLE_FILE, {"path": path, "content": content})


PLACEHOLDERS = frozenset(
    {
        "(the complete new text of the file)",
        "(lines copied exactly from the file)",
        "(what they become)",
    }
)
"""The instructions' stand-ins for text (``text_format.BLOCKS``): a small model copies them."""


def _not_a_file(body: list[str]) -> str:
    """Why a whole-file block's text is not a file's, or "" (it is written)."""
    copied = next((line.strip() for line in body if line.strip() in PLACEHOLDERS), None)
    if copied is not None:
        return (
            f"holds the instructions' stand-in {copied}, not the file's text: nothing was "
            "written. Write the real text"
        )
    first = next((line for line in body if line.strip()), "")
    if (_DIVIDER.match(first) or _REPLACE.match(first)) and any(map(_REPLACE.match, body)):
        return (
            "is a SEARCH/REPLACE section without its <<<<<<< SEARCH line: nothing was written. "
            "A section is <<<<<<< SEARCH, the lines to find, =======, what they become, "
            ">>>>>>> REPLACE"
        )
    return ""


def _holds_sections(body: list[str]) -> bool:
    """Whether a block is SEARCH/REPLACE sections: its first line that is not blank is a marker.

    A whole file whose text holds marker lines further down (a file about this format) is a
    file: its lines are never read as sections of an edit.
    """
    first = next((line for line in body if line.strip()), "")
    if _SEARCH.match(first):
        return True
    marker = _DIVIDER.match(first) or _REPLACE.match(first)
    return bool(marker) and any(_SEARCH.match(line) for line in body)


def unclosed(path: str | None) -> str:
    """The error of a block that was never closed (the reply ended inside it)."""
    what = f"the block for {path}" if path else "the tool block"
    return (
        f"{what} was not closed (no ``` line after it), so it was not used and nothing was "
        "written; send it again, closed"
    )


def _path_args(path: str | None) -> dict[str, object]:
    return {"path": path} if path else {}


def _take_sections(reader: Reading, path: str | None, body: list[str], *, cut: bool) -> None:
    """One ``edit_file`` call per SEARCH/REPLACE section of ``body`` (errors as calls)."""
    if path is not None:
        reader.last_path = path
    for old, new, problem in _sections(body):
        if problem is not None and cut:
            reader.cut = True
            reader.add(SEARCH_REPLACE, _path_args(path))
        elif problem is not None:
            reader.add(SEARCH_REPLACE, _path_args(path), problem)
        elif path is None:
            reader.add(
                SEARCH_REPLACE,
                {"old_string": old, "new_string": new},
                "this SEARCH/REPLACE block names no file, so nothing was changed: write the "
                "file's path alone on the line before the block",
            )
        else:
            reader.add(SEARCH_REPLACE, {"path": path, **_replacement(old, new)})


def _replacement(old: str, new: str) -> dict[str, object]:
    """``edit_file``'s arguments for a section: whole lines, as Aider's blocks match them.

    Each side ends with its line break, so ``x = 1`` does not match inside ``x = 10`` and an
    empty REPLACE deletes the lines; an empty SEARCH stays empty (the tool's error says to
    write the whole file instead).
    """
    if not old:
        return {"old_string": old, "new_string": new}
    return {"old_string": old + "\n", "new_string": new + "\n" if new else ""}


def _sections(body: list[str]) -> Iterator[tuple[str, str, str | None]]:
    """``(search, replace, problem)`` per section; ``problem`` names a malformed one."""
    i = 0
    while i < len(body):
        if not _SEARCH.match(body[i]):
            if _DIVIDER.match(body[i]) or _REPLACE.match(body[i]):
                yield "", "", "a ======= or >>>>>>> REPLACE line came before its <<<<<<< SEARCH"
                return
            i += 1
            continue
        divider = _find(body, i + 1, _DIVIDER, stop=_SEARCH)
        if divider is None:
            yield "", "", "a <<<<<<< SEARCH section has no ======= line after its text"
            return
        end = _find(body, divider + 1, _REPLACE, stop=_SEARCH)
        if end is None:
            yield "", "", "a SEARCH section has no >>>>>>> REPLACE line after its replacement"
            return
        yield "\n".join(body[i + 1 : divider]), "\n".join(body[divider + 1 : end]), None
        i = end + 1


def _find(
    lines: list[str], start: int, wanted: re.Pattern[str], *, stop: re.Pattern[str]
) -> int | None:
    """The first line from ``start`` matching ``wanted``; None when ``stop`` matches first."""
    for i in range(start, len(lines)):
        if wanted.match(lines[i]):
            return i
        if stop.match(lines[i]):
            return None
    return None


def _take_tool(reader: Reading, text: str) -> None:
    """The calls of a closed tool block: one JSON object per call."""
    decoder = json.JSONDecoder()
    position, found = 0, False
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            break
        try:
            start = position
            value, position = decoder.raw_decode(text, position)
        except ValueError as exc:
            reader.add(TOOL_BLOCK, {}, _tool_error(f"it is not valid JSON ({exc})"))
            return
        call = _call_of(value)
        if position - start >= QUOTED_CHARS and any(
            text[start:position] in q for q in reader.quoted
        ):
            call = QUOTED  # each call of the block, as a call may be added to a quoted one
        if isinstance(call, str):
            reader.add(TOOL_BLOCK, {}, _tool_error(call))
            return
        reader.add(call[0], call[1])
        found = True
    if not found:
        reader.add(TOOL_BLOCK, {}, _tool_error("it is empty"))


QUOTED_CHARS = 20
"""A call this long that a file or tool result holds word for word is a quotation."""
QUOTED = "it is word for word a block of a file or tool result you read: a quotation, not a call"


def _call_of(value: object) -> tuple[str, dict[str, object]] | str:
    """``(name, arguments)`` of one JSON call, or what is wrong with it."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return 'it has no "name"'
    arguments = value.get("arguments", value.get("parameters", {}))
    if not isinstance(arguments, dict):
        return '"arguments" is not a JSON object'
    return value["name"], arguments


def _tool_error(problem: str) -> str:
    return (
        f"the tool block was not run: {problem}. A tool block holds one JSON object: "
        '{"name": "<tool>", "arguments": {...}}'
    )


def _is_call(body: list[str]) -> bool:
    """Whether a ``json`` block's text is a call (else it is an example, not a call)."""
    try:
        value = json.loads("\n".join(body))
    except ValueError:
        return False
    return isinstance(value, dict) and isinstance(value.get("name"), str) and "arguments" in value
