"""Code intelligence from the editor: ``cadenza/diagnostics``, ``references``, ``definition``...

A client that declares ``experimental.cadenza.codeIntelligence: {diagnostics?, references?,
definition?, rename?}`` (each ``true`` when offered) answers these server → client requests
from its own language servers. Positions are LSP ``Position``s in the negotiated
``positionEncoding``. The answers carry LSP types (``Diagnostic``, ``Location``,
``WorkspaceEdit``), which the LSP face reads with lsprotocol's converter; this module declares
the params and the one envelope that is Cadenza's own (the diagnostics per file).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from cadenza.schema.base import OpenWireModel, SparseWireModel, WireModel

CAPABILITY = "codeIntelligence"
"""The key under ``experimental.cadenza`` in the client's capabilities."""

NOT_AVAILABLE = -32601
"""The error code of an answer meaning "the editor has no language server for this file" (the
server then asks a language server it starts itself): JSON-RPC's MethodNotFound, "the method
does not exist / is not available". An error code of its own would be clearer, but Neovim
refuses to send any code LSP does not define; a client without a handler answers it too."""


class CodeIntelligenceCapability(OpenWireModel):
    """``experimental.cadenza.codeIntelligence``: which requests the client answers."""

    diagnostics: bool = False
    references: bool = False
    definition: bool = False
    rename: bool = False


class DiagnosticsParams(SparseWireModel):
    """Params of ``cadenza/diagnostics``: ``{uris?}`` (absent: every file the editor knows of)."""

    uris: list[str] | None = None


class FileDiagnostics(OpenWireModel):
    """One file's diagnostics: ``{uri, diagnostics: Diagnostic[]}`` (LSP ``Diagnostic``)."""

    uri: str
    diagnostics: list[Any] = Field(default_factory=list)


class DiagnosticsResult(OpenWireModel):
    """Result of ``cadenza/diagnostics``: ``{items: [{uri, diagnostics}], unavailable?}``.

    ``unavailable``: the requested URIs the editor has no language server for (their items,
    if any, are ignored); the server asks its own language servers for those.
    """

    items: list[FileDiagnostics]
    unavailable: list[str] = Field(default_factory=list)


class DocumentRef(WireModel):
    """LSP ``TextDocumentIdentifier``: ``{uri}``."""

    uri: str


class WirePosition(WireModel):
    """LSP ``Position``: 0-based line, character in the negotiated encoding's code units."""

    line: int = Field(ge=0)
    character: int = Field(ge=0)


class SymbolParams(WireModel):
    """Params of ``cadenza/references`` and ``cadenza/definition``: ``{textDocument, position}``.

    ``cadenza/references`` answers ``Location[]`` with the declaration included;
    ``cadenza/definition`` answers ``Location[]`` (an editor's ``LocationLink``s are sent as
    ``Location``s of their target range).
    """

    text_document: DocumentRef
    position: WirePosition


class RenameParams(SymbolParams):
    """Params of ``cadenza/rename``: ``{textDocument, position, newName}``.

    The result is a ``WorkspaceEdit``, or null when there is nothing to rename there.

    The editor computes the edit and applies nothing; the server sends the new texts through
    its own edit path (versions, review, checkpoints, undo).
    """

    new_name: str
