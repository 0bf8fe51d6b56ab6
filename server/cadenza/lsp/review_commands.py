"""The handlers of ``cadenza.listChanges`` and ``cadenza.reviewChanges`` (``lsp.changes``).

Malformed arguments are answered with ``InvalidParams`` (-32602); a review that cannot be done
(the session is live, a hunk changed since, the editor refused) with ``RequestFailed``
(-32803), and nothing was changed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from cadenza.lsp.params import command_args
from cadenza.schema.methods import LIST_CHANGES, REVIEW_CHANGES
from cadenza.schema.review import ChangesResult, ListChangesArgs, ReviewChangesArgs

if TYPE_CHECKING:
    from cadenza.lsp.changes import ReviewFailed
    from cadenza.lsp.sessions import SessionManager

log = logging.getLogger(__name__)


def _refused(command: str, exc: ReviewFailed) -> JsonRpcException:
    log.info("refused %s: %s", command, exc)
    return JsonRpcException(message=str(exc), code=types.LSPErrorCodes.RequestFailed.value)


def sessions_of(ls: LanguageServer) -> SessionManager:
    """The server's session manager (handlers are typed with pygls's own server class)."""
    manager: SessionManager = getattr(ls, "sessions")  # noqa: B009 - CadenzaServer.sessions
    return manager


def list_changes(ls: LanguageServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.listChanges {sessionId}`` → ``{sessionId, files}`` of its latest turn."""
    from cadenza.lsp.changes import ReviewFailed, TurnReview  # imports the host: on first use

    args: ListChangesArgs = command_args(LIST_CHANGES, ListChangesArgs, arguments)
    manager = sessions_of(ls)
    try:
        review = TurnReview.of(
            ls, manager.live, args.session_id, manager.checkpoints_base, changing=False
        )
    except ReviewFailed as exc:
        raise _refused(LIST_CHANGES, exc) from None
    if review is None:
        return ChangesResult(session_id=args.session_id).wire()
    return review.result().wire()


async def review_changes(ls: LanguageServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.reviewChanges {sessionId, action, hunks?, uris?}`` → the turn after it."""
    from cadenza.lsp.changes import ReviewFailed, TurnReview

    args: ReviewChangesArgs = command_args(REVIEW_CHANGES, ReviewChangesArgs, arguments)
    manager = sessions_of(ls)
    try:
        review = TurnReview.of(
            ls, manager.live, args.session_id, manager.checkpoints_base, changing=True
        )
        if review is None:
            if args.hunks or args.uris:
                raise ReviewFailed(f"session {args.session_id} changed no file")
            return ChangesResult(session_id=args.session_id).wire()
        return (await review.review(args)).wire()
    except ReviewFailed as exc:
        raise _refused(REVIEW_CHANGES, exc) from None


def register(server: LanguageServer) -> None:
    """Register the review commands on ``server``."""
    server.command(LIST_CHANGES)(list_changes)
    server.command(REVIEW_CHANGES)(review_changes)
