"""The ``CodeIntel`` port: what a language server knows, as the code-intelligence tools see it.

Two implementations sit behind it: the editor's own language servers (the LSP face asks the
client, which declared ``experimental.cadenza.codeIntelligence``), and a language server Cadenza
starts itself (headless, ACP, editors that offer none). Positions here are 0-based lines and
code-point columns in the text Cadenza reads; each implementation converts them to the
``positionEncoding`` it speaks. A server that crashes, hangs or answers nonsense raises
``IntelError``; the tool turns it into an error result and the session goes on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

IntelFeature = Literal["diagnostics", "references", "definition", "rename"]
Severity = Literal["error", "warning", "information", "hint"]


@dataclass(frozen=True, kw_only=True)
class IntelLocation:
    """A range in a file: 0-based lines, code-point columns."""

    path: Path
    line: int
    character: int
    end_line: int
    end_character: int


@dataclass(frozen=True, kw_only=True)
class IntelDiagnostic:
    """One diagnostic of one file (LSP ``Diagnostic``, positions as in ``IntelLocation``)."""

    path: Path
    line: int
    character: int
    severity: Severity
    message: str
    source: str | None = None
    code: str | None = None


class IntelError(Exception):
    """The language server failed, timed out or answered something unusable (text for the model)."""


class IntelUnavailable(IntelError):
    """The source has no language server for the file(s) asked: the next source is asked.

    Distinct from a failure: an editor without a language server for a file type (VS Code
    without a Python extension, a Neovim buffer with no client attached) says so, and the
    language servers Cadenza starts itself answer instead (``tools.intel_chain``).

    Args:
        message: What the model reads when no source has one.
        paths: The files asked that it has none for (empty: every file asked).
        found: The diagnostics it did find for the other files asked.
    """

    def __init__(
        self,
        message: str,
        *,
        paths: tuple[Path, ...] = (),
        found: tuple[IntelDiagnostic, ...] = (),
    ) -> None:
        super().__init__(message)
        self.paths = paths
        self.found = found


@dataclass(frozen=True, kw_only=True)
class IntelRename:
    """A rename as whole new texts: absolute path → the file's text after the rename.

    Implementations apply the server's ``WorkspaceEdit`` to the texts they were computed on;
    the tool sends each through Cadenza's own edit path (versions, checkpoints, undo).
    ``versions`` holds the buffer version each text was computed on (None: disk).
    """

    texts: dict[Path, str]
    versions: dict[Path, int | None]


class CodeIntel(Protocol):
    """Language intelligence for the files of one workspace."""

    def features(self, path: Path) -> frozenset[IntelFeature]:
        """What this source offers for ``path`` (empty: nothing, the tool is not useful there).

        For the workspace root: what it offers workspace-wide (``diagnostics(None)``).
        """
        ...

    async def diagnostics(self, paths: list[Path] | None) -> list[IntelDiagnostic]:
        """The current diagnostics of ``paths`` (None: every file the source knows of).

        Raises ``IntelUnavailable`` naming the files it has no language server for (with the
        diagnostics of the others); the other methods raise it for the file asked.
        """
        ...

    async def references(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        """Every reference of the symbol at that position, its declaration included."""
        ...

    async def definition(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        """Where the symbol at that position is defined."""
        ...

    async def rename(self, path: Path, line: int, character: int, new_name: str) -> IntelRename:
        """The whole-workspace rename of the symbol at that position (nothing applied yet)."""
        ...
