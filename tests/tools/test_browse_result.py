"""Interactive-browse result: waiting_human only with a real browser session id."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cadenza.tools.base import ToolResult
from cadenza.tools.dispatch.browse_result import WaitingHuman, parse_browse_output

VALID = {
    "action": "waiting_human",
    "waitReason": "log in to the staging site",
    "sessionId": "br-42",
    "url": "https://staging.example.test/login",
}


def _error(output: str | dict[str, Any]) -> ToolResult:
    parsed = parse_browse_output(output)
    assert isinstance(parsed, ToolResult), parsed
    assert parsed.is_error
    assert parsed.content.startswith("malformed browse output: ")
    return parsed


def test_regression_waiting_human_without_session_id_is_an_error() -> None:
    """A waiting state that could never be resumed must not exist: no sessionId, no wait."""
    output = json.dumps({"action": "waiting_human", "waitReason": "solve the CAPTCHA"})
    result = _error(output)
    assert "sessionId is missing" in result.content
    assert "non-empty string sessionId and waitReason" in result.content
    assert not isinstance(parse_browse_output(output), WaitingHuman)


def test_null_session_id_is_missing() -> None:
    result = _error({"action": "waiting_human", "waitReason": "r", "sessionId": None})
    assert "sessionId is missing" in result.content


@pytest.mark.parametrize("empty", ["", "   "])
def test_empty_session_id_is_an_error(empty: str) -> None:
    result = _error({"action": "waiting_human", "waitReason": "r", "sessionId": empty})
    assert "sessionId is empty" in result.content


@pytest.mark.parametrize(("value", "type_name"), [(42, "int"), (["a"], "list"), (True, "bool")])
def test_non_string_session_id_is_an_error(value: object, type_name: str) -> None:
    result = _error({"action": "waiting_human", "waitReason": "r", "sessionId": value})
    assert f"sessionId must be a string, got {type_name}" in result.content


def test_missing_or_empty_wait_reason_is_an_error() -> None:
    assert "waitReason is missing" in _error({"action": "waiting_human", "sessionId": "s"}).content
    both = _error({"action": "waiting_human", "sessionId": "", "waitReason": ""}).content
    assert "sessionId is empty" in both and "waitReason is empty" in both


def test_non_string_url_is_an_error() -> None:
    result = _error({**VALID, "url": 3})
    assert "url must be a string, got int" in result.content


def test_valid_output_is_a_typed_waiting_state() -> None:
    parsed = parse_browse_output(json.dumps(VALID))
    assert parsed == WaitingHuman(
        wait_reason="log in to the staging site",
        browser_session_id="br-42",
        url="https://staging.example.test/login",
    )
    assert isinstance(parsed, WaitingHuman) and parsed.kind == "waiting_human"
    result = parsed.tool_result()
    assert not result.is_error
    assert "log in to the staging site" in result.content and "br-42" in result.content


def test_valid_output_as_a_dict_and_without_url() -> None:
    output = {"action": "waiting_human", "waitReason": "confirm", "sessionId": "s1", "url": ""}
    assert parse_browse_output(output) == WaitingHuman(
        wait_reason="confirm", browser_session_id="s1", url=None
    )


def test_waiting_state_is_frozen() -> None:
    parsed = parse_browse_output(VALID)
    assert isinstance(parsed, WaitingHuman)
    with pytest.raises(AttributeError):
        parsed.browser_session_id = ""  # type: ignore[misc]


def test_ordinary_output_is_a_normal_result_with_the_text() -> None:
    text = json.dumps({"action": "navigated", "url": "https://example.test", "title": "Home"})
    parsed = parse_browse_output(text)
    assert parsed == ToolResult(content=text)


def test_ordinary_dict_without_action_is_a_normal_result() -> None:
    parsed = parse_browse_output({"text": "page body", "sessionId": ""})
    assert isinstance(parsed, ToolResult) and not parsed.is_error
    assert json.loads(parsed.content) == {"text": "page body", "sessionId": ""}


def test_output_that_is_not_json_is_an_error() -> None:
    assert "not JSON" in _error("Waiting for the human to log in").content


@pytest.mark.parametrize(("text", "type_name"), [("[1, 2]", "list"), ('"waiting_human"', "str")])
def test_json_that_is_not_an_object_is_an_error(text: str, type_name: str) -> None:
    assert f"expected a JSON object, got {type_name}" in _error(text).content


def test_long_malformed_output_is_shown_cut() -> None:
    result = _error("x" * 10_000)
    assert len(result.content) < 1_000
