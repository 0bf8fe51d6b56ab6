"""Each ``textDocument/inlineCompletion``'s own time, as the server logs it at INFO: from the
request's arrival to its response sent, and the part in the ``/infill`` call.

A real ``cadenza serve`` (the completion benchmark's editor, ``benchmarks.lsp_editor``) with
its local model's llama-server stood in for by a scripted ``/infill`` server
(``CADENZA_LOCAL_SERVER_URL``) that answers after a known delay; the editor reads the lines
from the server's stderr as the benchmark does.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from benchmarks.infilling import Document
from benchmarks.lsp_editor import Editor
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp.harness import server_env
from tests.providers.fake_sse import FakeModelServer, Sse

DELAY_S = 0.3
"""How long the scripted model server holds back its first event."""


def infill_events(text: str) -> list[str | tuple[str, str]]:
    final = {"index": 0, "content": "", "stop": True, "tokens_predicted": 1, "timings": {}}
    return [json.dumps({"index": 0, "content": text, "stop": False}), json.dumps(final)]


@pytest.fixture
def model() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest_asyncio.fixture
async def editor(model: FakeModelServer, tmp_path: Path) -> AsyncIterator[Editor]:
    env = server_env("http://127.0.0.1:9/v1", tmp_path / "home")
    env["CADENZA_MODEL"] = "local/qwen2.5-coder-1.5b"
    env["CADENZA_LOCAL_SERVER_URL"] = model.root_url
    (tmp_path / "ws").mkdir()
    editor = Editor(tmp_path / "ws", env, io.StringIO())
    await editor.start(sys.executable)
    try:
        yield editor
    finally:
        await editor.stop()


async def test_each_completion_logs_its_time_and_its_model_calls(
    editor: Editor, model: FakeModelServer
) -> None:
    model.script(Sse(events=infill_events("radius"), first_after_s=DELAY_S))
    uri = editor.uri("shapes.py")
    document = Document(text="def area(r):\n    return 3.14 * \n", line=1, column=18)
    editor.open(uri, document.text)
    text, seconds = await editor.complete(uri, document)
    assert text == "radius"  # what the editor sees is unchanged
    assert editor.last_id is not None
    timed = await editor.server_time(editor.last_id)
    assert timed is not None and timed.outcome == "completed"
    assert DELAY_S * 1000 <= timed.model_ms <= timed.request_ms <= seconds * 1000
    assert 0 <= timed.overhead_ms == timed.request_ms - timed.model_ms

    # A request past the document's end is answered with an error, timed with no model call.
    params = types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=40, character=0),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Invoked
        ),
    )
    sent = editor.lsp.protocol.send_request(
        types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id="beyond"
    )
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(asyncio.wrap_future(sent), 30)
    assert caught.value.code == types.ErrorCodes.InvalidParams
    refused = await editor.server_time("beyond")
    assert refused is not None and refused.outcome == "error" and refused.model_ms == 0
    assert len(model.requests) == 1


def test_the_log_line_is_what_the_editor_reads() -> None:
    """The format the benchmark parses, from a line the server writes."""
    editor = Editor(Path("."), {}, io.StringIO())
    editor._write_log(  # the stderr sink
        "2026-12-06 10:00:00,000 INFO cadenza.lsp.protocol: textDocument/inlineCompletion c7 "
        "for a b/c.py (superseded): 80.2 ms from arrival to response, 0.0 ms of it in the "
        "model call"
    )
    assert editor.server_times["c7"].overhead_ms == pytest.approx(80.2)
