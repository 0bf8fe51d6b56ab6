"""Permission rules: ``TOOL`` or ``TOOL:PATTERN``, e.g. ``run_command:pytest *``.

A rule names a tool, and for ``run_command`` optionally a command pattern. The pattern is
split into words as a POSIX shell would (``shlex``), and a command matches when its words
begin with the pattern's words, exactly: ``pytest *`` matches ``pytest``, ``pytest -q`` and
``pytest tests/a.py`` (and ``python3 -m pytest -q``: a module run by a Python on the PATH
counts as the module; a test runner's module, which runs the workspace's code anyway, also by
the workspace's own Python, ``.venv/bin/python -m pytest``, or a Python given by a path in a
folder of the PATH: the forms Cadenza's own test runs take with a virtual environment), never
``pytestx``, ``./pytest`` or ``/tmp/x/python -m pytest``. ``*`` may only
be the last word, meaning "any further arguments"; a pattern without it matches that exact
command only. Nothing is ever matched as a substring, nor as a file pattern: a rule's words may
not hold ``*``, ``?`` or ``[`` (a rule that does is refused with the reason).

An allow rule never matches a command line holding shell syntax that could run something
else: ``;``, ``&``, ``|``, backticks, ``$`` (``$(…)``, variables), ``<``, ``>``, parentheses,
newlines or other control characters (``pytest; rm -rf ~`` is not ``pytest *``), nor one with
a word the shell expands into file names (``tar cf x.tar *``: a repository can name a file
like an option). Such a command is asked about. A deny rule is matched the other way round:
against every simple command the line holds (split at that syntax; the program also by its
base name), so ``make && rm -rf build`` is denied by ``run_command:rm *``. A deny rule is a
guard against a mistake, not a sandbox: a command can always be spelled another way.

Deny wins over allow. The ground floor: both the server's permission gate and the headless
client (``cadenza run --allow``) use it.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from cadenza.command_kinds import (
    installs_packages,
    is_test_runner,
    offers_pattern,
    python_module,
    runs_its_arguments,
)

PATTERN_ARGUMENTS: Mapping[str, str] = {"run_command": "command"}
"""The tools whose rules may carry a pattern, and the argument it is matched against."""

ANY_ARGUMENTS = "*"

SHELL_SYNTAX = re.compile(r"[;&|`$<>()\x00-\x08\x0a-\x1f\x7f]")
"""Characters that make a command line more than one program with its arguments (a tab is
whitespace; any other control character, a newline above all, is syntax)."""

_SPLIT_AT = re.compile(r"[;&|`<>()\n\r]|\$\(")

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")

GLOB = re.compile(r"[*?\[]")
"""Characters a shell expands into file names (``*``, ``?``, ``[``)."""

SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_:-]*")
"""A word taken as a subcommand (``run``, ``test``, ``lint:fix``), not a file or an option."""

Decision = Literal["allow", "deny"]


class RuleError(ValueError):
    """A rule that cannot be read; the message says why and how to write it."""


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One rule: a tool, and for ``run_command`` the command's leading words.

    Attributes:
        tool: The tool's name.
        words: The pattern's words before any ``*`` (None: every call of the tool).
        any_arguments: The pattern ended with ``*``: further arguments are allowed.
    """

    tool: str
    words: tuple[str, ...] | None = None
    any_arguments: bool = False

    @property
    def text(self) -> str:
        """The rule as written in settings, e.g. ``run_command:pytest *``."""
        if self.words is None:
            return self.tool
        pattern = shlex.join(self.words)
        tail = f" {ANY_ARGUMENTS}" if self.any_arguments else ""
        return f"{self.tool}:{pattern}{tail}"

    @property
    def shown(self) -> str:
        """The pattern for a person, ``*`` as ``…`` (``pytest …``); the tool when none."""
        if self.words is None:
            return self.tool
        pattern = shlex.join(self.words)
        return f"{pattern} …" if self.any_arguments else pattern

    def matches_words(self, words: tuple[str, ...]) -> bool:
        """Whether a simple command's ``words`` fit the pattern (exactly, word by word).

        ``python -m MODULE …`` (a Python found on the PATH, not a path) fits as ``MODULE …``:
        ``pytest *`` covers ``python3 -m pytest -q``. A test runner's module fits so also by a
        relative path (``.venv/bin/python -m pytest``: the workspace's own environment, whose
        code the tests run anyway) or by a path in a folder of the PATH (an activated virtual
        environment); another module by a path does not (``./python -m json.tool`` may be any
        program the workspace holds).
        """
        if self.words is None:
            return True
        if python_module(words) and self._fits(words[2:]):
            program = words[0]
            if "/" not in program or (is_test_runner(words) and _on_path_or_relative(program)):
                return True
        return self._fits(words)

    def _fits(self, words: tuple[str, ...]) -> bool:
        if self.any_arguments:
            return words[: len(self.words or ())] == self.words
        return words == self.words


def _on_path_or_relative(program: str) -> bool:
    """Whether a program given by a path stays below its folder, or lies in one of the PATH.

    No ``..`` or ``.`` part and no ``~`` (the shell expands it): the path is judged as
    written, not as symbolic links would lead it.
    """
    parts = program.split("/")
    if program.startswith("~") or parts[0] == ".." or {".", ".."} & set(parts[1:]):
        return False
    if not os.path.isabs(program):
        return True
    folders = {os.path.normpath(f) for f in os.environ.get("PATH", "").split(os.pathsep) if f}
    return os.path.dirname(program) in folders


def parse_rule(text: str) -> Rule:
    """Read ``TOOL`` or ``TOOL:PATTERN``.

    Raises:
        RuleError: Not a tool name; a pattern on a tool that takes none; an empty pattern,
            one that does not parse (an open quote), ``*`` before the last word, a pattern of
            only ``*``, a word holding ``*``, ``?`` or ``[``, or shell syntax in it.
    """
    tool, sep, pattern = text.strip().partition(":")
    tool = tool.strip()
    if not TOOL_NAME.fullmatch(tool):
        raise RuleError(f"{text!r}: a rule is TOOL or TOOL:PATTERN, e.g. 'run_command:pytest *'")
    if not sep:
        return Rule(tool=tool)
    if tool not in PATTERN_ARGUMENTS:
        takes = ", ".join(sorted(PATTERN_ARGUMENTS))
        raise RuleError(f"{text!r}: only {takes} rules take a pattern; write {tool!r} alone")
    if SHELL_SYNTAX.search(pattern):
        raise RuleError(f"{text!r}: a pattern is a program and its arguments, no shell syntax")
    try:
        words = tuple(shlex.split(pattern))
    except ValueError as exc:
        raise RuleError(f"{text!r}: {exc}") from None
    if not words:
        raise RuleError(f"{text!r}: the pattern is empty; write {tool!r} for every call")
    any_arguments = words[-1] == ANY_ARGUMENTS
    leading = words[:-1] if any_arguments else words
    _check_words(text, leading)
    return Rule(tool=tool, words=leading, any_arguments=any_arguments)


def _check_words(text: str, leading: tuple[str, ...]) -> None:
    """Refuse a pattern's leading words (before any last ``*``) that cannot be matched as meant.

    Raises:
        RuleError: No program before ``*``; ``*`` before the last word; a glob character.
    """
    if not leading:
        raise RuleError(f"{text!r}: name the program before '*', e.g. 'run_command:pytest *'")
    if ANY_ARGUMENTS in leading:
        raise RuleError(f"{text!r}: '*' may only be the last word (any further arguments)")
    for word in leading:
        if GLOB.search(word):
            raise RuleError(
                f"{text!r}: {word!r} is no file pattern: a pattern's words are matched as "
                "written, so they may not hold *, ? or [ (only a lone '*' at the end, meaning "
                "any further arguments)"
            )


def command_words(command: str) -> tuple[str, ...] | None:
    """The words of a command line that is one program with its arguments, else None.

    None for shell syntax (``SHELL_SYNTAX``), an unbalanced quote, or nothing to run.
    """
    if SHELL_SYNTAX.search(command):
        return None
    try:
        words = tuple(shlex.split(command))
    except ValueError:
        return None
    return words or None


def expands_file_names(command: str) -> bool:
    """Whether a shell would expand a word of ``command`` into file names.

    That is ``*``, ``?`` or ``[`` outside quotes (``pytest *``, not ``pytest '*'``). Such a
    word becomes whatever the workspace's files are called, and a repository can name a file
    like an option (``--checkpoint-action=exec=sh x``): an allow rule never fits it.
    """
    quote: str | None = None
    escaped = False
    for char in command:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote is not None:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "*?[":
            return True
    return False


def simple_commands(command: str) -> list[tuple[str, ...]]:
    """Every simple command of a command line, for deny rules (over- rather than under-split).

    The line is cut at shell syntax (``;``, ``&``, ``|``, backticks, ``$(``, redirections,
    parentheses, newlines); each piece is split as a shell would, or at whitespace when it
    does not parse.
    """
    found = []
    for piece in _SPLIT_AT.split(command):
        try:
            words = tuple(shlex.split(piece))
        except ValueError:
            words = tuple(piece.split())
        if words:
            found.append(words)
    return found


def _argument(rule: Rule, arguments: Mapping[str, object]) -> str | None:
    value = arguments.get(PATTERN_ARGUMENTS.get(rule.tool, ""))
    return value if isinstance(value, str) else None


def allows(rule: Rule, tool: str, arguments: Mapping[str, object]) -> bool:
    """Whether allow rule ``rule`` covers a call of ``tool`` with ``arguments``."""
    if rule.tool != tool:
        return False
    if rule.words is None:
        return True
    command = _argument(rule, arguments)
    words = command_words(command) if command is not None else None
    if words is None or expands_file_names(command or ""):
        return False
    return rule.matches_words(words)


def denies(rule: Rule, tool: str, arguments: Mapping[str, object]) -> bool:
    """Whether deny rule ``rule`` covers the call: any simple command of it fits."""
    if rule.tool != tool:
        return False
    if rule.words is None:
        return True
    command = _argument(rule, arguments)
    if command is None:
        return False
    for words in simple_commands(command):
        if rule.matches_words(words):
            return True
        base = (os.path.basename(words[0]), *words[1:])
        if rule.matches_words(base):
            return True
    return False


@dataclass(frozen=True, kw_only=True)
class RuleSet:
    """Allow and deny rules; deny wins.

    Attributes:
        allow: Calls these cover run without asking.
        deny: Calls these cover are refused without asking, even when an allow rule fits.
    """

    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()

    @classmethod
    def parse(cls, *, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> RuleSet:
        """Read rule texts.

        Raises:
            RuleError: A rule cannot be read.
        """
        return cls(
            allow=tuple(parse_rule(text) for text in allow),
            deny=tuple(parse_rule(text) for text in deny),
        )

    def __or__(self, other: RuleSet) -> RuleSet:
        return RuleSet(allow=self.allow + other.allow, deny=self.deny + other.deny)

    def decide(self, tool: str, arguments: Mapping[str, object]) -> Decision | None:
        """``deny``, ``allow`` or None (no rule says: ask)."""
        found = self.deciding(tool, arguments)
        return None if found is None else found[0]

    def deciding(self, tool: str, arguments: Mapping[str, object]) -> tuple[Decision, Rule] | None:
        """The decision and the rule that made it (a deny rule first), or None: ask."""
        denied = next((rule for rule in self.deny if denies(rule, tool, arguments)), None)
        if denied is not None:
            return "deny", denied
        allowed = next((rule for rule in self.allow if allows(rule, tool, arguments)), None)
        return None if allowed is None else ("allow", allowed)


def suggest_rule(tool: str, arguments: Mapping[str, object]) -> Rule | None:
    """The rule an "always allow … in this workspace" answer remembers, or None.

    A test runner, build tool or linter of the allow-list (``command_kinds.offers_pattern``):
    the program, its leading subcommand when there is one (``npm run``, ``cargo test``;
    ``python -m MODULE``), then ``*``: ``pytest -q tests`` gives ``pytest *``; only the exact
    command after an option before any subcommand (``make -f FILE``; a test runner's options
    excepted) or for a command that installs packages (``npm install lodash``). Any other
    command: only the exact command (``git status``, ``tar -xf a.tar``). None for a tool that
    takes no pattern, a command with shell syntax or words a shell expands into file names,
    an environment assignment first, or a program that runs whatever its arguments say
    (``bash``, ``python3.12 script.py``, ``timeout``, ``uv run``...: ``command_kinds``).
    """
    argument = PATTERN_ARGUMENTS.get(tool)
    command = arguments.get(argument) if argument else None
    if not isinstance(command, str) or expands_file_names(command):
        return None
    words = command_words(command)
    if not words or "=" in words[0] or runs_its_arguments(words):
        return None
    leading, any_arguments = _suggested_words(words)
    rule = Rule(tool=tool, words=leading, any_arguments=any_arguments)
    try:  # remembered as text and read back: it must read as the same rule
        same = parse_rule(rule.text) == rule
    except RuleError:
        same = False
    return rule if same else None


def _suggested_words(words: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """``(leading words, any further arguments)`` of the suggested rule (see ``suggest_rule``)."""
    if installs_packages(words) or not offers_pattern(words):
        return words, False
    lead = 3 if python_module(words) else 1  # python -m MODULE is the program
    program, rest = words[:lead], words[lead:]
    if rest and SUBCOMMAND.fullmatch(rest[0]):
        return program + rest[:1], True
    if rest and rest[0].startswith("-"):
        return (program, True) if is_test_runner(words) else (words, False)
    return program, True
