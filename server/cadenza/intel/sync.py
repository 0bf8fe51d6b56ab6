"""Documents a language server has open, kept equal to what Cadenza reads; their diagnostics.

Every open document is read again before each request and sent whole when it changed
(``didChange`` with the full text: simple, and exact whatever changed it). Diagnostics come by
pull (``textDocument/diagnostic``) when the server offers it, else from the server's pushes:
the wait ends when every asked file has a push for its current version (or, from servers that
send no versions, a push since it changed) and then no push came for ``QUIET_S``; it is bounded
by ``SETTLE_S`` either way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
from lsprotocol import types

from cadenza.intel.connection import ServerConnection
from cadenza.intel.convert import path_of, to_server, uri_of
from cadenza.tools.intel import IntelError
from cadenza.tools.textfile import LINE_BREAK

SETTLE_S = 8.0
"""Seconds to wait for pushed diagnostics to catch up with the texts sent."""

QUIET_S = 0.3
"""Seconds without a push after which the server counts as settled (other files' pushes)."""

POLL_S = 0.05


@dataclass
class _Document:
    text: str
    version: int
    since: int
    """The connection's push count when this version was sent."""


class DocumentSync:
    """The open documents of one server."""

    def __init__(self, connection: ServerConnection, read: Callable[[Path], str | None]) -> None:
        self._conn = connection
        self._read = read
        self._docs: dict[Path, _Document] = {}

    def text_of(self, path: Path) -> str | None:
        """The text the server has for ``path`` (an unopened file: as Cadenza reads it)."""
        doc = self._docs.get(path)
        return doc.text if doc is not None else self._read(path)

    def open(self, path: Path) -> None:
        """Open ``path`` in the server if it is not open (a file that cannot be read: skipped)."""
        if path in self._docs:
            return
        text = self._read(path)
        if text is None:
            return
        self._docs[path] = _Document(text=text, version=1, since=self._conn.publishes)
        language = self._conn.spec.language_ids.get(path.suffix, self._conn.spec.language)
        self._conn.notify(
            types.TEXT_DOCUMENT_DID_OPEN,
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri_of(path), language_id=language, version=1, text=text
                )
            ),
        )

    def refresh(self) -> None:
        """Send every open document whose text changed since it was sent; close deleted ones."""
        for path, doc in list(self._docs.items()):
            text = self._read(path)
            if text is None:
                del self._docs[path]
                self._conn.notify(
                    types.TEXT_DOCUMENT_DID_CLOSE,
                    types.DidCloseTextDocumentParams(
                        text_document=types.TextDocumentIdentifier(uri=uri_of(path))
                    ),
                )
            elif text != doc.text:
                doc.text, doc.version, doc.since = text, doc.version + 1, self._conn.publishes
                self._conn.notify(
                    types.TEXT_DOCUMENT_DID_CHANGE,
                    types.DidChangeTextDocumentParams(
                        text_document=types.VersionedTextDocumentIdentifier(
                            uri=uri_of(path), version=doc.version
                        ),
                        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                    ),
                )

    def position(self, path: Path, line: int, character: int) -> types.Position:
        """A code-point position in ``path`` as the server counts it."""
        text = self.text_of(path) or ""
        lines = LINE_BREAK.split(text)
        line_text = lines[line] if 0 <= line < len(lines) else ""
        return types.Position(
            line=line, character=to_server(line_text, character, self._conn.encoding)
        )

    async def diagnostics(self, paths: list[Path]) -> dict[Path, list[types.Diagnostic]]:
        """The diagnostics of ``paths`` (opened first) once the server settled."""
        for path in paths:
            self.open(path)
        paths = [p for p in paths if p in self._docs]
        if self._conn.pull_diagnostics:
            return {path: await self._pull(path) for path in paths}
        await self._settle(paths)
        found: dict[Path, list[types.Diagnostic]] = {}
        for uri, (_, items) in self._conn.published.items():
            path = path_of(uri)
            if path in paths:
                found[path] = items
        return found

    async def _pull(self, path: Path) -> list[types.Diagnostic]:
        conn = self._conn
        params = types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of(path))
        )
        report = await conn.request(conn.client.text_document_diagnostic_async(params))
        if isinstance(
            report, types.RelatedFullDocumentDiagnosticReport | types.FullDocumentDiagnosticReport
        ):
            return list(report.items)
        if isinstance(report, types.RelatedUnchangedDocumentDiagnosticReport):
            return []  # unchanged since a report Cadenza never asked for: none kept
        raise IntelError(f"{conn.spec.name} answered diagnostics with something unusable")

    def _caught_up(self, path: Path) -> bool:
        doc = self._docs[path]
        published = self._conn.published.get(uri_of(path))
        if published is None:
            return False
        version = published[0]
        return version == doc.version if version is not None else self._conn.publishes > doc.since

    async def _settle(self, paths: list[Path]) -> None:
        with anyio.move_on_after(SETTLE_S):
            while not all(self._caught_up(p) for p in paths):
                if not self._conn.alive:
                    raise IntelError(f"{self._conn.spec.name} stopped")
                await anyio.sleep(POLL_S)
            seen = -1
            while seen != self._conn.publishes:
                seen = self._conn.publishes
                await anyio.sleep(QUIET_S)
