"""The text edit format's reply as the person reads it: the prose, not the blocks.

In this format the model's reply holds its edits (a file's whole text, SEARCH/REPLACE
sections) and its tool calls (JSON) among its words; the history keeps them, since the model
reads its own replies. What the person reads as the turn's answer is the words: each block
that became calls is replaced by the files it edits (``(edited util.py)``), or dropped when it
edits nothing (a tool call, a block that could not be read), and the heads of results the
model copied from its history (``[block for util.py: result]``) are dropped. Blocks are found
by ``text_reply.read_text``, the same reading that made the calls.
"""

from __future__ import annotations

import json

from cadenza.messages import ToolCall
from cadenza.providers.text_format import RESULT_HEAD
from cadenza.providers.text_reply import SEARCH_REPLACE, WHOLE_FILE, read_text

EDITS = frozenset({SEARCH_REPLACE, WHOLE_FILE})


def person_text(text: str) -> str:
    """``text`` as the person reads it (see the module docstring)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[str] = []
    at = 0
    for block in read_text(text).blocks:
        kept += lines[at : block.start]
        files = _edited(block.calls)
        said = f"(edited {', '.join(files)})" if files else ""
        if said and said not in kept[-2:]:  # two blocks in a row for one file: said once
            kept.append(said)
        at = block.end
    kept += lines[at:]
    out: list[str] = []
    for line in kept:
        if RESULT_HEAD.match(line.strip()):
            continue
        if line.strip() or (out and out[-1]):  # one blank line between paragraphs at most
            out.append(line.rstrip())
    return "\n".join(out).strip()


def _edited(calls: list[ToolCall]) -> list[str]:
    """The files a block's edit calls name, in order (none for a call that could not be read)."""
    files: list[str] = []
    for call in calls:
        if call.name not in EDITS or call.error is not None:
            continue
        path = json.loads(call.arguments).get("path")
        if isinstance(path, str) and path not in files:
            files.append(path)
    return files
