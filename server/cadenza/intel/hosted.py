"""``HostedCodeIntel``: the ``CodeIntel`` port over language servers Cadenza starts itself.

Used where the editor offers no code intelligence (headless ``cadenza run``, ACP, editors that
offer none). One server per language, started on the first request for one of its files.
Documents are kept in sync with the text Cadenza reads (``read``: the editor's buffer, else the
disk): before every request each open document is read again and sent when it changed, so an
edit by any tool, a command or the person reaches the server. A server that stops is started
again on the next request, at most ``MAX_STARTS`` times per session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
from lsprotocol import types

from cadenza.fileread import walk
from cadenza.intel.connection import ServerConnection
from cadenza.intel.convert import diagnostic, locations, uri_of, workspace_edit_texts
from cadenza.intel.servers import ServerSpec, find_servers
from cadenza.intel.sync import DocumentSync
from cadenza.tools.intel import (
    IntelDiagnostic,
    IntelError,
    IntelFeature,
    IntelLocation,
    IntelRename,
    IntelUnavailable,
)

ALL_FEATURES: frozenset[IntelFeature] = frozenset(
    {"diagnostics", "references", "definition", "rename"}
)

MAX_STARTS = 3
"""Starts of one language's server per session (a server that keeps crashing is left off)."""

MAX_WORKSPACE_FILES = 100
"""Files opened to answer workspace-wide diagnostics."""

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", "build", "dist"})

Read = Callable[[Path], str | None]
"""The text Cadenza reads for a file (None: unreadable)."""


@dataclass
class _Language:
    spec: ServerSpec
    program: str
    connection: ServerConnection | None = None
    sync: DocumentSync | None = None
    starts: int = 0


class HostedCodeIntel:
    """Language servers for one workspace, started on demand; closed with the session."""

    def __init__(
        self,
        root: Path,
        read: Read,
        servers: dict[str, tuple[ServerSpec, str]] | None = None,
    ) -> None:
        self.root = root
        self._read = read
        found = find_servers() if servers is None else servers
        self._languages = {lang: _Language(spec, prog) for lang, (spec, prog) in found.items()}
        self._lock = anyio.Lock()

    def _language(self, path: Path) -> _Language | None:
        return next(
            (lang for lang in self._languages.values() if path.suffix in lang.spec.suffixes),
            None,
        )

    def features(self, path: Path) -> frozenset[IntelFeature]:
        """Everything for a file a server serves (the root: when any server is installed)."""
        usable = [lang for lang in self._languages.values() if lang.starts < MAX_STARTS]
        if path == self.root:
            return ALL_FEATURES if usable else frozenset()
        lang = self._language(path)
        return ALL_FEATURES if lang is not None and lang in usable else frozenset()

    async def _ready(self, path: Path) -> tuple[ServerConnection, DocumentSync]:
        """The running server for ``path``'s language, every open document synced.

        Raises:
            IntelError: No server serves it, or it could not be (re)started.
        """
        lang = self._language(path)
        if lang is None:
            raise IntelUnavailable(f"no language server serves {path.name}")
        async with self._lock:
            if lang.connection is None or not lang.connection.alive:
                if lang.connection is not None:
                    await lang.connection.aclose()
                if lang.starts >= MAX_STARTS:
                    raise IntelError(f"{lang.spec.name} stopped too often; it is left off")
                lang.starts += 1
                connection = ServerConnection(lang.spec, lang.program, self.root)
                lang.connection, lang.sync = connection, DocumentSync(connection, self._read)
                try:
                    await connection.start()
                    # A server answers references only for what it has analysed (measured:
                    # basedpyright's first answer held the declaration alone): wait for its
                    # first diagnostics of the file, bounded, before asking anything.
                    await lang.sync.diagnostics([path])
                except IntelError:
                    await connection.aclose()
                    raise
            assert lang.connection is not None and lang.sync is not None
            lang.sync.refresh()
            lang.sync.open(path)
            return lang.connection, lang.sync

    def _position(
        self, sync: DocumentSync, path: Path, line: int, character: int
    ) -> types.TextDocumentPositionParams:
        return types.TextDocumentPositionParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of(path)),
            position=sync.position(path, line, character),
        )

    async def references(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        """Every reference, the declaration included."""
        conn, sync = await self._ready(path)
        at = self._position(sync, path, line, character)
        params = types.ReferenceParams(
            text_document=at.text_document,
            position=at.position,
            context=types.ReferenceContext(include_declaration=True),
        )
        answer = await conn.request(conn.client.text_document_references_async(params))
        return locations(answer, sync.text_of, conn.encoding)

    async def definition(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        """Where the symbol is defined."""
        conn, sync = await self._ready(path)
        at = self._position(sync, path, line, character)
        params = types.DefinitionParams(text_document=at.text_document, position=at.position)
        answer = await conn.request(conn.client.text_document_definition_async(params))
        return locations(answer, sync.text_of, conn.encoding)

    async def rename(self, path: Path, line: int, character: int, new_name: str) -> IntelRename:
        """The rename as new texts of the files it changes (nothing applied)."""
        conn, sync = await self._ready(path)
        at = self._position(sync, path, line, character)
        params = types.RenameParams(
            text_document=at.text_document, position=at.position, new_name=new_name
        )
        answer = await conn.request(conn.client.text_document_rename_async(params))
        texts = workspace_edit_texts(answer, sync.text_of, conn.encoding)
        return IntelRename(texts=texts, versions=dict.fromkeys(texts))

    async def diagnostics(self, paths: list[Path] | None) -> list[IntelDiagnostic]:
        """The current diagnostics of ``paths`` (None: the workspace's files, bounded)."""
        wanted = paths if paths is not None else self._workspace_files()
        found: list[IntelDiagnostic] = []
        by_language: dict[str, list[Path]] = {}
        for path in wanted:
            lang = self._language(path)
            if lang is not None and lang.starts < MAX_STARTS:
                by_language.setdefault(lang.spec.language, []).append(path)
        for files in by_language.values():
            conn, sync = await self._ready(files[0])
            for path in files[1:]:
                sync.open(path)
            for path, items in (await sync.diagnostics(files)).items():
                text = sync.text_of(path)
                found += [diagnostic(path, d, text, conn.encoding) for d in items]
        return found

    def _workspace_files(self) -> list[Path]:
        """Up to ``MAX_WORKSPACE_FILES`` files a server serves."""
        files: list[Path] = []
        for folder, dirs, names in walk(self.root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            for name in sorted(names):
                path = Path(folder) / name
                if self._language(path) is not None:
                    files.append(path)
                    if len(files) >= MAX_WORKSPACE_FILES:
                        return files
        return files

    async def aclose(self) -> None:
        """Shut every server down (their whole process groups; bounded)."""
        for lang in self._languages.values():
            if lang.connection is not None:
                await lang.connection.aclose()
                lang.connection = None
