"""Shared pieces of the end-to-end tests: the sandbox, process watching, wire and file checks.

Everything here observes real processes and real files; nothing is replaced by a double.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from cadenza.engine.transcript import (
    EventRecord,
    MessageRecord,
    SessionEndRecord,
    SessionStartRecord,
    TranscriptRecord,
    read_transcript,
)
from cadenza.messages import AssistantMessage
from cadenza.providers.models import model_path, models_dir

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "inventory"
MODEL_NAME = "smollm2-135m"
MODEL = f"local/{MODEL_NAME}"
TASK = (
    "Rename the function calc_total to compute_total everywhere in the workspace "
    "(its definition and every use)."
)
MARK_VAR = "CADENZA_E2E_MARK"
"""Set to a fresh value in the environment of everything a test starts: the server, and the
llama-server it starts, inherit it, so they can be found in ``/proc`` (and found again if they
outlive the test)."""

FINISHED_REASONS = frozenset(
    {"end_turn", "max_steps", "needs_user_input", "waiting_human", "failed", "aborted"}
)
"""Stop reasons of a session that ran to one of its documented ends (not ``error``, not
``cancelled``): the small model's wisdom decides which one, the plumbing must deliver one."""


def require_model() -> Path:
    """The pulled SmolLM2 GGUF file; fails (not skips) with the command to run when missing."""
    path = model_path(MODEL_NAME)
    if path is None:
        pytest.fail(
            f"the end-to-end tests need the local model {MODEL_NAME}, which is not pulled "
            f"(looked in {models_dir()}): run `cadenza models pull {MODEL_NAME}` "
            "(scripts/test.sh does this before pytest)",
            pytrace=False,
        )
    return path


def cadenza_executable() -> Path:
    """The ``cadenza`` console script of the running interpreter's environment."""
    script = Path(sys.executable).parent / "cadenza"
    if not script.is_file():
        found = shutil.which("cadenza")
        if found is None:
            pytest.fail("the `cadenza` console script is not installed (pip install -e .)")
        script = Path(found)
    return script


@dataclass(frozen=True, kw_only=True)
class Sandbox:
    """A workspace copy inside a watched folder, and private state/config folders.

    Attributes:
        watched: The workspace's parent folder; nothing but the workspace may change in it.
        workspace: The copy of ``examples/inventory``.
        state: ``XDG_STATE_HOME`` of everything started (transcripts, llama-server log).
        config: ``XDG_CONFIG_HOME`` (only ``maxTokens = 256``: no user config or workflows
            leak in).
        marker: The value of ``MARK_VAR`` in ``env``.
        env: The environment to start the CLI or the server with.
    """

    watched: Path
    workspace: Path
    state: Path
    config: Path
    marker: str
    env: dict[str, str]

    @property
    def sessions(self) -> Path:
        """Where the server writes transcripts."""
        return self.state / "cadenza" / "sessions"


def make_sandbox(tmp_path: Path) -> Sandbox:
    """Copy the example workspace next to a decoy file; private XDG state and config."""
    watched = tmp_path / "watched"
    workspace = watched / "inventory"
    shutil.copytree(EXAMPLE, workspace)
    (watched / "outside.txt").write_text("a file next to the workspace; must stay as it is\n")
    state, config = tmp_path / "state", tmp_path / "config"
    state.mkdir()
    config.mkdir()
    # Structural tests: a babbling small model is cut after 256 tokens, not 1,024, so a step
    # stays short on two loaded cores (a cut reply is a normal outcome the loop handles).
    (config / "cadenza").mkdir()
    (config / "cadenza" / "cadenza.toml").write_text("maxTokens = 256\n")
    marker = uuid.uuid4().hex
    env = {k: v for k, v in os.environ.items() if k not in ("CADENZA_MODEL",)}
    env.update(
        XDG_STATE_HOME=str(state),
        XDG_CONFIG_HOME=str(config),
        # The pulled model stays where `cadenza models pull` put it (the cache dir is not
        # redirected; this pins it even so).
        CADENZA_MODELS_DIR=str(models_dir()),
        PYTHONIOENCODING="utf-8",
        **{MARK_VAR: marker},
    )
    return Sandbox(
        watched=watched,
        workspace=workspace,
        state=state,
        config=config,
        marker=marker,
        env=env,
    )


# --- files -----------------------------------------------------------------------------------


def snapshot(folder: Path) -> dict[str, str]:
    """``relative path → kind:sha256`` of everything under ``folder`` (symlinks not followed)."""
    out: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            out[rel] = f"link:{os.readlink(path)}"
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = "file:" + hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def changed_paths(before: Mapping[str, str], after: Mapping[str, str]) -> set[str]:
    """Paths added, removed or changed between two snapshots."""
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


def undecodable_files(folder: Path) -> dict[str, str]:
    """Files under ``folder`` that are not valid UTF-8, with the decoder's complaint."""
    bad: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            try:
                path.read_bytes().decode("utf-8")
            except UnicodeDecodeError as exc:
                bad[path.relative_to(folder).as_posix()] = str(exc)
    return bad


# --- processes -------------------------------------------------------------------------------


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def marked_processes(marker: str) -> dict[int, str]:
    """Running processes whose environment carries ``MARK_VAR=marker``: ``pid → command line``.

    Zombies are left out: their environment can no longer be read, and they run nothing.
    """
    needle = f"{MARK_VAR}={marker}".encode()
    found: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        if needle not in _read(f"/proc/{entry}/environ").split(b"\0"):
            continue
        cmdline = _read(f"/proc/{entry}/cmdline").replace(b"\0", b" ").decode(errors="replace")
        found[int(entry)] = cmdline.strip()
    return found


def process_state(pid: int) -> str | None:
    """The state letter of ``pid`` (``R``, ``S``, ``Z``...), or None when it no longer exists."""
    stat = _read(f"/proc/{pid}/stat").decode(errors="replace")
    if not stat:
        return None
    return stat.rpartition(")")[2].split()[0]


def is_llama_server(cmdline: str) -> bool:
    """The command line runs the ``llama-server`` binary."""
    return Path(cmdline.split(" ", 1)[0]).name == "llama-server"


def is_cadenza_serve(cmdline: str) -> bool:
    """The command line runs ``cadenza serve`` (console script or ``-m cadenza``)."""
    words = cmdline.split()
    return "serve" in words and any(Path(w).name == "cadenza" for w in words)


@dataclass
class ProcessWatch:
    """Samples the marked processes in a background thread while a test runs.

    Use as a context manager; ``seen`` collects every marked process observed (``pid →
    command line``), ``leftovers()`` lists those that still run afterwards.
    """

    marker: str
    interval: float = 0.2
    seen: dict[int, str] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> ProcessWatch:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()

    def sample(self) -> None:
        """Add the marked processes running now to ``seen``."""
        self.seen.update(marked_processes(self.marker))

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def llama_servers(self) -> dict[int, str]:
        """The llama-server processes seen."""
        return {pid: cmd for pid, cmd in self.seen.items() if is_llama_server(cmd)}

    def cadenza_servers(self) -> dict[int, str]:
        """The ``cadenza serve`` processes seen."""
        return {pid: cmd for pid, cmd in self.seen.items() if is_cadenza_serve(cmd)}

    def leftovers(self, grace: float = 10.0) -> dict[int, str]:
        """Processes seen that still run (not gone, not a zombie) after up to ``grace`` s."""
        deadline = time.monotonic() + grace
        while True:
            alive = {
                pid: cmd
                for pid, cmd in {**self.seen, **marked_processes(self.marker)}.items()
                if process_state(pid) not in (None, "Z", "X")
            }
            if not alive or time.monotonic() > deadline:
                return alive
            time.sleep(0.2)


# --- the wire --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wire:
    """The messages recorded by ``wiretap.py``, in order."""

    entries: list[dict[str, Any]]

    @classmethod
    def read(cls, path: Path) -> Wire:
        lines = path.read_text(encoding="utf-8").splitlines()
        return cls([json.loads(line) for line in lines if line.strip()])

    @classmethod
    def from_events(cls, path: Path) -> Wire:
        """What ``cadenza run --events FILE`` wrote: the server's requests and notifications."""
        lines = path.read_text(encoding="utf-8").splitlines()
        messages = [json.loads(line) for line in lines if line.strip()]
        for message in messages:
            assert isinstance(message.get("method"), str), f"{path}: not a message: {message}"
        return cls([{"dir": "s2c", "msg": m} for m in messages])

    @property
    def server_pid(self) -> int | None:
        meta = [e["msg"]["pid"] for e in self.entries if e["dir"] == "meta"]
        return meta[0] if meta else None

    def from_server(self, method: str) -> list[dict[str, Any]]:
        """Messages (requests and notifications) the server sent with ``method``."""
        return [
            e["msg"] for e in self.entries if e["dir"] == "s2c" and e["msg"].get("method") == method
        ]

    def response_to(self, request: Mapping[str, Any]) -> dict[str, Any] | None:
        """The client's response to a request the server sent."""
        for e in self.entries:
            msg = e["msg"]
            if e["dir"] == "c2s" and "method" not in msg and msg.get("id") == request.get("id"):
                return dict(msg)
        return None

    def session_updates(self, session_id: str) -> list[dict[str, Any]]:
        """The ``update`` objects of ``cadenza/sessionUpdate`` for one session, in order."""
        return [
            m["params"]["update"]
            for m in self.from_server("cadenza/sessionUpdate")
            if m["params"].get("sessionId") == session_id
        ]

    def progress_values(self, token: Any) -> list[dict[str, Any]]:
        """The ``$/progress`` values sent for one token, in order."""
        messages = self.from_server("$/progress")
        return [m["params"]["value"] for m in messages if m["params"]["token"] == token]


def uri_path(uri: str) -> Path:
    """The local path of a ``file://`` URI (asserts the scheme and an empty authority)."""
    parsed = urlparse(uri)
    assert parsed.scheme == "file", f"not a file: URI: {uri!r}"
    assert parsed.netloc in ("", "localhost"), f"a file: URI with a host: {uri!r}"
    return Path(unquote(parsed.path))


def assert_inside(uri: str, root: Path) -> None:
    """``uri`` names a file strictly inside ``root`` (after resolving ``..`` and symlinks)."""
    path = uri_path(uri).resolve()
    root = root.resolve()
    assert path != root and path.is_relative_to(root), f"{uri} is outside the workspace {root}"


def _assert_position(pos: Any, where: str) -> tuple[int, int]:
    assert isinstance(pos, dict) and set(pos) == {"line", "character"}, f"{where}: {pos!r}"
    line, char = pos["line"], pos["character"]
    assert isinstance(line, int) and isinstance(char, int), f"{where}: {pos!r}"
    assert line >= 0 and char >= 0, f"{where}: negative position {pos!r}"
    return line, char


def _assert_text_document_edit(change: Mapping[str, Any], root: Path, where: str) -> str:
    doc = change.get("textDocument")
    assert isinstance(doc, dict), f"{where}: no textDocument: {change!r}"
    assert_inside(doc["uri"], root)
    assert "version" in doc, f"{where}: textDocument without version (null or int): {doc!r}"
    assert doc["version"] is None or isinstance(doc["version"], int), f"{where}: {doc!r}"
    edits = change.get("edits")
    assert isinstance(edits, list) and edits, f"{where}: no edits: {change!r}"
    for n, edit in enumerate(edits):
        assert isinstance(edit.get("newText"), str), f"{where}.edits[{n}]: {edit!r}"
        rng = edit.get("range")
        assert isinstance(rng, dict), f"{where}.edits[{n}]: no range: {edit!r}"
        start = _assert_position(rng.get("start"), f"{where}.edits[{n}].range.start")
        end = _assert_position(rng.get("end"), f"{where}.edits[{n}].range.end")
        assert start <= end, f"{where}.edits[{n}]: range ends before it starts: {rng!r}"
    return str(doc["uri"])


def assert_well_formed_apply_edit(params: Mapping[str, Any], root: Path) -> list[str]:
    """Check one ``workspace/applyEdit`` as the server sent it; returns the URIs it touches.

    Well-formed here (LSP 3.17 ``WorkspaceEdit`` as Cadenza promises it, docs/protocol.md):
    ``documentChanges`` only (no ``changes`` map), a non-empty list of ``TextDocumentEdit``
    (versioned identifier, non-empty edits with ordered ranges and ``newText``) and
    ``CreateFile`` (followed by that file's edit when it gets text), ``DeleteFile`` and
    ``RenameFile``; every URI a ``file:`` URI strictly inside the workspace.
    """
    edit = params.get("edit")
    assert isinstance(edit, dict), f"applyEdit without an edit: {params!r}"
    assert "changes" not in edit, f"applyEdit in the `changes` form: {edit!r}"
    changes = edit.get("documentChanges")
    assert isinstance(changes, list) and changes, f"applyEdit without documentChanges: {edit!r}"
    uris: list[str] = []
    for n, change in enumerate(changes):
        where = f"documentChanges[{n}]"
        assert isinstance(change, dict), f"{where}: {change!r}"
        if "kind" in change:
            kind = change["kind"]
            assert kind in {"create", "delete", "rename"}, f"{where}: unknown operation {change!r}"
            keys = ("oldUri", "newUri") if kind == "rename" else ("uri",)
            for key in keys:
                assert_inside(change[key], root)
                uris.append(change[key])
        else:
            uris.append(_assert_text_document_edit(change, root, where))
    return uris


def iter_apply_edits(wire: Wire) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Each ``workspace/applyEdit`` request with the client's response (None if unanswered)."""
    for request in wire.from_server("workspace/applyEdit"):
        yield request, wire.response_to(request)


# --- transcripts -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Transcript:
    """One session's transcript, read with the product's own reader."""

    path: Path
    records: list[TranscriptRecord]

    @property
    def start(self) -> SessionStartRecord:
        starts = [r for r in self.records if isinstance(r, SessionStartRecord)]
        assert len(starts) == 1, f"{self.path}: {len(starts)} session_start records"
        assert self.records[0] is starts[0], f"{self.path}: session_start is not the first record"
        return starts[0]

    @property
    def end(self) -> SessionEndRecord:
        ends = [r for r in self.records if isinstance(r, SessionEndRecord)]
        assert len(ends) == 1, f"{self.path}: {len(ends)} session_end records"
        assert self.records[-1] is ends[0], f"{self.path}: session_end is not the last record"
        return ends[0]

    def events(self, kind: str) -> list[Any]:
        return [
            r.event for r in self.records if isinstance(r, EventRecord) and r.event.kind == kind
        ]

    def assistant_messages(self) -> list[AssistantMessage]:
        return [
            r.message
            for r in self.records
            if isinstance(r, MessageRecord) and isinstance(r.message, AssistantMessage)
        ]


def only_transcript(sandbox: Sandbox) -> Transcript:
    """The one transcript the run wrote into the sandbox's state folder."""
    files = sorted(sandbox.sessions.glob("*.jsonl")) if sandbox.sessions.is_dir() else []
    written = sorted(p.relative_to(sandbox.state).as_posix() for p in sandbox.state.rglob("*"))
    assert len(files) == 1, (
        f"expected one transcript in {sandbox.sessions}, found {len(files)}; "
        f"the state folder holds: {written}"
    )
    return Transcript(files[0], read_transcript(files[0]))


def assert_transcript_shape(transcript: Transcript, *, session_id: str | None = None) -> None:
    """session_start first, at least one model step with a reply, session_end last."""
    start = transcript.start
    assert start.model == MODEL, start
    if session_id is not None:
        assert start.session_id == session_id
        assert transcript.path.stem == session_id
    steps = transcript.events("step")
    assert steps, f"{transcript.path}: no model step recorded"
    assert [s.step for s in steps] == list(range(1, len(steps) + 1)), steps
    assert transcript.assistant_messages(), f"{transcript.path}: no model reply recorded"
    end = transcript.end
    finished = transcript.events("session_end")
    assert len(finished) == 1 and finished[0].stop_reason == end.stop_reason, finished


def assert_progress_on_wire(wire: Wire, *, stop_reason: str) -> list[dict[str, Any]]:
    """One server-created token; its values: ``begin`` first (title ``Cadenza``, the task), one
    ``end`` last whose message starts with the stop reason (docs/protocol.md). Returns them."""
    creates = wire.from_server("window/workDoneProgress/create")
    assert len(creates) == 1, f"expected one progress token for the session: {creates}"
    values = wire.progress_values(creates[0]["params"]["token"])
    kinds = [v.get("kind") for v in values]
    assert kinds[:1] == ["begin"] and kinds.count("begin") == 1, kinds
    assert kinds[-1:] == ["end"] and kinds.count("end") == 1, kinds
    assert set(kinds) <= {"begin", "report", "end"}, kinds
    assert (values[0].get("title"), values[0].get("message")) == ("Cadenza", TASK), values[0]
    end_message = values[-1].get("message") or ""
    assert end_message.split(":", 1)[0] == stop_reason, values[-1]
    return values


def assert_session_end_on_wire(wire: Wire, session_id: str) -> dict[str, Any]:
    """The session's first update is a ``movement``; exactly one ``session_end``, its last."""
    updates = wire.session_updates(session_id)
    assert updates and updates[0].get("sessionUpdate") == "movement", updates[:2]
    ends = [u for u in updates if u.get("sessionUpdate") == "session_end"]
    assert len(ends) == 1, f"expected one session_end, got {ends}"
    assert updates[-1] is ends[0], "a session update arrived after session_end"
    assert ends[0].get("stopReason") in FINISHED_REASONS, ends[0]
    return ends[0]


def assert_apply_edits_on_wire(wire: Wire, root: Path) -> int:
    """Every ``workspace/applyEdit`` is well-formed, inside ``root`` and was answered."""
    count = 0
    for request, response in iter_apply_edits(wire):
        assert_well_formed_apply_edit(request["params"], root)
        assert response is not None, f"applyEdit {request['id']} was never answered"
        assert isinstance(response.get("result", {}).get("applied"), bool), response
        count += 1
    return count


def assert_only_workspace_changed(sandbox: Sandbox, before: Mapping[str, str]) -> None:
    """Nothing in the watched folder but the workspace changed; the workspace is UTF-8."""
    name = sandbox.workspace.name
    outside = {
        p
        for p in changed_paths(before, snapshot(sandbox.watched))
        if p != name and not p.startswith(f"{name}/")
    }
    assert not outside, f"written outside the workspace: {sorted(outside)}"
    bad = undecodable_files(sandbox.workspace)
    assert bad == {}, f"files that are not valid UTF-8 any more: {bad}"
