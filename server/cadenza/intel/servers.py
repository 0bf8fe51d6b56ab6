"""Which language server Cadenza starts for which files, and finding its program.

Python's server was chosen by measurement (docs/intel.md: start-up, memory, rename and
reference correctness, diagnostics) and ships with Cadenza; the others are used when
installed, in the order of ``SERVER_TABLE`` (one row per server: data, not code). JavaScript
and TypeScript use ``typescript-language-server`` when it is on PATH. A program is looked
for next to the running Python first (the virtual environment Cadenza is installed in), then
on PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, kw_only=True)
class ServerSpec:
    """One language server program.

    Attributes:
        name: Its name (also the program looked for).
        language: The language it serves (one server per language at a time).
        args: Arguments that make it speak LSP over stdio.
        suffixes: File suffixes it serves.
        language_ids: LSP ``languageId`` per suffix.
        install: How a person installs it (``cadenza doctor``'s fix line).
    """

    name: str
    language: str
    args: tuple[str, ...]
    suffixes: frozenset[str]
    language_ids: dict[str, str]
    install: str
    init_options: Callable[[str], dict[str, Any] | None] | None = None
    """The ``initializationOptions`` for the server's program path (None: none)."""

    def program(self) -> str | None:
        """The program's path, or None when it is not installed."""
        beside = Path(sys.executable).parent / self.name
        if beside.is_file() and os.access(beside, os.X_OK):
            return str(beside)
        return shutil.which(self.name)


LANGUAGE_IDS: dict[str, dict[str, str]] = {
    "python": {".py": "python", ".pyi": "python"},
    "typescript": {
        ".js": "javascript",
        ".jsx": "javascriptreact",
        ".mjs": "javascript",
        ".cjs": "javascript",
        ".ts": "typescript",
        ".tsx": "typescriptreact",
        ".mts": "typescript",
        ".cts": "typescript",
    },
}
"""Per language: the LSP ``languageId`` of each file suffix it serves."""


def _tsserver(program: str) -> dict[str, Any] | None:
    """Where TypeScript's ``tsserver.js`` is, for ``typescript-language-server``.

    It looks for TypeScript in the workspace's ``node_modules`` only; an install beside the
    server (``npm install typescript typescript-language-server``) or a ``tsserver`` on PATH is
    handed to it, so a workspace without its own TypeScript is served too.
    """
    candidates = [
        parent / "node_modules" / "typescript" / "lib" / "tsserver.js"
        for parent in Path(program).resolve().parents
    ]
    tsserver = shutil.which("tsserver")
    if tsserver is not None:
        candidates.insert(0, Path(tsserver).resolve().parent.parent / "lib" / "tsserver.js")
    found = next((c for c in candidates if c.is_file()), None)
    return {"tsserver": {"path": str(found)}} if found is not None else None


_InitOptions = Callable[[str], dict[str, Any] | None] | None

SERVER_TABLE: tuple[tuple[str, str, tuple[str, ...], str, _InitOptions], ...] = (
    # language, program, arguments for LSP over stdio, how to install, initializationOptions
    ("python", "ty", ("server",), "pip install ty (part of Cadenza's install)", None),
    ("python", "basedpyright-langserver", ("--stdio",), "pip install basedpyright", None),
    ("python", "pyrefly", ("lsp",), "pip install pyrefly", None),
    ("python", "jedi-language-server", (), "pip install jedi-language-server", None),
    ("python", "pylsp", (), "pip install python-lsp-server", None),
    (
        "typescript",
        "typescript-language-server",
        ("--stdio",),
        "npm install -g typescript typescript-language-server",
        _tsserver,
    ),
)
"""Every server Cadenza knows, per language in the order it prefers them (Python's measured)."""

KNOWN_SERVERS = tuple(
    ServerSpec(
        name=name,
        language=language,
        args=args,
        suffixes=frozenset(LANGUAGE_IDS[language]),
        language_ids=LANGUAGE_IDS[language],
        install=install,
        init_options=init_options,
    )
    for language, name, args, install, init_options in SERVER_TABLE
)
PYTHON_SERVERS = tuple(spec for spec in KNOWN_SERVERS if spec.language == "python")
TYPESCRIPT_SERVER = next(spec for spec in KNOWN_SERVERS if spec.language == "typescript")


def find_servers(
    known: tuple[ServerSpec, ...] = KNOWN_SERVERS,
) -> dict[str, tuple[ServerSpec, str]]:
    """Per language, the first installed server of ``known`` and its program's path."""
    found: dict[str, tuple[ServerSpec, str]] = {}
    for spec in known:
        if spec.language in found:
            continue
        program = spec.program()
        if program is not None:
            found[spec.language] = (spec, program)
    return found
