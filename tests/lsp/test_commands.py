"""Malformed command arguments are JSON-RPC errors; the server stays alive."""

from __future__ import annotations

from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.harness import Harness
from tests.support.fake_openai import FakeOpenAI, text

INVALID_PARAMS = -32602

START_CASES: list[tuple[list[Any], str]] = [
    ([{}], "task: Field required"),
    ([{"task": 5, "model": "openai/test"}], "task: Input should be a valid string"),
    ([{"task": "   ", "model": "openai/test"}], "task must not be blank"),
    (["do it"], "the argument must be a JSON object, not a string"),
    ([["do it"]], "the argument must be a JSON object, not an array"),
    ([], "expected exactly one argument (an object), got 0"),
    ([{"task": "a"}, {"task": "b"}], "expected exactly one argument (an object), got 2"),
    ([{"task": "x", "model": "openai/test", "colour": 1}], "colour: Extra inputs"),
    (
        [{"task": "x", "model": "openai/test", "rootUri": "file:///no/such/folder"}],
        "is not an existing folder",
    ),
    ([{"task": "x", "model": "openai/test", "rootUri": "https://example.com/"}], "file: URI"),
]
UNUSABLE_CASES: list[tuple[dict[str, Any], str]] = [
    (
        {"task": "x", "model": "bogus/x"},
        "unknown provider 'bogus' in the model 'bogus/x'. The known providers are openai, ",
    ),
    ({"task": "x", "model": "no-slash"}, "model 'no-slash' must be written PROVIDER/MODEL"),
]
"""Well-formed arguments naming what cannot be used: the message is the person's, unprefixed."""


async def test_malformed_arguments_are_errors_and_the_server_lives(
    editor: Harness, fake: FakeOpenAI
) -> None:
    for arguments, message in START_CASES:
        with pytest.raises(JsonRpcException) as caught:
            await editor.execute("cadenza.startSession", *arguments)
        assert caught.value.code == INVALID_PARAMS, arguments
        assert caught.value.message.startswith("Invalid Params: cadenza.startSession: ")
        assert message in caught.value.message, (arguments, caught.value.message)

    for argument, message in UNUSABLE_CASES:
        with pytest.raises(JsonRpcException) as caught:
            await editor.execute("cadenza.startSession", argument)
        assert caught.value.code == INVALID_PARAMS, argument
        assert caught.value.message.startswith(message), caught.value.message
        assert "Invalid Params" not in caught.value.message

    for arguments in ([{}], [{"sessionId": 3}], ["abc"], []):
        with pytest.raises(JsonRpcException) as caught:
            await editor.execute("cadenza.cancelSession", *arguments)
        assert caught.value.code == INVALID_PARAMS
        assert caught.value.message.startswith("Invalid Params: cadenza.cancelSession: ")

    fake.script(text("still here"))
    _, end = await editor.run("are you alive?")
    assert end == {
        "sessionUpdate": "session_end",
        "stopReason": "end_turn",
        "message": "still here",
        "steps": 1,
    }
    assert editor.client.messages == []  # no error popups for request errors
