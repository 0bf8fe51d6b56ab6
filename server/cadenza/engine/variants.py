"""Loop variants: how a session asks its model to act, to edit and to end.

Each knob was measured on ``benchmarks/agent_tasks`` with the small local models
(docs/lab/local-model-log.md has the tables; docs/local-model.md what each knob does).
``LOCAL_LOOP`` holds the winners and is the default of the ``local`` provider; other providers
use ``API_LOOP``. ``[loop]`` in ``cadenza.toml`` overrides either.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from cadenza.config import LOCAL_CANDIDATES
from cadenza.types import Ending

# Ending: ``empty``: a reply with no tool call (the envelope allows an empty list).
# ``complete``: every reply must hold at least one call (``tool_choice: required``, the
# envelope's ``minItems: 1``) and finishing is itself the ``complete`` control call; the
# structural rule stays: the turn continues iff there are tool calls.

Repeats = Literal["observe", "run"]
"""An identical repeated call: ``observe`` answers it with a note saying what was repeated and
what to do instead (the stuck detector); ``run`` runs it again."""

EditStyle = Literal["all", "old_string", "write_file", "line_range", "text"]
"""Which edit tool is offered: ``edit_file`` (exact ``old_string`` replacement),
``write_file`` (the whole new text), ``replace_lines`` (a 1-based line range; ``read_file``
then numbers its lines), ``all`` (``edit_file`` and ``write_file``), or ``text``: the text
edit format, where the reply is plain text and code comes in fenced blocks, a whole file or
SEARCH/REPLACE sections, read into ``write_file`` and ``edit_file`` calls
(``providers.text_reply``); files are shown fenced, as the model writes them back."""

Checks = Literal["off", "rename", "acted", "all"]
"""The done checks (``engine.checks``) run when the model claims the task done: ``rename``
(no use of a renamed name left in the workspace), ``all`` (that, and: something changed in a
movement that can edit, the language servers' errors, the tests), ``acted`` (those of ``all``,
but only for what the movement run did: a run that tried no edit and ran no command is
accepted as it is), ``off``."""

EDIT_TOOLS: dict[EditStyle, tuple[str, ...]] = {
    "old_string": ("edit_file",),
    "write_file": ("write_file",),
    "line_range": ("replace_lines",),
    "text": ("edit_file", "write_file"),
}
ALL_EDIT_TOOLS = frozenset({"edit_file", "write_file", "replace_lines"})
CORE_TOOLS = ("read_file", "list_files", "search", "create_file", "run_command")
"""The compact tool set: reading, searching, creating and running a command (through the
permission gate, as always: a task is verified by running its tests), plus the edit style's
tool."""
BUILTIN_TOOLS = frozenset(
    {
        *CORE_TOOLS,
        *ALL_EDIT_TOOLS,
        "delete_file",
        "rename_file",
        "run_command",
        "browse",
        "browse_interactive",
        "ask_user",
    }
)
"""Cadenza's own workspace tools (``tools.registry.default_tools``; a test keeps the two
equal): the variant selects among them; other tools (MCP) are always offered."""
INTEL_TOOLS = ("find_references", "go_to_definition", "rename_symbol", "diagnostics")
"""The code-intelligence tools (``tools.registry.intel_tools``): in a session's registry only
when a language server can answer them; the variant says which of them it offers."""


@dataclass(frozen=True, kw_only=True)
class LoopSettings:
    """The loop variant of a session.

    Attributes:
        ending: See ``Ending``.
        prime: Put the files the task names (and the editor's open document) into the first
            user message, as ``read_file`` would show them, so no read is needed first.
        repeats: See ``Repeats``.
        stuck_limit: Identical repeats, each answered with a note, after which the movement
            ends with ``needs_user_input`` instead of spending its steps (0: never).
        edit: See ``EditStyle``.
        core_tools: Offer only ``CORE_TOOLS`` plus the edit style's tool (and the control
            tools); False offers the whole registry.
        repair: Exactly-once repair of a contract miss (a reply cut by the token limit): the
            request is made once more, with a note, before the miss reaches the history.
        edit_echo: A successful edit's result also shows the changed lines as the file now
            reads them and says how to finish (as Claude Code's edit result shows a snippet).
        syntax_guard: An edit that makes a file that parsed stop parsing is refused
            (``tools.syntax``; SWE-agent's edit linting).
        done_gate: ``complete(done)`` right after a failed call is refused once per movement
            (``engine.gate``).
        checks: See ``Checks``.
        rules: The project's rule files (AGENTS.md and the like) go into the system prompt
            (``engine.rules``).
        intel_tools: Which of ``INTEL_TOOLS`` are offered when the session has them.
        edit_diagnostics: An edit's result carries the errors it introduced
            (``engine.edit_checks``), when a language server serves the file.
        test_feedback: The workspace's tests run after each step that changed files, when a
            test command is known and the person allows it (``engine.test_feedback``); the
            model reads the failing tests and their assertions first, or that all pass.
        reply_budget: Each request's completion bound is sized from the files in play
            (``engine.budget.reply_tokens``) unless ``maxTokens`` is configured, and a reply
            that keeps repeating itself is stopped while it streams (``engine.reply_watch``).
        plan: Offer ``update_plan`` (``engine.plan``), the agent's to-do list shown in the
            editor. Off for the small local models: one more tool schema costs them more
            than the list gives.
        candidates: After the tests failed on the session's current files, ask for this many
            replies at once (different seeds), try each one's edits in a scratch copy of the
            workspace against the tests, and keep the one that passes most
            (``engine.candidates``); 0 or 1: one reply, as always.
    """

    ending: Ending = "empty"
    prime: bool = False
    repeats: Repeats = "observe"
    stuck_limit: int = 0
    edit: EditStyle = "all"
    core_tools: bool = False
    repair: bool = False
    edit_echo: bool = False
    syntax_guard: bool = False
    done_gate: bool = False
    checks: Checks = "off"
    rules: bool = True
    intel_tools: tuple[str, ...] = INTEL_TOOLS
    edit_diagnostics: bool = True
    test_feedback: bool = False
    reply_budget: bool = False
    plan: bool = True
    candidates: int = 0

    def __post_init__(self) -> None:
        # ``[loop] intelTools`` arrives as a list; a tuple keeps the settings hashable.
        object.__setattr__(self, "intel_tools", tuple(self.intel_tools))

    def replace(self, **changes: Any) -> LoopSettings:
        """A copy with ``changes`` (field names as above)."""
        return dataclasses.replace(self, **changes)

    def offers(self, name: str) -> bool:
        """Whether the workspace tool ``name`` is offered when a movement names no tools."""
        if name in ALL_EDIT_TOOLS:
            return self.edits(name)
        if name in INTEL_TOOLS:
            return name in self.intel_tools
        return not self.core_tools or name in CORE_TOOLS

    def edits(self, name: str) -> bool:
        """Whether the edit tool ``name`` is this variant's edit style."""
        if name == "replace_lines":  # it needs numbered reads: never among "all"
            return self.edit == "line_range"
        return self.edit == "all" or name in EDIT_TOOLS[self.edit]

    def movement_tools(self, listed: tuple[str, ...] | None, names: list[str]) -> list[str]:
        """The tools (of the registry's ``names``, in order) a movement offers.

        ``listed`` None (every tool): the variant's selection, plus every tool that is not
        Cadenza's own (MCP tools). A movement that lists its tools keeps them (``core_tools``
        does not remove what a workflow asks for), except that its edit tools become the
        variant's edit style, so an ``implement`` movement still has one.
        """
        if listed is None:
            own = BUILTIN_TOOLS | frozenset(INTEL_TOOLS)
            return [n for n in names if self.offers(n) or n not in own]
        wanted = set(listed)
        if wanted & ALL_EDIT_TOOLS:
            wanted = {n for n in wanted if n not in ALL_EDIT_TOOLS}
            wanted |= {n for n in ALL_EDIT_TOOLS if self.edits(n)}
        return [n for n in names if n in wanted]


API_LOOP = LoopSettings(checks="acted", stuck_limit=3)
"""Hosted models: a reply without calls ends the turn; every tool; the project's rules, the
code-intelligence tools, the errors an edit introduced and the ``update_plan`` to-do list.

On because they make "done" true or bound the spending, whatever the model:

- ``checks = "acted"``: a claim of done after edits or commands is checked (no renamed name
  left, an edit succeeded when edits were tried, the language servers' errors, the
  workspace's tests) and a failure goes back to the model. A turn that tried no edit and ran
  nothing (a question, an explanation) is accepted as it is, at no extra request: a hosted
  model that claims done without trying anything is not questioned (``all``, the small
  models' level, questions it once).
- ``stuck_limit = 3``: a repeated call is answered with a note, not run, so a model that keeps
  repeating it would spend every step; after 3 the movement stops and asks the person.

Off, as crutches for small models that a hosted model does not need:

- ``done_gate``: its safe half (every edit failed, yet done) is the ``changed`` check.
- ``syntax_guard``: a change made in several edits passes through text that does not parse;
  the edit's own errors are shown (``edit_diagnostics``) and the done checks catch what is left.
- ``test_feedback``: the done check runs the tests once, at the claim; after every change it
  would run them on each step of a longer change, and pass the turn as done on its first
  edit-only step that leaves them green.
- ``prime``, ``core_tools``, the text edit format, ``repair``, ``edit_echo``,
  ``reply_budget``, ``candidates``: ways to carry a model of 0.5B to 1.5B parameters.

``[loop]`` turns each on or off."""

LOCAL_LOOP = LoopSettings(
    ending="empty",
    prime=True,
    repeats="observe",
    stuck_limit=3,
    edit="text",
    core_tools=True,
    repair=True,
    edit_echo=True,
    syntax_guard=True,
    done_gate=True,
    checks="all",
    intel_tools=("rename_symbol",),
    test_feedback=True,
    reply_budget=True,
    plan=False,
    candidates=LOCAL_CANDIDATES,
)
"""The embedded small models' default, chosen by measurement (docs/local-model.md): code as text
in fenced blocks, not JSON strings (the 1.5B model's tool-call edits shrank to one-liners; on
HumanEval tasks the text format passed where tool calls did not), a reply without blocks ends
the turn, and the tests judge each change."""


def finish_hint(ending: Ending) -> str:
    """How the model ends its turn under ``ending`` (for notes and results)."""
    if ending == "complete":
        return 'call complete with status "done" and a one-sentence summary'
    return "reply with an empty tool_calls list and a one-sentence summary"
