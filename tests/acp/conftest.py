"""A real ACP peer: the SDK's client side over a ``cadenza acp`` subprocess's stdio."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationUrlCapabilities,
    FileSystemCapabilities,
    Implementation,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.support.fake_openai import FakeOpenAI

WAIT_S = 60.0  # generous: CI machines share their cores (a bound on hangs, not a speed test)


@dataclass
class Peer:
    """The client's side: what it received (in wire order) and how it answers."""

    answer: str | None = "allow_once"
    """The option id for permission requests; None answers ``cancelled``."""
    wire: list[dict[str, Any]] = field(default_factory=list)
    """Every JSON-RPC message, in order: ``{"dir": "in"|"out", **message}``."""
    writes: list[tuple[str, str]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=list)
    permission_asked: asyncio.Event = field(default_factory=asyncio.Event)
    hold_permission: asyncio.Event | None = None
    raw_permission: Any = None
    """When set: the raw ``result`` of every permission request (a malformed answer)."""
    buffers: dict[str, str] | None = None
    """When set: an editor that keeps writes in unsaved buffers (reads see them first)."""
    change_after_read: tuple[int, str, str] | None = None
    """``(n, path, text)``: once the n-th ``fs/read_text_file`` is answered, the person types:
    the buffer of ``path`` becomes ``text``."""
    hang_writes: bool = False
    """Never answer ``fs/write_text_file``."""
    human_answer: str = "continue"
    """The answer to a ``waiting_human`` question: ``continue`` or ``cancel`` (the option
    id; for an elicitation ``continue`` is ``accept``, ``cancel`` is ``decline``)."""
    human_gate: asyncio.Event | None = None
    """When set: a ``waiting_human`` question is answered once it is set (the person acts)."""
    human_asked: asyncio.Event = field(default_factory=asyncio.Event)
    elicitations: list[tuple[str, Any]] = field(default_factory=list)
    terminal_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """``terminal/*`` requests, in order: ``(method, params)``."""
    terminals: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)
    terminal_bytes: dict[str, bytearray] = field(default_factory=dict)
    terminal_created: asyncio.Event = field(default_factory=asyncio.Event)
    pumps: list[asyncio.Task[None]] = field(default_factory=list)

    def observe(self, event: StreamEvent) -> None:
        direction = "in" if event.direction == StreamDirection.INCOMING else "out"
        self.wire.append({"dir": direction, **event.message})

    # --- the ACP Client interface -------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass  # recorded from the wire, in order

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kw: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        if [o.option_id for o in options] == ["continue", "cancel"]:  # waiting_human
            self.human_asked.set()
            if self.human_gate is not None:
                await self.human_gate.wait()
            return RequestPermissionResponse(
                outcome=AllowedOutcome(outcome="selected", option_id=self.human_answer)
            )
        self.permission_asked.set()
        if self.hold_permission is not None:
            await self.hold_permission.wait()
        if self.raw_permission is not None:
            return self.raw_permission  # type: ignore[no-any-return]
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        if self.hang_writes:
            await asyncio.Event().wait()
        if self.buffers is not None:
            self.buffers[path] = content
            return WriteTextFileResponse()
        Path(path).write_text(content, encoding="utf-8")  # an editor that saves at once
        return WriteTextFileResponse()

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        if self.buffers is not None and path in self.buffers:
            content = self.buffers[path]
        else:
            content = Path(path).read_text(encoding="utf-8")
        if self.change_after_read is not None and self.change_after_read[0] == len(self.reads):
            _, changed, text = self.change_after_read
            self.buffers = {**(self.buffers or {}), changed: text}
        return ReadTextFileResponse(content=content)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.elicitations.append((message, mode))
        self.human_asked.set()
        if self.human_gate is not None:
            await self.human_gate.wait()
        if self.human_answer == "continue":
            return AcceptElicitationResponse(action="accept")
        return DeclineElicitationResponse(action="decline")

    async def create_terminal(
        self,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: Any = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        params = {"command": command, "args": args, "cwd": cwd, "limit": output_byte_limit}
        self.terminal_calls.append(("create", params))
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = process
        buffer = self.terminal_bytes[terminal_id] = bytearray()

        async def pump() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                buffer.extend(chunk)

        self.pumps.append(asyncio.create_task(pump()))
        self.terminal_created.set()
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self.terminal_calls.append(("wait_for_exit", {"terminalId": terminal_id}))
        code = await self.terminals[terminal_id].wait()
        return WaitForTerminalExitResponse(
            exit_code=code if code >= 0 else None,
            signal=signal.Signals(-code).name if code < 0 else None,
        )

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        self.terminal_calls.append(("output", {"terminalId": terminal_id}))
        await asyncio.sleep(0.1)  # let the pump read what is left
        process = self.terminals[terminal_id]
        code = process.returncode
        status = None
        if code is not None:
            status = TerminalExitStatus(
                exit_code=code if code >= 0 else None,
                signal=signal.Signals(-code).name if code < 0 else None,
            )
        return TerminalOutputResponse(
            output=self.terminal_bytes[terminal_id].decode(), truncated=False, exit_status=status
        )

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.terminal_calls.append(("kill", {"terminalId": terminal_id}))
        process = self.terminals[terminal_id]
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.terminal_calls.append(("release", {"terminalId": terminal_id}))
        process = self.terminals[terminal_id]
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()

    def on_connect(self, conn: Any) -> None:
        pass

    # --- what arrived ----------------------------------------------------------------------

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.wire
            if m["dir"] == "in"
            and m.get("method") == "session/update"
            and (session_id is None or m["params"]["sessionId"] == session_id)
        ]

    def request_id(self, method: str, nth: int = 0) -> Any:
        ids = [m["id"] for m in self.wire if m["dir"] == "out" and m.get("method") == method]
        return ids[nth]

    def response_index(self, request_id: Any) -> int:
        found = [
            i
            for i, m in enumerate(self.wire)
            if m["dir"] == "in" and "method" not in m and m.get("id") == request_id
        ]
        assert len(found) == 1, f"{len(found)} responses to request {request_id}"
        return found[0]

    def updates_after(self, index: int) -> list[dict[str, Any]]:
        return [
            m
            for m in self.wire[index + 1 :]
            if m["dir"] == "in" and m.get("method") == "session/update"
        ]

    def show(self, session_id: str) -> None:
        """Print the session's updates, as an agent panel would get them (``pytest -s``)."""
        print(f"\n--- session/update of {session_id} ---")
        for update in self.updates(session_id):
            print(json.dumps(update, ensure_ascii=False)[:300])


@dataclass
class Agent:
    conn: ClientSideConnection
    peer: Peer
    process: asyncio.subprocess.Process


Start = Callable[..., Awaitable[Agent]]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def agent_env(base_url: str, home: Path) -> dict[str, str]:
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
    env["CADENZA_MODEL"] = "openai/test"
    return env


@pytest_asyncio.fixture
async def start(fake: FakeOpenAI, workspace: Path, tmp_path: Path) -> AsyncIterator[Start]:
    """Start ``cadenza acp`` and initialize it; every agent started is closed afterwards."""
    env = agent_env(fake.base_url, tmp_path / "home")
    count = 0
    async with AsyncExitStack() as stack:

        async def _start(
            *,
            write: bool = True,
            answer: str | None = "allow_once",
            extra_env: dict[str, str] | None = None,
            elicitation: bool = False,
            terminal: bool = False,
            peer: Peer | None = None,
        ) -> Agent:
            nonlocal count
            count += 1
            peer = peer or Peer(answer=answer)
            stderr = stack.enter_context((tmp_path / f"agent{count}.log").open("wb"))
            conn, process = await stack.enter_async_context(
                spawn_agent_process(
                    peer,
                    sys.executable,
                    "-m",
                    "cadenza",
                    "acp",
                    env={**env, **(extra_env or {})},
                    cwd=workspace,
                    transport_kwargs={"stderr": stderr.fileno()},
                    observers=[peer.observe],
                    use_unstable_protocol=True,
                )
            )
            caps = ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=write),
                terminal=terminal,
                elicitation=(
                    ElicitationCapabilities(url=ElicitationUrlCapabilities())
                    if elicitation
                    else None
                ),
            )
            await asyncio.wait_for(
                conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=caps,
                    client_info=Implementation(name="pytest", version="0"),
                ),
                WAIT_S,
            )
            return Agent(conn=conn, peer=peer, process=process)

        yield _start
