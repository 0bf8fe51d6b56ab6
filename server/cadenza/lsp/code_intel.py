"""``EditorCodeIntel``: the ``CodeIntel`` port answered by the editor's own language servers.

A client that declares ``experimental.cadenza.codeIntelligence`` (``schema.intel``) answers
``cadenza/diagnostics``, ``cadenza/references``, ``cadenza/definition`` and
``cadenza/rename`` from the language servers it already runs (VS Code's language features,
Neovim's other LSP clients). This module turns the port's calls into those requests:

- positions: code-point columns of the text Cadenza reads (the open buffer, else the disk)
  ↔ the negotiated ``positionEncoding`` (``intel_text``);
- a rename's ``WorkspaceEdit`` is applied here to those texts and returned as whole new texts,
  which the tool sends through Cadenza's own edit path; nothing is applied by the editor;
- every request waits at most ``timeout_s`` (then ``$/cancelRequest`` and an ``IntelError``);
  an error answer or a malformed one is an ``IntelError`` too, so the session goes on;
- "no language server for this file" (the ``NOT_AVAILABLE`` error, or a diagnostics result's
  ``unavailable`` URIs) is an ``IntelUnavailable``: the tools then ask the language servers
  Cadenza starts itself (``tools.intel_chain``);
- files outside the workspace root are neither read nor reported: a location there is left
  out, a rename that would change one is refused.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pydantic import ValidationError
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter

from cadenza.host.checkpoints import disk_state
from cadenza.host.ports import (
    IntelDiagnostic,
    IntelError,
    IntelFeature,
    IntelLocation,
    IntelRename,
    IntelUnavailable,
    Severity,
)
from cadenza.lsp.documents import OpenDocuments, buffer_path
from cadenza.lsp.intel_text import FileText, PositionError
from cadenza.lsp.intel_workspace_edit import rename_texts
from cadenza.lsp.rpc import cancellable_request
from cadenza.schema.base import strict_validate
from cadenza.schema.intel import (
    CAPABILITY,
    NOT_AVAILABLE,
    CodeIntelligenceCapability,
    DiagnosticsParams,
    DiagnosticsResult,
    DocumentRef,
    RenameParams,
    SymbolParams,
    WirePosition,
)
from cadenza.schema.methods import DEFINITION, DIAGNOSTICS, REFERENCES, RENAME
from cadenza.secrets import redact_then_cut

DEFAULT_TIMEOUT_S = 20.0
"""Longest wait for one answer (seconds): a language server that is still loading a project
answers in a few seconds; one that hangs must not hold the session."""

_SEVERITIES: dict[int, Severity] = {1: "error", 2: "warning", 3: "information", 4: "hint"}
_FEATURES: tuple[IntelFeature, ...] = ("diagnostics", "references", "definition", "rename")
_converter = default_converter()  # type: ignore[no-untyped-call]


def declared_features(capabilities: types.ClientCapabilities) -> frozenset[IntelFeature]:
    """What the client offers under ``experimental.cadenza.codeIntelligence`` (empty: none)."""
    experimental = get_capability(capabilities, "experimental", None)
    cadenza = experimental.get("cadenza") if isinstance(experimental, dict) else None
    raw = cadenza.get(CAPABILITY) if isinstance(cadenza, dict) else None
    if not isinstance(raw, dict):
        return frozenset()
    try:
        declared = CodeIntelligenceCapability.model_validate(raw)
    except ValidationError:
        return frozenset()
    return frozenset(name for name in _FEATURES if getattr(declared, name))


class EditorCodeIntel:
    """``CodeIntel`` over the client's ``cadenza/*`` code-intelligence requests.

    Args:
        server: The language server (its client answers the requests).
        documents: The client's open documents (the texts positions refer to).
        offered: The features the client declared.
        timeout_s: Longest wait for one answer, in seconds.
    """

    def __init__(
        self,
        server: LanguageServer,
        documents: OpenDocuments,
        offered: frozenset[IntelFeature],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._server = server
        self._documents = documents
        self._offered = offered
        self.timeout_s = timeout_s

    @property
    def _root(self) -> Path:
        return self._documents.root

    def features(self, path: Path) -> frozenset[IntelFeature]:
        """The declared features, for files inside the workspace root."""
        return self._offered if path.is_relative_to(self._root) else frozenset()

    async def diagnostics(self, paths: list[Path] | None) -> list[IntelDiagnostic]:
        """``cadenza/diagnostics`` for ``paths`` (None: every file the editor knows of)."""
        self._require("diagnostics")
        uris = None if paths is None else [self._documents.uri(p) for p in paths]
        raw = await self._request(DIAGNOSTICS, DiagnosticsParams(uris=uris).wire())
        try:
            result = strict_validate(DiagnosticsResult, raw)
        except ValidationError:
            raise _nonsense(DIAGNOSTICS, raw) from None
        missing = {p for p in map(self._inside, result.unavailable) if p is not None}
        wanted = None if paths is None else set(paths) - missing
        found: list[IntelDiagnostic] = []
        for item in result.items:
            path = self._inside(item.uri)
            if path is None or (wanted is not None and path not in wanted) or path in missing:
                continue
            text = self._file_text(path)
            for entry in item.diagnostics:
                found.append(_diagnostic(path, text, _structure(entry, types.Diagnostic)))
        asked_missing = [p for p in paths or () if p in missing]
        if asked_missing:
            raise IntelUnavailable(
                _unavailable(asked_missing[0]), paths=tuple(asked_missing), found=tuple(found)
            )
        return found

    async def references(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        """``cadenza/references`` at that position (the declaration included)."""
        self._require("references")
        raw = await self._request(REFERENCES, self._symbol_params(path, line, character).wire())
        return self._locations(REFERENCES, raw)

    async def definition(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        """``cadenza/definition`` at that position."""
        self._require("definition")
        raw = await self._request(DEFINITION, self._symbol_params(path, line, character).wire())
        return self._locations(DEFINITION, raw)

    async def rename(self, path: Path, line: int, character: int, new_name: str) -> IntelRename:
        """``cadenza/rename`` at that position, applied to the current texts (not the files).

        Raises:
            IntelError: Nothing to rename there, no answer in time, a malformed edit, or an
                edit that creates, renames or deletes files, changes files outside the
                workspace, or was computed on another version of a buffer.
        """
        self._require("rename")
        where = self._symbol_params(path, line, character)
        params = RenameParams(
            text_document=where.text_document, position=where.position, new_name=new_name
        )
        raw = await self._request(RENAME, params.wire())
        if raw is None:
            raise IntelError("the language server found nothing to rename at that position")
        edit = _structure(raw, types.WorkspaceEdit, RENAME)
        return rename_texts(
            edit,
            inside=self._inside,
            current=self._current,
            codec=self._server.workspace.position_codec,
        )

    # --- requests ----------------------------------------------------------------------

    def _require(self, feature: IntelFeature) -> None:
        if feature not in self._offered:
            raise IntelError(f"the editor does not offer {feature} from its language servers")

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        """Send ``method``; its raw result.

        Raises:
            IntelError: No answer within ``timeout_s`` (the request is then withdrawn with
                ``$/cancelRequest``), or an error answer.
        """
        try:
            async with asyncio.timeout(self.timeout_s):
                return await cancellable_request(self._server, method, params)
        except TimeoutError:
            raise IntelError(
                f"the editor's language server did not answer within {self.timeout_s:g} s"
            ) from None
        except JsonRpcException as exc:
            if exc.code == NOT_AVAILABLE:
                raise IntelUnavailable(_unavailable(None)) from None
            raise IntelError(f"the editor's language server failed: {exc.message}") from None

    def _symbol_params(self, path: Path, line: int, character: int) -> SymbolParams:
        try:
            position = self._file_text(path).to_client(line, character)
        except PositionError as exc:
            raise IntelError(f"no such position in {self._shown(path)}: {exc}") from None
        return SymbolParams(
            text_document=DocumentRef(uri=self._documents.uri(path)),
            position=WirePosition(line=position.line, character=position.character),
        )

    # --- texts and locations -----------------------------------------------------------

    def _inside(self, uri: str) -> Path | None:
        """The path a URI names, when it is inside the workspace root."""
        path = buffer_path(uri, self._root)
        return path if path is not None and path.is_relative_to(self._root) else None

    def _current(self, path: Path) -> tuple[str, int | None]:
        """The text positions refer to and its buffer version (None: read from disk)."""
        buffer = self._documents.buffer(path)
        if buffer is not None:
            return buffer.text, buffer.version
        try:
            state = disk_state(path)
        except OSError as exc:
            raise IntelError(f"cannot read {self._shown(path)}: {exc.strerror}") from None
        if state.text is None:
            raise IntelError(f"{self._shown(path)} is missing or not text")
        return state.text, None

    def _file_text(self, path: Path) -> FileText:
        return FileText(self._current(path)[0], self._server.workspace.position_codec)

    def _shown(self, path: Path) -> str:
        return str(path.relative_to(self._root)) if path.is_relative_to(self._root) else str(path)

    def _locations(self, method: str, raw: Any) -> list[IntelLocation]:
        """``Location[]`` (also one ``Location``, ``LocationLink``s, or null) as the port's."""
        if raw is None:
            return []
        entries = raw if isinstance(raw, list) else [raw]
        found: list[IntelLocation] = []
        texts: dict[Path, FileText] = {}
        for entry in entries:
            uri, range_ = _location(entry, method)
            path = self._inside(uri)
            if path is None:
                continue  # outside the workspace: never read, never reported
            if path not in texts:
                texts[path] = self._file_text(path)
            start = texts[path].from_client(range_.start, clamp=True)
            end = texts[path].from_client(range_.end, clamp=True)
            found.append(
                IntelLocation(
                    path=path,
                    line=start[0],
                    character=start[1],
                    end_line=end[0],
                    end_character=end[1],
                )
            )
        return found


def _unavailable(path: Path | None) -> str:
    what = "that file" if path is None else path.name
    return f"the editor has no language server for {what}"


def _structure(raw: Any, kind: type[Any], method: str = DIAGNOSTICS) -> Any:
    """``raw`` as the LSP type ``kind`` (lsprotocol's converter), or an ``IntelError``."""
    try:
        return _converter.structure(raw, kind)
    except Exception:  # cattrs raises several kinds of error for one malformed value
        raise _nonsense(method, raw) from None


def _nonsense(method: str, raw: Any) -> IntelError:
    shown = redact_then_cut(repr(raw), 200)
    return IntelError(f"the editor answered {method} with something unusable: {shown}")


def _location(entry: Any, method: str) -> tuple[str, types.Range]:
    """The URI and range of a ``Location`` or ``LocationLink`` (its target range)."""
    if isinstance(entry, dict) and "targetUri" in entry:
        link = _structure(entry, types.LocationLink, method)
        return link.target_uri, link.target_selection_range
    location = _structure(entry, types.Location, method)
    return location.uri, location.range


def _diagnostic(path: Path, text: FileText, diagnostic: types.Diagnostic) -> IntelDiagnostic:
    line, character = text.from_client(diagnostic.range.start, clamp=True)
    severity = _SEVERITIES.get(int(diagnostic.severity or 1), "error")
    code = diagnostic.code
    return IntelDiagnostic(
        path=path,
        line=line,
        character=character,
        severity=severity,
        message=diagnostic.message,
        source=diagnostic.source,
        code=None if code is None else str(code),
    )
