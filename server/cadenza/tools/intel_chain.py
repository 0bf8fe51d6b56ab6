"""``IntelChain``: the editor's language intelligence, with a fallback per file.

An editor declares code intelligence once, for every file, but has language servers for
some file types only (VS Code without a Python extension; a Neovim buffer with no client
attached). For such a file it answers "not available" (``IntelUnavailable``; on the wire
docs/protocol.md's ``-32601`` error or a diagnostics result's ``unavailable`` list), and the
next source is asked: the language servers Cadenza starts itself. Only when none has one is the
call an ``IntelUnavailable`` the tool turns into an error the model reads. A source that fails
(crash, timeout, nonsense) is not skipped: its error is the answer, as before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

from cadenza.tools.intel import (
    CodeIntel,
    IntelDiagnostic,
    IntelFeature,
    IntelLocation,
    IntelRename,
    IntelUnavailable,
)

T = TypeVar("T")


class IntelChain:
    """``CodeIntel`` over ``sources`` in order: each file goes to the first that has a server.

    Args:
        root: The workspace root (workspace-wide diagnostics ask every source serving it).
        sources: The sources, the editor's first.
    """

    def __init__(self, root: Path, sources: Sequence[CodeIntel]) -> None:
        self.root = root
        self.sources = tuple(sources)

    def features(self, path: Path) -> frozenset[IntelFeature]:
        """What any of the sources offers for ``path``."""
        offered: frozenset[IntelFeature] = frozenset()
        for source in self.sources:
            offered |= source.features(path)
        return offered

    async def _first(
        self, path: Path, feature: IntelFeature, call: Callable[[CodeIntel], Awaitable[T]]
    ) -> T:
        for source in self.sources:
            if feature not in source.features(path):
                continue
            try:
                return await call(source)
            except IntelUnavailable:
                continue
        raise IntelUnavailable(f"no language server is available for {self._shown(path)}")

    def _shown(self, path: Path) -> str:
        return str(path.relative_to(self.root)) if path.is_relative_to(self.root) else path.name

    async def references(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        """The first source's references that has a server for ``path``."""
        return await self._first(path, "references", lambda s: s.references(path, line, character))

    async def definition(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        """The first source's definition that has a server for ``path``."""
        return await self._first(path, "definition", lambda s: s.definition(path, line, character))

    async def rename(self, path: Path, line: int, character: int, new_name: str) -> IntelRename:
        """The first source's rename that has a server for ``path``."""
        return await self._first(
            path, "rename", lambda s: s.rename(path, line, character, new_name)
        )

    async def diagnostics(self, paths: list[Path] | None) -> list[IntelDiagnostic]:
        """Each file's diagnostics from the first source with a server for it.

        None: every source serving the workspace is asked for everything it knows of.

        Raises:
            IntelUnavailable: No source has a server for some of ``paths`` (``found`` holds the
                diagnostics of the others).
        """
        if paths is None:
            return await self._everything()
        remaining = list(dict.fromkeys(paths))
        found: list[IntelDiagnostic] = []
        for source in self.sources:
            asked = [p for p in remaining if "diagnostics" in source.features(p)]
            if not asked:
                continue
            try:
                found += await source.diagnostics(asked)
                missing: set[Path] = set()
            except IntelUnavailable as exc:
                found += exc.found
                missing = set(exc.paths or asked)
            remaining = [p for p in remaining if p not in asked or p in missing]
        if remaining:
            names = ", ".join(self._shown(p) for p in remaining)
            raise IntelUnavailable(
                f"no language server is available for {names}",
                paths=tuple(remaining),
                found=tuple(found),
            )
        return found

    async def _everything(self) -> list[IntelDiagnostic]:
        found: list[IntelDiagnostic] = []
        asked = False
        for source in self.sources:
            if "diagnostics" not in source.features(self.root):
                continue
            try:
                found += await source.diagnostics(None)
                asked = True
            except IntelUnavailable as exc:
                found += exc.found
        if not asked:
            raise IntelUnavailable("no language server is available in this workspace")
        return found


def chain(root: Path, editor: CodeIntel | None, hosted: CodeIntel | None) -> IntelChain | None:
    """The sources a session may use, the editor's first (None: neither exists)."""
    present = [s for s in (editor, hosted) if s is not None]
    return IntelChain(root, present) if present else None
