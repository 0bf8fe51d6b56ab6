"""The conversation's start: the system prompt, the workspace, the task, the files it names.

The system prompt holds the prompt contract (tools, the envelope, how to end) and nothing about the
workspace, so every session of the same settings starts with the same tokens: a model server's
prompt cache (llama-server's, restored across processes by ``providers.prompt_cache``; a hosted
provider's prefix cache) then reuses them instead of evaluating them again. Where the workspace
is and what it holds comes next, in a message of its own. The files come when the loop variant
primes them (``LoopSettings.prime``), so a small model's first call can be the edit.
"""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.overview import workspace_overview
from cadenza.engine.prime import priming_message
from cadenza.engine.variants import LoopSettings
from cadenza.messages import Message, SystemMessage, UserMessage
from cadenza.tools.host import ToolHost
from cadenza.types import Ending

DEFAULT_SYSTEM_PROMPT = """\
You are Cadenza, a coding agent working inside the person's editor on their workspace.
You act only through tool calls.

Rules:
1. To act, call a tool. Never describe or announce an action you plan to take without making its
   tool call in the same reply.
2. {finish_rule}
3. Paths are relative to the workspace root. Read a file before you edit it (a file shown in
   the conversation is read). edit_file needs old_string copied exactly from the file: the
   few lines that change, as they are now; new_string: those lines as they must become.
4. Never repeat a call whose result you already have.
"""

TEXT_SYSTEM_PROMPT = """\
You are Cadenza, a coding agent working on the person's workspace. Paths are relative to the \
workspace root. Read a file before you change it (a file shown in the conversation is read).
"""
"""The system prompt under the text edit format: how to write blocks and tools, and how to
finish, follow it from the provider (``providers.text_format``), which knows the tools of
each request."""

WORKSPACE_MESSAGE = """\
The workspace is at {root}.

Files in the workspace:
{overview}
"""


FINISH_RULES: dict[Ending, str] = {
    "empty": (
        "An empty tool_calls list ends your turn at once. Send it only when the task is done (or\n"
        "   cannot be done), with a one-sentence summary in content."
    ),
    "complete": (
        "Every reply holds a tool call. When the task is done (or cannot be done), call\n"
        '   complete with status "done" (or "failed") and a one-sentence summary: that call\n'
        "   ends your turn."
    ),
}


def default_template(loop: LoopSettings) -> str:
    """The system prompt template of ``loop`` when the settings name none."""
    return TEXT_SYSTEM_PROMPT if loop.edit == "text" else DEFAULT_SYSTEM_PROMPT


def system_prompt(
    root: Path, template: str = DEFAULT_SYSTEM_PROMPT, ending: Ending = "empty"
) -> str:
    """The system prompt for a session on ``root``.

    Placeholders: ``{root}``, ``{overview}`` and ``{finish_rule}`` (how a turn ends under
    ``ending``); a custom template may use any of them (the default uses only the last, so it
    is the same for every workspace).
    """
    overview = workspace_overview(root) if "{overview}" in template else ""
    return template.format(root=root, overview=overview, finish_rule=FINISH_RULES[ending])


def opening_messages(
    root: Path,
    task: str,
    template: str,
    loop: LoopSettings,
    host: ToolHost,
    named: list[str],
    rules: str = "",
    shown: dict[Path, str] | None = None,
) -> list[Message]:
    """A new session's first messages (a restored one has its history instead).

    The system prompt from ``template`` with the project's ``rules`` section after it
    (``engine.rules``), the workspace (unless the template lists it), the task, then under
    ``loop.prime`` the files ``named`` (``prime.task_files``) as they are now in the editor
    ``host``; the files it shows whole are added to ``shown``.
    """
    system = system_prompt(root, template, loop.ending)
    if rules:
        system = f"{system.rstrip()}\n\n{rules}\n"
    messages: list[Message] = [SystemMessage(content=system)]
    if "{overview}" not in template:  # a custom template that lists the files says it itself
        overview = WORKSPACE_MESSAGE.format(root=root, overview=workspace_overview(root))
        messages.append(UserMessage(content=overview, tag="workspace"))
    messages.append(UserMessage(content=task, tag="task"))
    if loop.prime:
        primed = priming_message(
            root,
            named,
            host,
            numbered=loop.edit == "line_range",
            fenced=loop.edit == "text",
            shown=shown,
        )
        if primed is not None:
            messages.append(primed)
    return messages
