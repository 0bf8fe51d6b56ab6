"""Provider failures read as one sentence with the fix, never the raw JSON body."""

from __future__ import annotations

import json

import httpx
import pytest

from cadenza.providers.error_text import server_message, status_sentence, transport_sentence

OPENAI_401 = json.dumps(
    {
        "error": {
            "message": "Incorrect API key provided: sk-abc.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
)


def test_401_names_the_key_variable_and_no_json() -> None:
    text = status_sentence("openai/gpt-4.1", 401, OPENAI_401)
    assert text == (
        "openai/gpt-4.1: the model server refused the API key (HTTP 401: Incorrect API key "
        "provided: sk-abc.); set OPENAI_API_KEY to a valid key."
    )
    assert "{" not in text
    assert "ANTHROPIC_API_KEY" in status_sentence("anthropic/claude", 401, "{}")
    assert "check its API key" in status_sentence("ollama/llama3", 403, "")


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (404, "does not know the model 'gpt-9'"),
        (429, "rate limit or quota was reached"),
        (500, "the model server failed"),
        (400, "refused the request"),
    ],
)
def test_each_status_says_what_to_do(status: int, words: str) -> None:
    body = json.dumps({"type": "error", "error": {"type": "x", "message": "said so"}})
    text = status_sentence("openai/gpt-9", status, body)
    assert words in text and f"(HTTP {status}: said so)" in text
    assert text.endswith(".") and "{" not in text


def test_bodies_that_are_pages_or_odd_json_are_left_out() -> None:
    assert server_message("<html><body>Bad gateway</body></html>") == ""
    assert server_message("[1, 2]") == ""
    assert server_message('{"message": "plain"}') == "plain"
    assert server_message("plain text\n  error") == "plain text error"
    assert len(server_message("x" * 1000)) == 300


def test_a_refused_connection_names_the_address_and_the_fix() -> None:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    exc = httpx.ConnectError("[Errno 111] Connection refused", request=request)
    text = transport_sentence("openai/test", exc, attempts=4)
    assert text == (
        "openai/test: cannot connect to http://127.0.0.1:9 (ConnectError: [Errno 111] "
        "Connection refused) after 4 attempts; start the model server, or set the provider's "
        "base URL (e.g. OPENAI_BASE_URL)."
    )
    assert transport_sentence("openai/test", httpx.ReadError("x", request=request)) is None
