"""An editor's side of inline completions: a real ``cadenza serve`` over its stdio pipes.

Cadenza's own client plumbing (``cadenza.client.connection``: pygls's ``LanguageClient``, the
server in a process group of its own, ``initialize``, a polite shutdown) with the requests an
editor sends while someone types: ``didOpen``, ``didChange``, ``didClose``,
``textDocument/inlineCompletion`` and ``$/cancelRequest``. The server runs at ``--log-level
INFO``, where it logs each completion request's own time (``cadenza.lsp.protocol``): the
editor reads those lines into ``server_times``.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path

from benchmarks.infilling import Document
from cadenza.client.connection import (
    ServerLanguageClient,
    StderrTail,
    initialize,
    initialize_params,
    shut_down,
    spawn,
)
from cadenza.client.options import ClientOptions

SERVE = ("-P", "-m", "cadenza", "serve", "--log-level", "INFO")
_SERVER_TIME = re.compile(
    r"textDocument/inlineCompletion (\S+) for (.+) \((\w+)\): ([\d.]+) ms from arrival to "
    r"response, ([\d.]+) ms of it in the model call"
)
"""The server's log line for one completion request (``CadenzaProtocol._log_timing``)."""


@dataclass(frozen=True, kw_only=True)
class ServerTime:
    """One completion request as the server timed it (ms).

    Attributes:
        request_ms: From the request's arrival to its response sent.
        model_ms: The part of it in the ``/infill`` call (0 without one).
        outcome: ``completed``, ``superseded``, ``timeout``, ... or ``error``.
    """

    request_ms: float
    model_ms: float
    outcome: str

    @property
    def overhead_ms(self) -> float:
        """The server's own share: the request's time minus the model call's."""
        return self.request_ms - self.model_ms


def client_position(document: Document) -> types.Position:
    """The cursor in UTF-16 code units (the encoding this client offers)."""
    head = document.text.split("\n")[document.line][: document.column]
    return types.Position(line=document.line, character=len(head.encode("utf-16-le")) // 2)


def completion_params(uri: str, document: Document) -> types.InlineCompletionParams:
    """An automatic (as-you-type) inline completion request at the document's cursor."""
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=client_position(document),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Automatic
        ),
    )


def first_item(result: Any) -> str:
    """The first item's text of an inline completion result ("" for none)."""
    items = result.items if isinstance(result, types.InlineCompletionList) else result or []
    if not items:
        return ""
    text = items[0].insert_text
    return text if isinstance(text, str) else text.value


class Editor:
    """One ``cadenza serve`` and the documents open in it.

    Args:
        workspace: The workspace folder (documents are named inside it).
        env: The server's environment.
        log: Where the server's stderr (its log) goes, line by line.
    """

    def __init__(self, workspace: Path, env: dict[str, str], log: IO[str]) -> None:
        self.workspace = workspace.resolve()
        self._env = env
        self._log = log
        self._lsp: ServerLanguageClient | None = None
        self._stderr = StderrTail(self._write_log)
        self._ids = itertools.count(1)
        self._versions: dict[str, int] = {}
        self.server_times: dict[str, ServerTime] = {}
        """Each answered completion request's time, by request id, from the server's log."""
        self.last_id: str | None = None
        """The id of the latest completion request sent."""

    def _write_log(self, line: str) -> None:
        self._log.write(line + "\n")
        self._log.flush()
        timed = _SERVER_TIME.search(line)
        if timed is not None:
            self.server_times[timed.group(1)] = ServerTime(
                request_ms=float(timed.group(4)),
                model_ms=float(timed.group(5)),
                outcome=timed.group(3),
            )

    async def server_time(self, msg_id: str, timeout_s: float = 5.0) -> ServerTime | None:
        """The server's time of request ``msg_id``, once its log line arrived (None: never)."""
        deadline = time.monotonic() + timeout_s
        while msg_id not in self.server_times and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return self.server_times.get(msg_id)

    async def start(self, python: str, timeout_s: float = 120.0) -> None:
        """Spawn ``python -m cadenza serve`` and initialize it."""
        lsp = ServerLanguageClient(on_exit=lambda code: None)
        options = ClientOptions(
            workspace=self.workspace, server_command=(python, *SERVE), env=self._env
        )
        await spawn(lsp, options, self._stderr)
        self._lsp = lsp
        await initialize(
            lsp, initialize_params(self.workspace, None), timeout=timeout_s, stderr=self._stderr
        )
        lsp.initialized(types.InitializedParams())

    @property
    def lsp(self) -> ServerLanguageClient:
        if self._lsp is None:
            raise RuntimeError("the editor is not started")
        return self._lsp

    def uri(self, name: str) -> str:
        """The URI of the workspace file ``name``."""
        uri: str = from_fs_path(str(self.workspace / name))
        return uri

    def open(self, uri: str, text: str) -> None:
        self._versions[uri] = 1
        item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        self.lsp.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))

    def change(self, uri: str, text: str) -> None:
        """The whole new text (as ``TextDocumentSyncKind.Full``)."""
        self._versions[uri] += 1
        params = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=uri, version=self._versions[uri]
            ),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
        self.lsp.text_document_did_change(params)

    def close(self, uri: str) -> None:
        self._versions.pop(uri, None)
        params = types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)
        )
        self.lsp.text_document_did_close(params)

    def begin(self, uri: str, document: Document) -> tuple[str, asyncio.Future[Any]]:
        """Send an inline completion request; its id and the future of its result."""
        msg_id = f"c{next(self._ids)}"
        self.last_id = msg_id
        future = self.lsp.protocol.send_request(
            types.TEXT_DOCUMENT_INLINE_COMPLETION,
            completion_params(uri, document),
            msg_id=msg_id,
        )
        return msg_id, asyncio.wrap_future(future)

    def cancel(self, msg_id: str) -> None:
        self.lsp.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    async def complete(
        self, uri: str, document: Document, timeout_s: float = 120.0
    ) -> tuple[str, float]:
        """The completion at the cursor and the seconds from request to answer.

        Raises:
            JsonRpcException: The server answered with an error.
        """
        started = time.monotonic()
        _, future = self.begin(uri, document)
        result = await asyncio.wait_for(future, timeout_s)
        return first_item(result), time.monotonic() - started

    async def stop(self) -> None:
        if self._lsp is not None:
            await shut_down(self._lsp, 30.0)
            await self._stderr.stop()
            self._lsp = None


async def answered(future: asyncio.Future[Any]) -> str | None:
    """The text of a request that may have been cancelled: None when it was."""
    try:
        return first_item(await future)
    except JsonRpcException:
        return None
