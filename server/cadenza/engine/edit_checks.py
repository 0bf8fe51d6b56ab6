"""Diagnostics after every edit: the errors an edit introduced, in its result.

Before an edit call runs, the diagnostics of the file it names are taken; after it, those of
every file it changed. The result gets the errors that are new (``intel_format.new_problems``:
the file's old errors left out, wherever they moved), at most ``MAX_LINES`` of them, so a model
sees a broken edit at once (as OpenCode appends language-server errors to edit results). The
source is the editor's language intelligence, else the servers Cadenza started; every wait is
bounded, and a server that fails or is slow just adds nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import anyio

from cadenza.tools.base import ToolError
from cadenza.tools.host import FileEdit, ToolHost
from cadenza.tools.intel import CodeIntel, IntelDiagnostic, IntelError
from cadenza.tools.intel_chain import chain
from cadenza.tools.intel_format import format_diagnostic, new_problems
from cadenza.tools.paths import resolve_in_workspace

log = logging.getLogger(__name__)

TIMEOUT_S = 5.0
"""Seconds one diagnostics request may take here: an edit is not held up longer (ty answers a
cold request in about 0.5 s; a slower answer just adds nothing)."""

MAX_LINES = 5
"""New errors shown in an edit's result; the rest are counted."""

Baseline = dict[Path, list[IntelDiagnostic]]


class EditDiagnostics:
    """The diagnostics before and after the edits of one session."""

    def __init__(self, root: Path, host: ToolHost, intel: CodeIntel | None) -> None:
        self.root = root
        self.host = host
        self.intel = intel

    def _source(self, path: Path) -> CodeIntel | None:
        source = chain(self.root, self.host.code_intel(), self.intel)
        return source if source is not None and "diagnostics" in source.features(path) else None

    async def _errors(self, paths: Sequence[Path]) -> Baseline | None:
        """The diagnostics of ``paths`` per file (None: no source, or it failed)."""
        found: Baseline = {p: [] for p in paths}
        for path in paths:
            source = self._source(path)
            if source is None:
                return None
            try:
                with anyio.fail_after(TIMEOUT_S):
                    items = await source.diagnostics([path])
            except (IntelError, TimeoutError) as exc:
                log.info("no diagnostics for %s: %s", path, exc)
                return None
            found[path] += [d for d in items if d.path == path]
        return found

    async def before(self, raw_path: object) -> Baseline:
        """The diagnostics of the file an edit call names (empty: none, or a new file)."""
        if not isinstance(raw_path, str):
            return {}
        try:
            path = resolve_in_workspace(self.root, raw_path)
        except ToolError:
            return {}
        if not path.is_file() and self.host.open_document(path) is None:
            return {path: []}  # a file the call creates has no old errors
        return await self._errors([path]) or {}

    async def note(self, edits: Sequence[FileEdit], before: Baseline) -> str:
        """The text an edit's result gets: the new errors in the files changed ("" if none)."""
        # A file without a baseline (a rename's other files) is left out: its old errors
        # would read as new ones, a false alarm a small model chases.
        paths = [
            p
            for p in dict.fromkeys(e.path for e in edits if e.kind in ("change", "create"))
            if p in before
        ]
        if not paths:
            return ""
        after = await self._errors(paths)
        if after is None:
            return ""
        fresh: list[IntelDiagnostic] = []
        for path in paths:
            fresh += new_problems(before[path], after.get(path, []))
        if not fresh:
            return ""
        lines = [format_diagnostic(self.root, d) for d in fresh[:MAX_LINES]]
        if len(fresh) > MAX_LINES:
            lines.append(f"… and {len(fresh) - MAX_LINES} more")
        return "\nNew errors after this edit (fix them):\n" + "\n".join(lines)
