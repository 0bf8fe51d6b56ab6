"""A pytest-lsp client around a real ``cadenza serve`` subprocess, acting as a small editor.

The client keeps its own buffers and applies ``workspace/applyEdit`` with an applier written
here, independently of the server's code (positions decoded in the negotiated encoding), so a
wrong range shows up as wrong text. It never writes to disk: a closed file edited through
``applyEdit`` becomes an unsaved buffer, as in a real editor.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pygls.protocol import default_converter
from pygls.uris import from_fs_path, to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

SESSION_UPDATE = "cadenza/sessionUpdate"
ASK_USER = "cadenza/askUser"
WAIT_S = 15.0


@attrs.define
class RawNotification:
    method: str
    params: Any = None
    jsonrpc: str = "2.0"


@attrs.define
class RawRequest:
    id: int | str
    method: str
    params: Any = None
    jsonrpc: str = "2.0"


class ClientProtocol(LanguageClientProtocol):
    """Cadenza's custom messages arrive as plain JSON (dicts), not namedtuples."""

    def get_message_type(self, method: str) -> Any:
        if method == SESSION_UPDATE:
            return RawNotification
        if method == ASK_USER:
            return RawRequest
        return super().get_message_type(method)


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter, protocol_cls=ClientProtocol)
    register_lsp_features(client)
    return client


# --- an independent applier -------------------------------------------------------------

_LINE_END = re.compile(r"\r\n|\r|\n")
_UNIT_WIDTH: dict[str, Callable[[str], int]] = {
    "utf-8": lambda ch: len(ch.encode("utf-8")),
    "utf-16": lambda ch: len(ch.encode("utf-16-le")) // 2,
    "utf-32": lambda ch: 1,
}


def position_to_offset(text: str, position: types.Position, encoding: str) -> int:
    """Code-point offset of an LSP position (``character`` in ``encoding`` code units)."""
    starts = [0] + [m.end() for m in _LINE_END.finditer(text)]
    assert position.line < len(starts), f"line {position.line} is past the end"
    start = starts[position.line]
    match = _LINE_END.search(text, start)
    end = match.start() if match else len(text)
    width = _UNIT_WIDTH[encoding]
    units = 0
    offset = start
    while units < position.character:
        assert offset < end, f"character {position.character} is past line {position.line}"
        units += width(text[offset])
        offset += 1
    assert units == position.character, "position splits a character"
    return offset


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    spans = [
        (
            position_to_offset(text, e.range.start, encoding),
            position_to_offset(text, e.range.end, encoding),
            e.new_text,
        )
        for e in edits
    ]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


# --- the harness ----------------------------------------------------------------------


@dataclass
class Buffer:
    text: str
    version: int | None


def file_uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


def capabilities(
    *,
    encodings: list[str] | None = None,
    apply_edit: bool = True,
    ask_user: bool = False,
    progress: bool = True,
) -> types.ClientCapabilities:
    general = types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind(e) for e in encodings] if encodings else None
    )
    workspace = types.WorkspaceClientCapabilities(
        apply_edit=apply_edit,
        workspace_edit=types.WorkspaceEditClientCapabilities(
            document_changes=True,
            resource_operations=[
                types.ResourceOperationKind.Create,
                types.ResourceOperationKind.Rename,
                types.ResourceOperationKind.Delete,
            ],
        ),
        workspace_folders=True,
    )
    return types.ClientCapabilities(
        general=general,
        workspace=workspace,
        window=types.WindowClientCapabilities(work_done_progress=progress),
        experimental={"cadenza": {"askUser": True}} if ask_user else None,
    )


@dataclass
class Harness:
    """The client plus what it saw and what it holds."""

    client: LanguageClient
    root: Path
    encoding: str = "utf-16"
    updates: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    ends: dict[str, asyncio.Event] = field(default_factory=dict)
    buffers: dict[str, Buffer] = field(default_factory=dict)
    open_uris: set[str] = field(default_factory=set)
    edit_requests: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    refuse_edits: str | None = None
    ask_requests: list[dict[str, Any]] = field(default_factory=list)
    answers: list[str | None] = field(default_factory=list)
    message_requests: list[types.ShowMessageRequestParams] = field(default_factory=list)
    message_choice: str | None = None
    initialize_result: types.InitializeResult | None = None

    def install(self) -> None:
        # pygls tags handlers with attributes, which bound methods cannot carry: wrap them.
        self.client.feature(SESSION_UPDATE)(lambda params: self._on_update(params))
        self.client.feature(types.WORKSPACE_APPLY_EDIT)(lambda params: self._on_apply_edit(params))
        self.client.feature(ASK_USER)(lambda params: self._on_ask_user(params))
        self.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(
            lambda params: self._on_message_request(params)
        )

    # server → client
    def _on_update(self, params: dict[str, Any]) -> None:
        session_id = params["sessionId"]
        self.updates.setdefault(session_id, []).append(params["update"])
        if params["update"]["sessionUpdate"] == "session_end":
            self._end_event(session_id).set()

    def _on_ask_user(self, params: dict[str, Any]) -> dict[str, Any]:
        self.ask_requests.append(params)
        return {"answer": self.answers.pop(0) if self.answers else None}

    def _on_message_request(
        self, params: types.ShowMessageRequestParams
    ) -> types.MessageActionItem | None:
        self.message_requests.append(params)
        if self.message_choice is None:
            return None
        return types.MessageActionItem(title=self.message_choice)

    def _on_apply_edit(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        self.edit_requests.append(params)
        if self.refuse_edits is not None:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=self.refuse_edits)
        for change in params.edit.document_changes or []:
            failure = self._apply_change(change)
            if failure is not None:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason=failure)
        return types.ApplyWorkspaceEditResult(applied=True)

    def _apply_change(self, change: Any) -> str | None:
        if isinstance(change, types.CreateFile):
            path = Path(to_fs_path(change.uri) or "")
            if path.exists() or change.uri in self.buffers:
                return "file exists"
            self.buffers[change.uri] = Buffer(text="", version=None)
            return None
        assert isinstance(change, types.TextDocumentEdit), change
        uri = change.text_document.uri
        version = change.text_document.version
        buffer = self.buffers.get(uri)
        if buffer is None:
            data = Path(to_fs_path(uri) or "").read_bytes()
            buffer = self.buffers[uri] = Buffer(text=data.decode("utf-8"), version=None)
        if uri in self.open_uris and version is not None and version != buffer.version:
            return f"version {version} is stale (buffer at {buffer.version})"
        edits = [e for e in change.edits if isinstance(e, types.TextEdit)]
        buffer.text = apply_text_edits(buffer.text, edits, self.encoding)
        if uri in self.open_uris:
            assert buffer.version is not None
            buffer.version += 1
            self.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(
                        uri=uri, version=buffer.version
                    ),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(buffer.text)],
                )
            )
        return None

    def _end_event(self, session_id: str) -> asyncio.Event:
        return self.ends.setdefault(session_id, asyncio.Event())

    # client → server
    async def execute(self, command: str, *arguments: Any, token: str | None = None) -> Any:
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=command, arguments=list(arguments), work_done_token=token
            )
        )

    async def start(self, task: str, *, model: str | None = "openai/test", **extra: Any) -> str:
        argument: dict[str, Any] = {"task": task, **extra}
        if model is not None:
            argument["model"] = model
        result = await self.execute("cadenza.startSession", argument)
        return str(result["sessionId"])

    async def wait_end(self, session_id: str, timeout: float = WAIT_S) -> dict[str, Any]:
        await asyncio.wait_for(self._end_event(session_id).wait(), timeout)
        return self.updates[session_id][-1]

    async def run(self, task: str, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        session_id = await self.start(task, **kwargs)
        return session_id, await self.wait_end(session_id)

    def kinds(self, session_id: str) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates.get(session_id, [])]

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = file_uri(path)
        self.buffers[uri] = Buffer(text=text, version=version)
        self.open_uris.add(uri)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=version, text=text
                )
            )
        )
        return uri

    def change(self, path: Path, text: str) -> None:
        uri = file_uri(path)
        buffer = self.buffers[uri]
        assert buffer.version is not None
        buffer.version += 1
        buffer.text = text
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=buffer.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text)],
            )
        )

    def text_of(self, path: Path) -> str:
        return self.buffers[file_uri(path)].text


def server_env(base_url: str, home: Path) -> dict[str, str]:
    """The server's environment: the fake model, and no user config leaking in."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CADENZA_", "OLLAMA_", "XDG_"))
    }
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        folder = home / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env["OPENAI_BASE_URL"] = base_url
    env["OPENAI_API_KEY"] = "test-key"
    return env


async def start_harness(
    *,
    root: Path,
    env: dict[str, str],
    caps: types.ClientCapabilities,
    init_options: Any = None,
) -> tuple[Harness, types.InitializeResult]:
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "cadenza", "serve", "--log-level", "WARNING"],
        client_factory=make_client,
        server_env=env,
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    harness = Harness(client=client, root=root)
    harness.install()
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=file_uri(root),
            workspace_folders=[types.WorkspaceFolder(uri=file_uri(root), name=root.name)],
            initialization_options=init_options,
        )
    )
    harness.initialize_result = result
    encoding = result.capabilities.position_encoding
    harness.encoding = str(getattr(encoding, "value", encoding) or "utf-16")
    return harness, result


async def stop_harness(harness: Harness) -> None:
    try:
        await asyncio.wait_for(harness.client.shutdown_session(), WAIT_S)
    finally:
        await harness.client.stop()
