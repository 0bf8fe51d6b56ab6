"""Interactive-browse result: tell a browse tool's ``waiting_human`` output from the rest.

The interactive browse tool answers with a JSON object. When a person must act in the browser
(log in, solve a CAPTCHA, confirm a payment) it answers
``{"action": "waiting_human", "waitReason": str, "sessionId": str, "url"?: str, "actUrl"?: str}``
(``url``: the page; ``actUrl``: where the person can act on it when that is elsewhere, e.g. a
DevTools screencast of a headless browser); the movement
then ends with a typed waiting state and the session resumes that browser session (by its
``sessionId``) once the person is done.

A waiting state without a browser session id could never be resumed, so such output is malformed:
it becomes an error result the model reads, never a ``WaitingHuman`` with a missing id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from cadenza.secrets import redact_then_cut
from cadenza.tools.base import HumanWait, ToolResult

WAITING_HUMAN = "waiting_human"
_SNIPPET_CHARS = 300


@dataclass(frozen=True, kw_only=True)
class WaitingHuman:
    """A browse call that waits for a person.

    Attributes:
        wait_reason: What the person must do (``waitReason``), non-empty.
        browser_session_id: The browse tool's session to resume (``sessionId``), non-empty.
        url: The page, when the tool gave one.
        act_url: Where the person acts on it, when not in a browser window already on their
            screen (e.g. the DevTools page of a headless browser).
    """

    kind: Literal["waiting_human"] = "waiting_human"
    wait_reason: str
    browser_session_id: str
    url: str | None = None
    act_url: str | None = None

    def tool_result(self) -> ToolResult:
        """The result the model reads for the call that started the wait.

        It carries ``waiting_human``, so the movement ends with a waiting state after the batch.
        """
        where = f" at {self.url}" if self.url else ""
        return ToolResult(
            content=(
                f"waiting for the person{where}: {self.wait_reason} "
                f"(browser session {self.browser_session_id})"
            ),
            waiting_human=HumanWait(
                wait_reason=self.wait_reason,
                browser_session_id=self.browser_session_id,
                url=self.url,
                act_url=self.act_url,
            ),
        )


def _malformed(what: str, shown: str) -> ToolResult:
    snippet = redact_then_cut(shown, _SNIPPET_CHARS)
    return ToolResult(
        content=f"malformed browse output: {what}. Output was: {snippet}", is_error=True
    )


def _text_problem(obj: Mapping[str, Any], field: str) -> str | None:
    """Why ``obj[field]`` is not a non-empty string, or None when it is one."""
    if field not in obj or obj[field] is None:
        return f"{field} is missing"
    value = obj[field]
    if not isinstance(value, str):
        return f"{field} must be a string, got {type(value).__name__}"
    if not value.strip():
        return f"{field} is empty"
    return None


def _url(obj: Mapping[str, Any], key: str = "url") -> tuple[str | None, str | None]:
    """``(url, problem)``: an absent, null or blank ``key`` is None; a non-string is a problem."""
    value = obj.get(key)
    if value is None:
        return None, None
    if not isinstance(value, str):
        return None, f"{key} must be a string, got {type(value).__name__}"
    return (value.strip() or None), None


def _waiting(obj: Mapping[str, Any], shown: str) -> WaitingHuman | ToolResult:
    problems = [p for p in (_text_problem(obj, "sessionId"), _text_problem(obj, "waitReason")) if p]
    url, url_problem = _url(obj)
    act_url, act_problem = _url(obj, "actUrl")
    problems += [p for p in (url_problem, act_problem) if p]
    if problems:
        what = (
            f"action is {WAITING_HUMAN!r} but {'; '.join(problems)} (a waiting_human result "
            "needs non-empty string sessionId and waitReason)"
        )
        return _malformed(what, shown)
    return WaitingHuman(
        wait_reason=obj["waitReason"],
        browser_session_id=obj["sessionId"],
        url=url,
        act_url=act_url,
    )


def parse_browse_output(output: str | Mapping[str, Any]) -> WaitingHuman | ToolResult:
    """Classify a browse tool's output.

    Args:
        output: The tool's output: JSON text, or the object already decoded.

    Returns:
        ``WaitingHuman`` when ``action == "waiting_human"`` and both ``waitReason`` and
        ``sessionId`` are non-empty strings (blank counts as empty); a normal ``ToolResult`` with
        the output text for any other JSON object; an error ``ToolResult`` naming the problem for
        text that is not JSON, JSON that is not an object, or a ``waiting_human`` object with a
        missing, empty or non-string ``sessionId``/``waitReason`` (or a non-string ``url``).
    """
    if isinstance(output, str):
        shown = output
        try:
            obj: Any = json.loads(output)
        except ValueError as exc:
            return _malformed(f"not JSON ({exc})", shown)
    else:
        obj = output
        shown = json.dumps(dict(output), ensure_ascii=False, default=str)
    if not isinstance(obj, Mapping):
        return _malformed(f"expected a JSON object, got {type(obj).__name__}", shown)
    if obj.get("action") == WAITING_HUMAN:
        return _waiting(obj, shown)
    return ToolResult(content=shown)


def browse_tool_result(output: str | Mapping[str, Any]) -> ToolResult:
    """The tool result for a browse tool's output (see ``parse_browse_output``).

    A valid ``waiting_human`` object becomes a result carrying ``waiting_human``; anything
    else is the plain (or error) result ``parse_browse_output`` gives.
    """
    parsed = parse_browse_output(output)
    return parsed.tool_result() if isinstance(parsed, WaitingHuman) else parsed
