"""``IntelChain``: the editor's answer per file, the next source where the editor has none."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cadenza.tools.intel import (
    IntelDiagnostic,
    IntelError,
    IntelFeature,
    IntelLocation,
    IntelRename,
    IntelUnavailable,
)
from cadenza.tools.intel_chain import IntelChain, chain

ALL: frozenset[IntelFeature] = frozenset({"diagnostics", "references", "definition", "rename"})


@dataclass
class Source:
    """A source with language servers for ``served`` suffixes; ``offered``: what it declares."""

    name: str
    served: set[str]
    offered: set[str] = field(default_factory=lambda: {".py", ".ts", ".rb", ""})
    fail: bool = False
    asked: list[object] = field(default_factory=list)

    def features(self, path: Path) -> frozenset[IntelFeature]:
        return ALL if path.suffix in self.offered else frozenset()

    def _check(self, path: Path) -> None:
        self.asked.append(path)
        if self.fail:
            raise IntelError(f"{self.name} crashed")
        if path.suffix not in self.served:
            raise IntelUnavailable(f"{self.name} has none for {path.name}")

    def _diagnostic(self, path: Path) -> IntelDiagnostic:
        return IntelDiagnostic(path=path, line=0, character=0, severity="error", message=self.name)

    async def diagnostics(self, paths: list[Path] | None) -> list[IntelDiagnostic]:
        self.asked.append(paths)
        if paths is None:
            return [self._diagnostic(Path(f"/ws/{self.name}"))]
        mine = [p for p in paths if p.suffix in self.served]
        missing = tuple(p for p in paths if p not in mine)
        found = [self._diagnostic(p) for p in mine]
        if missing:
            raise IntelUnavailable("none", paths=missing, found=tuple(found))
        return found

    async def references(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        self._check(path)
        end = character + len(self.name)
        return [IntelLocation(path=path, line=line, character=0, end_line=line, end_character=end)]

    async def definition(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        return await self.references(path, line, character)

    async def rename(self, path: Path, line: int, character: int, new_name: str) -> IntelRename:
        self._check(path)
        return IntelRename(texts={path: self.name}, versions={path: None})


ROOT = Path("/ws")


async def test_each_file_goes_to_the_first_source_with_a_server() -> None:
    editor, hosted = Source("editor", {".ts"}), Source("hosted", {".py"})
    intel = IntelChain(ROOT, [editor, hosted])
    ts, py = ROOT / "a.ts", ROOT / "b.py"
    assert (await intel.rename(ts, 0, 0, "x")).texts == {ts: "editor"}
    assert (await intel.rename(py, 0, 0, "x")).texts == {py: "hosted"}
    assert hosted.asked == [py]  # never asked for what the editor answered
    found = await intel.diagnostics([ts, py])
    assert sorted((d.path.name, d.message) for d in found) == [
        ("a.ts", "editor"),
        ("b.py", "hosted"),
    ]
    assert hosted.asked[-1] == [py]  # only the file the editor had no server for


async def test_none_with_a_server_is_unavailable_with_what_was_found() -> None:
    editor, hosted = Source("editor", {".ts"}), Source("hosted", {".py"})
    intel = IntelChain(ROOT, [editor, hosted])
    rb, ts = ROOT / "lib" / "c.rb", ROOT / "a.ts"
    with pytest.raises(IntelUnavailable, match=r"no language server is available for lib/c\.rb"):
        await intel.references(rb, 0, 0)
    with pytest.raises(IntelUnavailable) as caught:
        await intel.diagnostics([ts, rb])
    assert caught.value.paths == (rb,)
    assert [d.message for d in caught.value.found] == ["editor"]


async def test_a_source_that_does_not_offer_the_file_is_not_asked() -> None:
    editor = Source("editor", {".ts"})
    hosted = Source("hosted", {".py", ".rb"}, offered={".py"})
    intel = IntelChain(ROOT, [editor, hosted])
    with pytest.raises(IntelUnavailable):
        await intel.definition(ROOT / "c.rb", 0, 0)
    assert hosted.asked == []
    assert intel.features(ROOT / "c.go") == frozenset()


async def test_a_failure_is_the_answer_not_a_reason_to_ask_another() -> None:
    editor, hosted = Source("editor", {".py"}, fail=True), Source("hosted", {".py"})
    intel = IntelChain(ROOT, [editor, hosted])
    with pytest.raises(IntelError, match="editor crashed"):
        await intel.references(ROOT / "b.py", 0, 0)
    assert hosted.asked == []


async def test_workspace_diagnostics_ask_every_source() -> None:
    intel = chain(ROOT, Source("editor", {".ts"}), Source("hosted", {".py"}))
    assert intel is not None
    assert sorted(d.message for d in await intel.diagnostics(None)) == ["editor", "hosted"]
    assert chain(ROOT, None, None) is None
