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
opened through the workspace path check, as the tools open them, read and parsed once, and
all of them together within ``MAX_READ_FILES`` and ``MAX_READ_BYTES``; a function whose text
holds a secret is not shown.

The reply: each function of its fenced blocks whose name is focused becomes an ``edit_file``
call from that function's current text to the new one (re-indented to a method's place), the
call a search/replace section of the text edit format stands for, and the kept reply enters
the history written as that section. The calls are built from the texts themselves, never
written as markup and read back, so a function holding marker or fence lines edits only
itself. A reply with none of them changes nothing.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from cadenza.engine.overview import workspace_files
from cadenza.engine.prime import MAX_SCANNED_FILES, import_places
from cadenza.engine.testsuite import is_test_file
from cadenza.fileread import read_regular
from cadenza.messages import AssistantReply, ToolCall, fence_for
from cadenza.providers.text_format import render_call
from cadenza.providers.text_reply import SEARCH_REPLACE, code_blocks
from cadenza.secrets import redact
from cadenza.textio import decode_bytes
from cadenza.tools.base import ToolError
from cadenza.tools.paths import resolve_in_workspace
from cadenza.tools.textfile import lines_with_ends

MAX_FUNCTIONS = 4
MAX_FOCUS_CHARS = 4_000
"""Characters of function text shown, all functions together."""
MAX_READ_FILES = 40
"""Files opened to find the functions, all of them together."""
MAX_READ_BYTES = 400_000
"""Bytes read to find the functions, all files together (a file that would pass it is not
read): parsing ten 2 MB modules a test imports takes a minute and 700 MB."""

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


@dataclass
class _Files:
    """The workspace files one search reads: each once, all within the bounds."""

    root: Path
    opened: int = 0
    read: int = 0
    parsed: dict[str, tuple[list[str], ast.Module | None]] = field(default_factory=dict)

    def parse(self, name: str) -> tuple[list[str], ast.Module | None]:
        """A file's lines (as Python counts them) and tree; no tree when it is not read."""
        if name not in self.parsed:
            self.parsed[name] = self._parse(name)
        return self.parsed[name]

    def _parse(self, name: str) -> tuple[list[str], ast.Module | None]:
        if self.opened >= MAX_READ_FILES:
            return [], None
        self.opened += 1
        try:
            path = resolve_in_workspace(self.root, name)
            data = read_regular(path, limit=MAX_READ_BYTES - self.read)  # a FIFO: an error
            self.read += len(data)
            text = decode_bytes(data).text
            return lines_with_ends(text), ast.parse(text)
        except (ToolError, OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            return [], None

    def functions(self, name: str) -> list[FunctionNode]:
        return _functions(self.parse(name)[1])

    def imports(self, names: list[str]) -> list[str]:
        """Where the modules ``names`` import could be, in order."""
        places: list[str] = []
        for name in names:
            tree = self.parse(name)[1]
            places += import_places(tree, PurePosixPath(name).parent) if tree else []
        return places


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
    read = _Files(root)
    named += _failing_tests_calls(read, failures, known)
    named = list(dict.fromkeys(named))
    added = list(files)
    for _ in range(IMPORT_HOPS):  # a package's __init__ imports the module that imports the bug
        added = [f for f in dict.fromkeys(read.imports(added)) if f in known and f not in files]
        files += added
    defined = _definitions(read, [f for f in files if not is_test_file(Path(f))])
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


def _failing_tests_calls(read: _Files, failures: str, known: set[str]) -> list[str]:
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
        for node in read.functions(path):
            if node.name in tests:
                calls += _called_names(node)
    return calls


def _definitions(read: _Files, files: list[str]) -> dict[str, Function]:
    """The functions and methods of ``files`` by name (the first of a name wins)."""
    found: dict[str, Function] = {}
    for name in files:
        lines, tree = read.parse(name)
        for node in _functions(tree):
            function = _function(name, node, lines)
            if function is not None:
                found.setdefault(node.name, function)
    return found


def _functions(tree: ast.Module | None) -> list[FunctionNode]:
    """The module's functions and its classes' methods."""
    nodes: list[FunctionNode] = []
    for node in tree.body if tree else []:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            nodes.append(node)
        elif isinstance(node, ast.ClassDef):
            nodes += [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    return nodes


def _function(path: str, node: FunctionNode, lines: list[str]) -> Function | None:
    """``node``'s function from its file's ``lines`` (split where Python ends a line)."""
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
    texts = [(f.path, textwrap.dedent(f.source).rstrip()) for f in functions]
    shown = "\n\n".join(
        f"{path}\n{fence_for(text)}python\n{text}\n{fence_for(text)}" for path, text in texts
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
    """``reply`` as ``edit_file`` calls of the focused functions its blocks rewrite.

    A cut reply is returned as it is (it is not judged); one that rewrites none of them
    becomes a reply without calls.
    """
    if reply.finish_reason == "length":
        return reply
    by_name = {f.name: f for f in functions}
    calls: list[ToolCall] = []
    done: set[str] = set()
    for block in code_blocks(reply.content):
        text = textwrap.dedent(block)
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        lines = lines_with_ends(text)
        for node in _functions(tree):
            target = by_name.get(node.name)
            if target is None or node.name in done:
                continue
            written = _function(target.path, node, lines)
            if written is None:
                continue
            new = textwrap.indent(textwrap.dedent(written.source), target.indent).rstrip()
            if new == target.source.rstrip():
                continue
            done.add(node.name)
            ending = "\n" if target.source.endswith(("\n", "\r")) else ""  # "": the file's end
            arguments = {
                "path": target.path,
                "old_string": target.source,
                "new_string": new + ending,
            }
            calls.append(
                ToolCall(
                    id=f"{id_prefix}_{len(calls)}",
                    name=SEARCH_REPLACE,
                    arguments=json.dumps(arguments, ensure_ascii=False),
                )
            )
    content = "\n\n".join(render_call(c) for c in calls)  # as the history shows the edit
    finish = "tool_calls" if calls else reply.finish_reason
    return reply.model_copy(
        update={"content": content, "tool_calls": calls, "finish_reason": finish}
    )
