"""A pytest-lsp client around a real ``cadenza serve`` subprocess, acting as a small editor.

The client keeps its own buffers and applies ``workspace/applyEdit`` with an applier written
here, independently of the server's code (positions decoded in the negotiated encoding), so a
wrong range shows up as wrong text. Like a real editor, text edits land in buffers: a closed
file edited through ``applyEdit`` becomes an unsaved buffer (decoded as UTF-8, a BOM set
aside; with ``exact_encodings``, in the encoding charset-normalizer finds), written to disk
only by ``save`` or with ``autosave`` (VS Code's ``files.refactoring.autoSave``). Resource
operations (``CreateFile``, ``RenameFile``, ``DeleteFile``) act on disk at once, as editors
do. Edits whose annotations need confirmation are recorded and accepted unless
``decline_confirmations`` is set.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import attrs
import charset_normalizer
from lsprotocol import types
from pygls.protocol import default_converter
from pygls.uris import from_fs_path, to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

SESSION_UPDATE = "cadenza/sessionUpdate"
ASK_USER = "cadenza/askUser"
REQUEST_PERMISSION = "cadenza/requestPermission"
WAITING_HUMAN = "cadenza/waitingHuman"
INTEL_REQUESTS = (
    "cadenza/diagnostics",
    "cadenza/references",
    "cadenza/definition",
    "cadenza/rename",
)
RAW_REQUESTS = (ASK_USER, REQUEST_PERMISSION, WAITING_HUMAN, *INTEL_REQUESTS)
PERMISSION_TITLES = {
    "allow_once": "Allow once",
    "allow_always": "Always allow",
    "reject_once": "Reject",
    "reject_always": "Always reject",
}
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
        if method in RAW_REQUESTS:
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


def apply_text_edits(
    text: str, edits: list[types.TextEdit | types.AnnotatedTextEdit], encoding: str
) -> str:
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


UTF8_BOM = b"\xef\xbb\xbf"


@dataclass
class Buffer:
    text: str
    version: int | None
    encoding: str = "utf-8"
    bom: bool = False

    def encode(self) -> bytes:
        return (UTF8_BOM if self.bom else b"") + self.text.encode(self.encoding)


def decode_file(data: bytes, *, detect: bool) -> Buffer:
    """A closed file as this editor loads it: UTF-8 (BOM set aside), or detected."""
    bom = data.startswith(UTF8_BOM)
    body = data[len(UTF8_BOM) :] if bom else data
    try:
        return Buffer(text=body.decode("utf-8"), version=None, bom=bom)
    except UnicodeDecodeError:
        if not detect:
            raise
    best = charset_normalizer.from_bytes(data).best()
    assert best is not None, "the test file is not text"
    return Buffer(text=data.decode(best.encoding), version=None, encoding=best.encoding)


def file_uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


ALL_OPERATIONS = ("create", "rename", "delete")


def capabilities(
    *,
    encodings: list[str] | None = None,
    apply_edit: bool = True,
    ask_user: bool = False,
    progress: bool = True,
    document_changes: bool = True,
    operations: tuple[str, ...] = ALL_OPERATIONS,
    change_annotations: bool = False,
    exact_encodings: bool = False,
    request_permission: bool = False,
    waiting_human: bool = False,
    show_document: bool = False,
) -> types.ClientCapabilities:
    general = types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind(e) for e in encodings] if encodings else None
    )
    workspace = types.WorkspaceClientCapabilities(
        apply_edit=apply_edit,
        workspace_edit=types.WorkspaceEditClientCapabilities(
            document_changes=document_changes,
            resource_operations=[types.ResourceOperationKind(o) for o in operations],
            change_annotation_support=(
                types.ChangeAnnotationsSupportOptions(groups_on_label=False)
                if change_annotations
                else None
            ),
        ),
        workspace_folders=True,
    )
    cadenza: dict[str, bool] = {}
    if ask_user:
        cadenza["askUser"] = True
    if exact_encodings:
        cadenza["exactEncodings"] = True
    if request_permission:
        cadenza["requestPermission"] = True
    if waiting_human:
        cadenza["waitingHuman"] = True
    return types.ClientCapabilities(
        general=general,
        workspace=workspace,
        window=types.WindowClientCapabilities(
            work_done_progress=progress,
            show_document=(
                types.ShowDocumentClientCapabilities(support=True) if show_document else None
            ),
        ),
        experimental={"cadenza": cadenza} if cadenza else None,
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
    permission_requests: list[dict[str, Any]] = field(default_factory=list)
    permission_option: str | None = "allow_once"
    """The option chosen for every permission prompt (either form); None dismisses it."""
    permission_gate: asyncio.Event | None = None
    """When set, permission prompts are answered only after this event (a slow person)."""
    human_requests: list[dict[str, Any]] = field(default_factory=list)
    human_action: str | None = "continue"
    human_gate: asyncio.Event | None = None
    """When set, ``cadenza/waitingHuman`` is answered only after this event."""
    initialize_result: types.InitializeResult | None = None
    autosave: bool = False
    late_open: bool = False
    """Like VS Code: a closed file an edit opens is reported (``didOpen`` with its text before
    the edit, then ``didChange``) only when the test calls ``report_late``, after the answer."""
    unreported: dict[str, str] = field(default_factory=dict)
    open_at_once: bool = False
    """With ``late_open``: the ``didOpen`` (text before the edit) follows the answer at once;
    only the ``didChange`` waits for ``report_late`` (vscode-languageclient delays it)."""
    exact_encodings: bool = False
    decline_confirmations: bool = False
    confirmations: list[types.ChangeAnnotation] = field(default_factory=list)
    saves: list[Path] = field(default_factory=list)
    stopped: bool = False

    def install(self) -> None:
        # pygls tags handlers with attributes, which bound methods cannot carry: wrap them.
        self.client.feature(SESSION_UPDATE)(lambda params: self._on_update(params))
        self.client.feature(types.WORKSPACE_APPLY_EDIT)(lambda params: self._on_apply_edit(params))
        self.client.feature(ASK_USER)(lambda params: self._on_ask_user(params))
        self.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(
            lambda params: self._on_message_request(params)
        )
        self.client.feature(REQUEST_PERMISSION)(self._permission_handler())
        self.client.feature(WAITING_HUMAN)(self._human_handler())

    def _permission_handler(self) -> Any:
        async def handler(params: dict[str, Any]) -> dict[str, Any]:
            self.permission_requests.append(params)
            if self.permission_gate is not None:
                await self.permission_gate.wait()
            option = self.permission_option
            if option is None:
                return {"outcome": {"outcome": "cancelled"}}
            return {"outcome": {"outcome": "selected", "optionId": option}}

        return handler

    def _human_handler(self) -> Any:
        async def handler(params: dict[str, Any]) -> dict[str, Any]:
            self.human_requests.append(params)
            if self.human_gate is not None:
                await self.human_gate.wait()
            return {"action": self.human_action}

        return handler

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
        titles = [a.title for a in params.actions or []]
        if "Allow once" in titles:  # the permission fallback
            if self.permission_option is None:
                return None
            return types.MessageActionItem(title=PERMISSION_TITLES[self.permission_option])
        if self.message_choice is None:
            return None
        return types.MessageActionItem(title=self.message_choice)

    def _on_apply_edit(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        self.edit_requests.append(params)
        if self.refuse_edits is not None:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=self.refuse_edits)
        annotations = params.edit.change_annotations or {}
        asked = [a for a in annotations.values() if a.needs_confirmation]
        self.confirmations.extend(asked)
        if asked and self.decline_confirmations:
            return types.ApplyWorkspaceEditResult(
                applied=False, failure_reason="the person declined the change"
            )
        changes: list[Any] = list(params.edit.document_changes or [])
        for uri, edits in (params.edit.changes or {}).items():
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None)
            changes.append(types.TextDocumentEdit(text_document=identifier, edits=edits))
        touched: list[str] = []
        for change in changes:
            failure = self._apply_change(change, touched)
            if failure is not None:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason=failure)
        self._after_applied(touched)
        return types.ApplyWorkspaceEditResult(applied=True)

    def _after_applied(self, touched: list[str]) -> None:
        """Save (``autosave``), or send the ``didOpen`` after the answer (``open_at_once``)."""
        for uri in dict.fromkeys(touched):
            if self.open_at_once and uri in self.unreported and uri not in self.open_uris:
                asyncio.get_running_loop().call_soon(self._open_before_edit, uri)
            if self.autosave and uri in self.buffers:
                self.save_uri(uri)

    def _apply_change(self, change: Any, touched: list[str]) -> str | None:
        if isinstance(change, types.TextDocumentEdit):
            return self._apply_text(change, touched)
        return self._apply_resource(change)

    def _apply_resource(self, change: Any) -> str | None:
        if isinstance(change, types.CreateFile):
            path = Path(to_fs_path(change.uri) or "")
            if path.exists() or change.uri in self.buffers:
                return "file exists"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"")
            self.buffers[change.uri] = Buffer(text="", version=None)
            return None
        if isinstance(change, types.DeleteFile):
            path = Path(to_fs_path(change.uri) or "")
            if not path.is_file():
                return "no such file"
            path.unlink()
            self._forget(change.uri)
            return None
        if isinstance(change, types.RenameFile):
            old, new = (
                Path(to_fs_path(change.old_uri) or ""),
                Path(to_fs_path(change.new_uri) or ""),
            )
            if not old.is_file() or new.exists():
                return "cannot rename"
            new.parent.mkdir(parents=True, exist_ok=True)
            old.rename(new)
            buffer = self.buffers.pop(change.old_uri, None)
            if change.old_uri in self.open_uris:
                self._forget(change.old_uri)
                if buffer is not None:
                    self.open(new, buffer.text)
            elif buffer is not None:
                self.buffers[change.new_uri] = buffer
            return None
        raise AssertionError(f"unknown change {change!r}")

    def _apply_text(self, change: types.TextDocumentEdit, touched: list[str]) -> str | None:
        uri = change.text_document.uri
        version = change.text_document.version
        buffer = self.buffers.get(uri)
        if buffer is None:
            data = Path(to_fs_path(uri) or "").read_bytes()
            try:
                buffer = decode_file(data, detect=self.exact_encodings)
            except UnicodeDecodeError:
                return "this editor cannot decode the file as UTF-8"
            self.buffers[uri] = buffer
            if self.late_open and not self.autosave:
                self.unreported.setdefault(uri, buffer.text)
        if uri in self.open_uris and version is not None and version != buffer.version:
            return f"version {version} is stale (buffer at {buffer.version})"
        assert not any(isinstance(e, types.SnippetTextEdit) for e in change.edits)
        edits = [e for e in change.edits if not isinstance(e, types.SnippetTextEdit)]
        buffer.text = apply_text_edits(buffer.text, edits, self.encoding)
        touched.append(uri)
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

    def _forget(self, uri: str) -> None:
        self.buffers.pop(uri, None)
        if uri in self.open_uris:
            self.open_uris.discard(uri)
            self.client.text_document_did_close(
                types.DidCloseTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=uri)
                )
            )

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
        """Update kinds in order, without ``model_reply`` (one per step; test_sessions checks
        those): the tests compare what the person sees."""
        return [
            u["sessionUpdate"]
            for u in self.updates.get(session_id, [])
            if u["sessionUpdate"] != "model_reply"
        ]

    def open(
        self, path: Path | str, text: str, version: int = 1, *, encoding: str = "utf-8"
    ) -> str:
        """``didOpen``: a file (a path) or an untitled buffer (an ``untitled:`` URI)."""
        uri = path if isinstance(path, str) else file_uri(path)
        self.buffers[uri] = Buffer(text=text, version=version, encoding=encoding)
        self.open_uris.add(uri)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=version, text=text
                )
            )
        )
        return uri

    def _open_before_edit(self, uri: str) -> None:
        buffer = self.buffers[uri]
        buffer.version = 2  # the edit's change, which the held didChange would report
        self.open_uris.add(uri)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=self.unreported[uri]
                )
            )
        )

    def report_late(self) -> None:
        """Send the ``didOpen`` (text before the edits) and ``didChange`` held by ``late_open``."""
        for uri in self.unreported:
            if uri not in self.open_uris:
                self._open_before_edit(uri)
            self.change(uri, self.buffers[uri].text)
        self.unreported.clear()

    def change(self, path: Path | str, text: str) -> None:
        uri = path if isinstance(path, str) else file_uri(path)
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

    def text_of(self, path: Path | str) -> str:
        return self.buffers[path if isinstance(path, str) else file_uri(path)].text

    def save(self, path: Path) -> None:
        """Write the buffer to disk (its encoding, BOM kept) and send ``didSave`` if open."""
        self.save_uri(file_uri(path))

    def save_uri(self, uri: str) -> None:
        path = Path(to_fs_path(uri) or "")
        path.write_bytes(self.buffers[uri].encode())
        self.saves.append(path)
        if uri in self.open_uris:
            self.client.text_document_did_save(
                types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )


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


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    assert isinstance(value, dict), value
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"


def write_user_config(env: dict[str, str], settings: dict[str, Any]) -> Path:
    """The person's own ``cadenza.toml`` (in ``env``'s config folder) holding ``settings``.

    Where a test puts what ``initializationOptions`` may not set from a folder that is not
    trusted (providers, MCP servers, the test command, the browser, the loop).
    """
    path = Path(env["XDG_CONFIG_HOME"]) / "cadenza" / "cadenza.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in settings.items()),
        encoding="utf-8",
    )
    return path


async def start_harness(
    *,
    root: Path,
    env: dict[str, str],
    caps: types.ClientCapabilities,
    init_options: Any = None,
    launcher: list[str] | None = None,
    serve_args: Sequence[str] = (),
) -> tuple[Harness, types.InitializeResult]:
    """Start ``cadenza serve`` and initialize a client.

    ``launcher``: what runs ``cadenza`` instead of ``python -m cadenza`` (e.g. under a tracer);
    ``serve_args``: more of ``cadenza serve``'s options.
    """
    config = ClientServerConfig(
        server_command=[
            *(launcher or [sys.executable, "-m", "cadenza"]),
            "serve",
            "--log-level",
            "WARNING",
            *serve_args,
        ],
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
    """Shut the server down (once; later calls do nothing)."""
    if harness.stopped:
        return
    harness.stopped = True
    try:
        await asyncio.wait_for(harness.client.shutdown_session(), WAIT_S)
    finally:
        await harness.client.stop()
