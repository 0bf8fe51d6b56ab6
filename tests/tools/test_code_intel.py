"""The code-intelligence tools over a scripted ``CodeIntel``: columns, results, rename's edits.

The language server here is a double (unit tests); tests/e2e/test_intel_*.py run real ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cadenza.messages import ToolCall
from cadenza.tools.base import ToolContext, ToolError, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.intel import (
    IntelDiagnostic,
    IntelError,
    IntelFeature,
    IntelLocation,
    IntelRename,
)
from cadenza.tools.intel_format import format_diagnostic, new_problems
from cadenza.tools.registry import ToolRegistry, intel_tools
from cadenza.tools.symbols import locate, symbol_name
from tests.doubles import MemoryEditor

ALL: frozenset[IntelFeature] = frozenset({"diagnostics", "references", "definition", "rename"})


@dataclass
class ScriptedIntel:
    """Answers set by the test; records the positions asked."""

    root: Path
    refs: list[IntelLocation] = field(default_factory=list)
    defs: dict[int, list[IntelLocation]] = field(default_factory=dict)
    diags: list[IntelDiagnostic] = field(default_factory=list)
    renamed: IntelRename | None = None
    fail: str | None = None
    asked: list[tuple[str, int, int]] = field(default_factory=list)

    def features(self, path: Path) -> frozenset[IntelFeature]:
        return ALL if path.suffix == ".py" or path == self.root else frozenset()

    async def diagnostics(self, paths: list[Path] | None) -> list[IntelDiagnostic]:
        if self.fail:
            raise IntelError(self.fail)
        return [d for d in self.diags if paths is None or d.path in paths]

    async def references(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        self.asked.append(("references", line, character))
        if self.fail:
            raise IntelError(self.fail)
        return self.refs

    async def definition(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        self.asked.append(("definition", line, character))
        return self.defs.get(character, [])

    async def rename(self, path: Path, line: int, character: int, new_name: str) -> IntelRename:
        self.asked.append(("rename", line, character))
        assert self.renamed is not None
        return self.renamed


def loc(path: Path, line: int, character: int, length: int = 1) -> IntelLocation:
    return IntelLocation(
        path=path, line=line, character=character, end_line=line, end_character=character + length
    )


async def invoke(
    root: Path,
    intel: ScriptedIntel | None,
    name: str,
    editor: MemoryEditor | None = None,
    **args: object,
) -> ToolResult:
    tools = ToolRegistry(intel_tools())
    prepared = prepare(ToolCall(id="1", name=name, arguments=json.dumps(args)), tools)
    assert isinstance(prepared, PreparedCall), prepared
    ctx = ToolContext(root=root, host=editor or MemoryEditor(), intel=intel)
    return await run(prepared, ctx)


def test_locate_finds_the_whole_word_column() -> None:
    text = "import x\ntotal = calc_total(items) + subtotal\n"
    pos = locate(text, 2, "calc_total", "a.py")
    assert (pos.line, pos.character, pos.columns) == (1, 8, (8,))
    assert locate(text, 2, "total", "a.py").columns == (0,)  # not inside calc_total/subtotal
    assert symbol_name("Cart.total()") == "total"
    assert locate("é = ñame(1)\n", 1, "ñame", "a.py").character == 4  # code points


def test_locate_takes_the_only_line_that_holds_the_symbol() -> None:
    # A miscounted line: the file has one place the model can mean, and the result says so.
    text = "import x\n\n\ndef calc_total(items):\n    return 0\n"
    pos = locate(text, 2, "calc_total", "a.py")
    assert (pos.line, pos.character, pos.columns) == (3, 4, (4,))
    assert pos.note == "(`calc_total` is on line 4 of a.py, not line 2: used line 4)"
    assert locate(text, 4, "calc_total", "a.py").note == ""  # asked right: no note


def test_locate_names_the_lines_where_the_symbol_is() -> None:
    text = "\n".join(["def f():", "    pass", "", "x = 1", "f()", "y = f"]) + "\n"
    with pytest.raises(ToolError) as info:
        locate(text, 4, "f", "a.py")
    assert "not on line 4 of a.py" in str(info.value)
    assert "line(s) 1, 5, 6" in str(info.value)
    with pytest.raises(ToolError, match=r"does not occur in a\.py"):
        locate(text, 1, "nowhere", "a.py")
    with pytest.raises(ToolError, match="has 7 lines"):
        locate(text, 40, "f", "a.py")
    with pytest.raises(ToolError, match=r"a\.py has 1 line;"):
        locate("f()", 2, "f", "a.py")
    with pytest.raises(ToolError, match="not a name"):
        symbol_name("1 + 2")


async def test_references_are_listed_with_their_lines(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("def calc(x):\n    return x\n")
    b.write_text("from a import calc\nprint(calc(1))\n")
    intel = ScriptedIntel(tmp_path, refs=[loc(b, 1, 6), loc(a, 0, 4), loc(b, 0, 14), loc(a, 0, 4)])
    result = await invoke(tmp_path, intel, "find_references", path="b.py", line=2, symbol="calc")
    assert not result.is_error
    assert intel.asked == [("references", 1, 6)]
    assert result.content.splitlines() == [
        "3 place(s) use `calc`:",
        "a.py:1: def calc(x):",
        "b.py:1: from a import calc",
        "b.py:2: print(calc(1))",
    ]


async def test_outside_the_workspace_is_named_not_read(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print(len([]))\n")
    outside = tmp_path.parent / "builtins.pyi"
    intel = ScriptedIntel(tmp_path, defs={6: [loc(outside, 10, 4)]})
    result = await invoke(tmp_path, intel, "go_to_definition", path="a.py", line=1, symbol="len")
    assert result.content.splitlines()[1] == "builtins.pyi (outside the workspace):11"


async def test_a_name_twice_on_a_line_is_ambiguous_only_with_two_meanings(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\nx = x + 1\n")
    same = [loc(tmp_path / "a.py", 0, 0)]
    intel = ScriptedIntel(tmp_path, defs={0: same, 4: same}, refs=same)
    ok = await invoke(tmp_path, intel, "find_references", path="a.py", line=2, symbol="x")
    assert not ok.is_error
    intel.defs[4] = [loc(tmp_path / "a.py", 1, 0)]
    bad = await invoke(tmp_path, intel, "find_references", path="a.py", line=2, symbol="x")
    assert bad.is_error and "different meanings" in bad.content


async def test_a_failing_server_is_an_error_result(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    intel = ScriptedIntel(tmp_path, fail="the server stopped")
    result = await invoke(tmp_path, intel, "find_references", path="a.py", line=1, symbol="x")
    assert result.is_error and "the server stopped" in result.content
    (tmp_path / "a.md").write_text("x\n")
    none = await invoke(tmp_path, intel, "find_references", path="a.md", line=1, symbol="x")
    assert none.is_error and "no language server is available for a.md" in none.content
    nothing = await invoke(tmp_path, None, "diagnostics")
    assert nothing.is_error and "no language server" in nothing.content


async def test_rename_goes_through_the_edit_path(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("def calc(x):\n    return x\n")
    b.write_text("from a import calc\nprint(calc(1))\n")
    texts = {
        a: "def total(x):\n    return x\n",
        b: "from a import total\nprint(total(1))\n",
    }
    intel = ScriptedIntel(tmp_path, renamed=IntelRename(texts=texts, versions={a: None, b: None}))
    editor = MemoryEditor()
    result = await invoke(
        tmp_path,
        intel,
        "rename_symbol",
        editor,
        path="a.py",
        line=1,
        symbol="calc",
        new_name="total",
    )
    assert not result.is_error, result.content
    assert a.read_text() == texts[a] and b.read_text() == texts[b]
    assert [e.path for e in editor.edits] == [a, b] and len(result.edits) == 2
    assert result.content.splitlines() == [
        "renamed `calc` to `total` in 2 file(s):",
        "a.py:1: def total(x):",
        "b.py:1: from a import total",
        "b.py:2: print(total(1))",
    ]


async def test_rename_on_a_miscounted_line_says_where_the_name_was(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text("import os\n\ndef calc(x):\n    return x\n")
    texts = {a: "import os\n\ndef total(x):\n    return x\n"}
    intel = ScriptedIntel(tmp_path, renamed=IntelRename(texts=texts, versions={a: None}))
    args = {"path": "a.py", "line": 1, "symbol": "calc", "new_name": "total"}
    result = await invoke(tmp_path, intel, "rename_symbol", MemoryEditor(), **args)
    assert not result.is_error, result.content
    assert result.content.splitlines()[:2] == [
        "(`calc` is on line 3 of a.py, not line 1: used line 3)",
        "renamed `calc` to `total` in 1 file(s):",
    ]
    assert a.read_text() == texts[a]


async def test_a_second_rename_in_a_file_the_first_one_changed_says_it_is_done(
    tmp_path: Path,
) -> None:
    b = tmp_path / "b.py"
    b.write_text("from a import total\nprint(total(1))\n")
    intel = ScriptedIntel(tmp_path, renamed=IntelRename(texts={}, versions={}))
    args = {"path": "b.py", "line": 1, "symbol": "calc", "new_name": "total"}
    result = await invoke(tmp_path, intel, "rename_symbol", MemoryEditor(), **args)
    assert not result.is_error and not result.edits, result.content
    assert result.content.startswith(
        "nothing to rename in b.py: it no longer uses `calc` and already uses `total` (line 1, 2)"
    )
    # A name the file never used (nor its new name) is still an error naming the file.
    args = {"path": "b.py", "line": 1, "symbol": "calc", "new_name": "other"}
    missing = await invoke(tmp_path, intel, "rename_symbol", MemoryEditor(), **args)
    assert missing.is_error and "`calc` does not occur in b.py" in missing.content


async def test_rename_refuses_files_outside_and_bad_names(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text("calc = 1\n")
    outside = tmp_path.parent / "elsewhere.py"
    intel = ScriptedIntel(
        tmp_path, renamed=IntelRename(texts={a: "t = 1\n", outside: "t\n"}, versions={})
    )
    result = await invoke(
        tmp_path, intel, "rename_symbol", path="a.py", line=1, symbol="calc", new_name="t"
    )
    assert result.is_error and "outside the workspace" in result.content
    assert a.read_text() == "calc = 1\n"
    bad = await invoke(
        tmp_path, intel, "rename_symbol", path="a.py", line=1, symbol="calc", new_name="a b"
    )
    assert bad.is_error and "not a valid name" in bad.content


async def test_rename_stopped_midway_keeps_what_was_applied(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("calc = 1\n")
    b.write_text("from a import calc\n")
    intel = ScriptedIntel(
        tmp_path,
        renamed=IntelRename(texts={a: "t = 1\n", b: "from a import t\n"}, versions={}),
    )

    class RefuseSecond(MemoryEditor):
        async def apply_edit(self, edit):  # type: ignore[no-untyped-def]
            if edit.path == b:
                from cadenza.tools.host import EditOutcome

                return EditOutcome(applied=False, reason="declined", refused_by="person")
            return await super().apply_edit(edit)

    result = await invoke(
        tmp_path,
        intel,
        "rename_symbol",
        RefuseSecond(),
        path="a.py",
        line=1,
        symbol="calc",
        new_name="t",
    )
    assert result.is_error and "incomplete" in result.content and "a.py" in result.content
    assert [e.path for e in result.edits] == [a]


async def test_diagnostics_are_compact_and_bounded(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text("x\n")
    diags = [
        IntelDiagnostic(path=a, line=i, character=0, severity="warning", message=f"w{i}")
        for i in range(40)
    ] + [IntelDiagnostic(path=a, line=3, character=0, severity="error", message="bad\nmore")]
    intel = ScriptedIntel(tmp_path, diags=diags)
    result = await invoke(tmp_path, intel, "diagnostics", path="a.py")
    lines = result.content.splitlines()
    assert lines[0] == "41 problem(s) in a.py (1 error(s)):"
    assert lines[1] == "a.py:4: error: bad"
    assert lines[-1] == "… and 11 more" and len(lines) == 32
    intel.diags = []
    assert (await invoke(tmp_path, intel, "diagnostics")).content == (
        "no problems reported in the workspace"
    )


def test_new_problems_leave_out_the_old_ones_wherever_they_moved(tmp_path: Path) -> None:
    a = tmp_path / "a.py"

    def d(line: int, message: str, severity: str = "error") -> IntelDiagnostic:
        return IntelDiagnostic(path=a, line=line, character=0, severity=severity, message=message)  # type: ignore[arg-type]

    before = [d(3, '"foo" is not defined'), d(9, "unused", "warning")]
    after = [d(5, '"foo" is not defined'), d(6, '"bar" is not defined'), d(1, "w", "warning")]
    fresh = new_problems(before, after)
    assert [format_diagnostic(tmp_path, x) for x in fresh] == [
        'a.py:7: error: "bar" is not defined'
    ]
    # A second copy of an old error is new.
    assert len(new_problems(before, [*after, d(8, '"foo" is not defined')])) == 2
