"""``textDocument/inlineCompletion`` on the LSP face with a provider that cannot fill in the middle.

The server's model here is ``openai/test`` (a fake OpenAI server): completions need a local
model, so every request is answered with no items, the chat endpoint is never called, the
editor's log hears why once, and a position outside the document is an ``InvalidParams``
error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Connect
from tests.lsp.harness import file_uri
from tests.support.fake_openai import FakeOpenAI


def params(uri: str, line: int, character: int) -> types.InlineCompletionParams:
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Automatic
        ),
    )


async def test_a_non_fim_model_answers_no_items_and_bad_positions_are_refused(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    editor = await connect(
        init_options={"model": "openai/test"}, user_config={"model": "openai/test"}
    )
    uri = editor.open(workspace / "a.py", "def f(x):\n    return \n")
    answer = await editor.client.text_document_inline_completion_async(params(uri, 1, 11))
    assert isinstance(answer, types.InlineCompletionList) and list(answer.items) == []
    closed = file_uri(workspace / "closed.py")
    (workspace / "closed.py").write_text("x = 1\n")
    answer = await editor.client.text_document_inline_completion_async(params(closed, 0, 4))
    assert isinstance(answer, types.InlineCompletionList) and list(answer.items) == []
    with pytest.raises(JsonRpcException) as refused:
        await editor.client.text_document_inline_completion_async(params(uri, 40, 0))
    assert refused.value.code == -32602
    assert refused.value.message.startswith("Invalid Params: position 40:0 is past the")
    assert "count from 0" in refused.value.message
    answer = await editor.client.text_document_inline_completion_async(params(uri, 1, 10))
    assert isinstance(answer, types.InlineCompletionList) and list(answer.items) == []
    assert fake.requests == []
    said = [m for m in editor.client.log_messages if "completions are off" in m.message]
    assert len(said) == 1 and said[0].type == types.MessageType.Warning
    assert "openai/test cannot fill in the middle" in said[0].message
