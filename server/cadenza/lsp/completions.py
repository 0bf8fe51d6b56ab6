"""``textDocument/inlineCompletion`` (LSP 3.18): the host's completion service, translated.

The handler turns the client's position (in the negotiated encoding) into code points of the
open document's unsaved text and answers with at most one item, inserted at the cursor. Open,
change and close notifications feed the service's recent chunks: only documents inside a
workspace folder (``workspace_files.resolve_inside``: a link leading out is outside) lend
chunks to other documents' completions. Only open documents are completed: a request for
another URI is answered with no items (nothing is read from disk).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from cadenza.lsp.protocol import CadenzaProtocol, current_request_id
from cadenza.workspace_files import WorkspaceFileError, resolve_inside

if TYPE_CHECKING:
    from cadenza.host.completions import CompletionAnswer, CompletionService

_SERVICE_ATTRIBUTE = "_cadenza_completions"


def service(ls: LanguageServer) -> CompletionService:
    """The server's completion service, made on first use (sharing the sessions' providers)."""
    existing: CompletionService | None = getattr(ls, _SERVICE_ATTRIBUTE, None)
    if existing is not None:
        return existing
    from cadenza.host.completions import CompletionService, local_infill_source

    sessions = ls.sessions  # type: ignore[attr-defined]
    made = CompletionService(local_infill_source(sessions.providers, lambda: sessions.config))
    setattr(ls, _SERVICE_ATTRIBUTE, made)
    return made


async def close(ls: LanguageServer) -> None:
    """Cancel the running completions, if the service was made."""
    existing: CompletionService | None = getattr(ls, _SERVICE_ATTRIBUTE, None)
    if existing is not None:
        await existing.aclose()


def _filename(ls: LanguageServer, uri: str) -> str:
    """The name the model sees: workspace-relative where the document is inside it."""
    fs_path = to_fs_path(uri)
    if fs_path is None:
        return uri
    path = Path(fs_path)
    root = ls.workspace.root_path
    if root:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    return path.name


def _inside_workspace(ls: LanguageServer, uri: str) -> bool:
    """Whether the document ``uri`` is a file inside one of the workspace folders."""
    fs_path = to_fs_path(uri)
    if fs_path is None or not uri.startswith("file:"):
        return False
    roots = [to_fs_path(folder.uri) for folder in ls.workspace.folders.values()]
    roots.append(ls.workspace.root_path)
    for root in {root for root in roots if root}:
        try:
            resolve_inside(Path(root), fs_path)
        except WorkspaceFileError:
            continue
        return True
    return False


def _open_document(ls: LanguageServer, uri: str) -> TextDocument | None:
    document: TextDocument | None = ls.workspace.text_documents.get(uri)
    return document


async def inline_completion(
    ls: LanguageServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    """One completion at the cursor, or no items (dropped, unsupported, nothing to add).

    An invoked request that failed (the time limit, a model that cannot fill in the middle or
    is not pulled, a model server error) also gets a ``window/logMessage`` error saying why,
    and the first automatic one the model cannot answer a warning (``_say_why``).

    Raises:
        JsonRpcInvalidParams: The position is outside the document (-32602).
    """
    from cadenza.host.completion_context import Cursor
    from cadenza.host.completions import CompletionQuery

    document = _open_document(ls, params.text_document.uri)
    if document is None:
        return types.InlineCompletionList(items=[])
    lines = document.lines
    _check_position(params.position, len(lines))
    where = document.position_codec.position_from_client_units(lines, params.position)
    query = CompletionQuery(
        uri=document.uri,
        filename=_filename(ls, document.uri),
        cursor=Cursor(text=document.source, line=where.line, column=where.character),
        lends_context=_inside_workspace(ls, document.uri),
    )
    answer = await service(ls).complete(query)
    if isinstance(ls.protocol, CadenzaProtocol):  # the request's time is logged at INFO
        ls.protocol.note_timing(
            current_request_id(),
            subject=query.filename,
            outcome=answer.outcome,
            model_ms=answer.model_ms,
        )
    _say_why(ls, params, answer)
    if not answer.text:
        return types.InlineCompletionList(items=[])
    at = types.Range(start=params.position, end=params.position)
    return types.InlineCompletionList(
        items=[types.InlineCompletionItem(insert_text=answer.text, range=at)]
    )


def _check_position(position: types.Position, line_count: int) -> None:
    """Refuse a position outside the document, naming it as given (LSP counts from 0).

    Raises:
        JsonRpcInvalidParams: The line is past the end, or the character negative (-32602).
    """
    if position.line > line_count or position.character < 0:
        raise JsonRpcInvalidParams(
            message=f"Invalid Params: position {position.line}:{position.character} is past "
            "the document's end (line and character count from 0, as in every LSP position)"
        )


def _say_why(
    ls: LanguageServer, params: types.InlineCompletionParams, answer: CompletionAnswer
) -> None:
    """Say in the editor's log (never a pop-up) why an empty answer is empty, when it failed.

    Asked for on purpose (a command, a key: ``Invoked``), every failure is an error line,
    which ``cadenza complete`` turns into its exit status; an automatic request hears only
    why completions are off, once per server (a model that cannot fill in the middle, one
    that is not pulled).
    """
    if answer.outcome not in ("timeout", "unsupported", "failed") or not answer.detail:
        return
    if params.context.trigger_kind == types.InlineCompletionTriggerKind.Invoked:
        message = answer.detail
        if answer.outcome != "unsupported":
            message = f"no inline completion: {answer.detail}"
        level = types.MessageType.Error
    elif answer.outcome == "unsupported" and not answer.said_before:
        message, level = answer.detail, types.MessageType.Warning
    else:
        return
    ls.window_log_message(types.LogMessageParams(type=level, message=message))


def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    """A viewed document: its top becomes a recent chunk."""
    uri = params.text_document.uri
    inside = _inside_workspace(ls, uri)
    service(ls).seen(uri, _filename(ls, uri), params.text_document.text, lends_context=inside)


def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    """An edited document: the chunk around its first changed line becomes a recent chunk."""
    document = _open_document(ls, params.text_document.uri)
    if document is not None:
        uri = document.uri
        inside = _inside_workspace(ls, uri)
        service(ls).seen(uri, _filename(ls, uri), document.source, lends_context=inside)


def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    """A closed document's chunks are forgotten."""
    service(ls).closed(params.text_document.uri)


def register(server: LanguageServer) -> None:
    """Register the handlers; pygls then advertises ``inlineCompletionProvider``."""
    server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())(
        inline_completion
    )
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
