"""A focused candidate: the functions a failing test ran, shown alone with its failure.

A bug fix asked as "the tests fail, fix the bug" gives a small model whole files and a
failure, and it writes the files back as they were. Shown only the function the failing
assertion calls (``where 1.5 = average_word_length('a bb ccc')``) beside that assertion, and
asked for the corrected function, the 1.5B model fixed it in 5 of 8 samples, against 2 of 8
shown the whole files (the same failure, temperature 0.7). One candidate lane asks that way
(``engine.candidates``); the tests judge its reply as any other's.

Which functions: those the failure's lines name (called in the assertion or its ``where``
lines, or a traceback entry's ``in name``) and those the failing tests' bodies call, defined
in the task's files, the files the failure names and the workspace modules they import (three
imports deep), then the workspace functions those call (a bug one call away), bounded by
``MAX_FUNCTIONS`` and ``MAX_FOCUS_CHARS``. Test files are never the focus. Every file is
opened through the workspace path check, as the tools open them, and a function whose text
holds a secret is not shown.

The reply: the functions of its fenced blocks whose names are focused become search/replace
sections of the text edit format over their current text (re-indented to a method's place),
so the kept reply enters the history as an edit the format itself has, and its calls are that
format's calls. A reply with none of them changes nothing.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from cadenza.engine.overview import workspace_files
from cadenza.engine.prime import MAX_SCANNED_BYTES, MAX_SCANNED_FILES, imported_files
from cadenza.engine.testsuite import is_test_file
from cadenza.messages import AssistantReply
from cadenza.providers.text_reply import code_blocks, parse_text_reply
from cadenza.secrets import redact
from cadenza.tools.base import ToolError
from cadenza.tools.fs import read_decoded
from cadenza.tools.paths import resolve_in_workspace

MAX_FUNCTIONS = 4
MAX_FOCUS_CHARS = 4_000
"""Characters of function text shown, all functions together."""

_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_TRACEBACK_IN = re.compile(r":\d+: in ([A-Za-z_]\w*)\s*$")
_FILE_LINE = re.compile(r"([\w./-]+\.py):\d+")
_FAILED = re.compile(r"^FAILED ([\w./-]+\.py)::(\S+)", re.MULTILINE)
IMPORT_HOPS = 3
"""Imports followed from the task's files: a test imports a package whose ``__init__``
imports the module that calls a helper in another."""

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Function:
    """A function or method as its file holds it now."""

    path: str
    """Workspace-relative."""
    name: str
    source: str
    """Its lines as in the file, decorators included, with their indentation."""
    indent: str
    calls: tuple[str, ...]
    """The names it calls (the next hop)."""


def failing_functions(root: Path, task_files: list[str], failures: str) -> list[Function]:
    """The functions to show with ``failures`` (see the module docstring); [] when none."""
    named: list[str] = []
    for line in failures.splitlines():
        found = _TRACEBACK_IN.search(line)
        named += [n for n in ([found[1]] if found else []) + _CALLED.findall(line)]
    files = [f for f in task_files if f.endswith(".py")]
    files += [f for f in _FILE_LINE.findall(failures) if f not in files]
    known = set(workspace_files(root, limit=MAX_SCANNED_FILES)[0])
    files = [f for f in files if f in known]
    named += _failing_tests_calls(root, failures, known)
    named = list(dict.fromkeys(named))
    for _ in range(IMPORT_HOPS):  # a package's __init__ imports the module that imports the bug
        files += imported_files(root, files, known)
    defined = _definitions(root, [f for f in files if not is_test_file(Path(f))])
    chosen: list[Function] = []
    used = 0
    queue = list(named)
    while queue and len(chosen) < MAX_FUNCTIONS:
        name = queue.pop(0)
        function = defined.get(name)
        if function is None or function in chosen:
            continue
        if used + len(function.source) > MAX_FOCUS_CHARS:
            continue
        chosen.append(function)
        used += len(function.source)
        if name in named:  # one hop from what the failure names, no further
            queue += [c for c in function.calls if c not in named and c not in queue]
    return chosen


def _failing_tests_calls(root: Path, failures: str, known: set[str]) -> list[str]:
    """The names the failing tests' own bodies call (``FAILED path::test``), in order.

    The assertion line may call nothing (``assert settings["host"] == ...``): the test's
    body says which code it ran.
    """
    wanted: dict[str, set[str]] = {}
    for path, test in _FAILED.findall(failures):
        if path in known:
            wanted.setdefault(path, set()).add(test.split("::")[-1].split("[")[0])
    calls: list[str] = []
    for path, tests in wanted.items():
        for node in _parsed_functions(root, path):
            if node.name in tests:
                calls += _called_names(node)
    return calls


def _definitions(root: Path, files: list[str]) -> dict[str, Function]:
    """The functions and methods of ``files`` by name (the first of a name wins)."""
    found: dict[str, Function] = {}
    for name in files:
        lines, nodes = _read_functions(root, name)
        for node in nodes:
            function = _function(name, node, lines)
            if function is not None:
                found.setdefault(node.name, function)
    return found


def _parsed_functions(root: Path, name: str) -> list[FunctionNode]:
    return _read_functions(root, name)[1]


def _read_functions(root: Path, name: str) -> tuple[list[str], list[FunctionNode]]:
    """A workspace file's lines and its functions and methods; none when it cannot be read."""
    try:
        path = resolve_in_workspace(root, name)
        if path.stat().st_size > MAX_SCANNED_BYTES:
            return [], []
        text = read_decoded(path).text  # a FIFO or a device: an error, never a wait
        tree = ast.parse(text)
    except (ToolError, OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return [], []
    return text.splitlines(keepends=True), _functions(tree)


def _functions(tree: ast.Module) -> list[FunctionNode]:
    """The module's functions and its classes' methods."""
    nodes: list[FunctionNode] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            nodes.append(node)
        elif isinstance(node, ast.ClassDef):
            nodes += [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    return nodes


def _function(path: str, node: FunctionNode, lines: list[str]) -> Function | None:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    assert node.end_lineno is not None
    source = "".join(lines[first - 1 : node.end_lineno])
    if redact(source) != source:
        return None  # a secret never leaves the process, and an edit needs the real text
    indent = source[: len(source) - len(source.lstrip(" \t"))]
    return Function(path, node.name, source, indent, tuple(_called_names(node)))


def _called_names(node: FunctionNode) -> list[str]:
    """The names a function calls (``f(...)``, ``x.f(...)``), in order, itself left out."""
    calls: list[str] = []
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call):
            func = inner.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called and called != node.name and called not in calls:
                calls.append(called)
    return calls


def focus_message(functions: list[Function], failures: str) -> str:
    """What the focused lane reads after the task: the functions, the failure, the ask."""
    shown = "\n\n".join(
        f"{f.path}\n```python\n{textwrap.dedent(f.source).rstrip()}\n```" for f in functions
    )
    one = len(functions) == 1
    return (
        f"The tests run {'this function' if one else 'these functions'}:\n\n{shown}\n\n"
        f"The tests fail:\n{failures}\n\nFind the line that is wrong and reply with the "
        f"corrected {'function' if one else 'functions'} in one fenced block."
    )


def focused_reply(
    reply: AssistantReply, functions: list[Function], id_prefix: str
) -> AssistantReply:
    """``reply`` as search/replace edits of the focused functions its blocks rewrite.

    A cut reply is returned as it is (it is not judged); one that rewrites none of them
    becomes a reply without calls.
    """
    if reply.finish_reason == "length":
        return reply
    by_name = {f.name: f for f in functions}
    sections: list[str] = []
    done: set[str] = set()
    for block in code_blocks(reply.content):
        try:
            tree = ast.parse(textwrap.dedent(block))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        lines = textwrap.dedent(block).splitlines(keepends=True)
        for node in _functions(tree):
            target = by_name.get(node.name)
            if target is None or node.name in done:
                continue
            written = _function(target.path, node, lines)
            if written is None:
                continue
            new = textwrap.indent(textwrap.dedent(written.source), target.indent)
            if new.rstrip() == target.source.rstrip():
                continue
            done.add(node.name)
            sections.append(
                f"{target.path}\n```python\n<<<<<<< SEARCH\n{target.source.rstrip()}\n"
                f"=======\n{new.rstrip()}\n>>>>>>> REPLACE\n```"
            )
    plain = reply.model_copy(update={"content": "\n\n".join(sections), "tool_calls": []})
    return parse_text_reply(plain, id_prefix=id_prefix)
