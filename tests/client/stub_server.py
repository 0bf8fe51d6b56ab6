"""A scripted stand-in for ``cadenza serve``, so the client is tested without an agent or model.

Run as ``python stub_server.py``; it speaks LSP framing on stdio (pygls) and offers
``cadenza.startSession`` / ``cadenza.cancelSession``. The task text picks the script:

- ``edit``: progress, a tool call, a ``workspace/applyEdit`` (create ``new.txt`` + insert, and a
  CRLF edit of ``app.txt``), text chunks, ``session_end`` end_turn;
- ``refused``: an edit outside the workspace; the end message carries the failure reason;
- ``ask``: ``cadenza/askUser`` then ``window/showMessageRequest``; answers echoed in the message;
- ``wait``: nothing until ``cadenza.cancelSession``, then ``session_end`` cancelled;
- ``crash``: the process exits with status 3 after answering ``startSession``;
- ``reject``: ``startSession`` answers a JSON-RPC error;
- ``max``: ``session_end`` max_steps at once;
- ``workflow``: ``movement`` updates with a ``compaction`` between them, then ``session_end``
  needs_user_input with ``missingInfo`` and ``whyNoDefault``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

server = LanguageServer("stub-cadenza", "0")
TASKS: set[asyncio.Task[None]] = set()
CANCEL = asyncio.Event()
SESSION = "s-1"


def update(session_update: str, /, **fields: Any) -> None:
    params = {"sessionId": SESSION, "update": {"sessionUpdate": session_update, **fields}}
    server.protocol.notify("cadenza/sessionUpdate", params)


def chunk(text: str) -> None:
    update("agent_message_chunk", content={"type": "text", "text": text})


def end(stop_reason: str, message: str, steps: int) -> None:
    update("session_end", stopReason=stop_reason, message=message, steps=steps)


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def text_edit(uri: str, start: types.Position, stop: types.Position, new: str) -> Any:
    return types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
        edits=[types.TextEdit(range=types.Range(start=start, end=stop), new_text=new)],
    )


async def script_edit(root: Path) -> None:
    token = "progress-1"
    await server.work_done_progress.create_async(token)
    server.work_done_progress.begin(token, types.WorkDoneProgressBegin(title="Cadenza: edit"))
    server.work_done_progress.report(token, types.WorkDoneProgressReport(message="step 1/5"))
    update(
        "tool_call",
        toolCallId="c1",
        title="editing app.txt",
        kind="edit",
        status="in_progress",
        rawInput={"path": "app.txt"},
    )
    server.work_done_progress.report(token, types.WorkDoneProgressReport(message="editing app.txt"))
    new_uri = from_fs_path(str(root / "new.txt"))
    edit = types.WorkspaceEdit(
        document_changes=[
            types.CreateFile(uri=new_uri),
            text_edit(new_uri, pos(0, 0), pos(0, 0), "fresh\n"),
            text_edit(from_fs_path(str(root / "app.txt")), pos(1, 0), pos(1, 3), "TWO"),
        ]
    )
    result = await server.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=edit, label="edit app.txt")
    )
    status = "completed" if result.applied else "failed"
    content = [{"type": "content", "content": {"type": "text", "text": "edited"}}]
    update("tool_call_update", toolCallId="c1", status=status, content=content)
    update("tool_call", toolCallId="c2", title="searching nothing", kind="search", status="x")
    failure = [{"type": "content", "content": {"type": "text", "text": "no such pattern\nmore"}}]
    update("tool_call_update", toolCallId="c2", status="failed", content=failure)
    update("plan", entries=[])  # a kind the client does not know: ignored
    chunk("Done: ")
    chunk("edited app.txt\nand created new.txt.")
    end("end_turn", "Done: edited app.txt\nand created new.txt.", 2)
    server.work_done_progress.end(token, types.WorkDoneProgressEnd(message="end_turn"))


async def script_refused(root: Path) -> None:
    outside = from_fs_path(str(root.parent / "outside.txt"))
    edit = types.WorkspaceEdit(document_changes=[types.CreateFile(uri=outside)])
    result = await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit))
    end("error", f"applied={result.applied}: {result.failure_reason}", 1)


async def script_ask(root: Path) -> None:
    answer = await server.protocol.send_request_async(
        "cadenza/askUser", {"sessionId": SESSION, "question": "Which name?"}
    )
    choice = await server.window_show_message_request_async(
        types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message="Proceed?",
            actions=[types.MessageActionItem(title="Yes"), types.MessageActionItem(title="No")],
        )
    )
    title = choice.title if choice is not None else None
    end("end_turn", f"answer={answer.answer!r} choice={title!r}", 1)


async def script_wait(root: Path) -> None:
    chunk("working...")
    await CANCEL.wait()
    end("cancelled", "cancelled by the client", 1)


async def script_crash(root: Path) -> None:
    await asyncio.sleep(0.2)
    sys.stderr.write("stub: fatal: the model ran away\n")
    sys.stderr.flush()
    os._exit(3)


async def script_max(root: Path) -> None:
    end("max_steps", "the step bound (1) was reached", 1)


async def script_workflow(root: Path) -> None:
    update("movement", workflow="plan-implement-review", movement="plan", index=1, reason="")
    update("compaction", tokensBefore=3000, tokensAfter=1200, messagesSummarized=6)
    server.window_log_message(
        types.LogMessageParams(type=types.MessageType.Log, message="session s-1: checkpoint")
    )
    update(
        "movement",
        workflow="plan-implement-review",
        movement="implement",
        index=2,
        reason="the plan",
    )
    update(
        "session_end",
        stopReason="needs_user_input",
        message="Which name?",
        steps=2,
        missingInfo="the new name",
        whyNoDefault="two names fit",
    )


SCRIPTS = {
    "edit": script_edit,
    "refused": script_refused,
    "ask": script_ask,
    "wait": script_wait,
    "crash": script_crash,
    "max": script_max,
    "workflow": script_workflow,
}


@server.command("cadenza.startSession")
def start_session(ls: LanguageServer, args: Any) -> dict[str, str]:
    task = args["task"]
    if task not in SCRIPTS:
        raise JsonRpcInvalidParams(f"unknown stub script {task!r}")
    root = Path(to_fs_path(args["rootUri"]) or ".")
    job = asyncio.get_running_loop().create_task(SCRIPTS[task](root))
    TASKS.add(job)
    job.add_done_callback(TASKS.discard)
    return {"sessionId": SESSION}


@server.command("cadenza.cancelSession")
def cancel_session(ls: LanguageServer, args: Any) -> dict[str, bool]:
    CANCEL.set()
    return {"cancelled": args["sessionId"] == SESSION}


if __name__ == "__main__":
    server.start_io()
