"""The ``cadenza/*`` schema read two ways: leniently by the client, strictly by the server."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cadenza.schema.base import strict_validate
from cadenza.schema.commands import StartSessionArgs, UndoSessionResult
from cadenza.schema.outcome import SessionOutcome
from cadenza.schema.requests import AskUserResult
from cadenza.schema.updates import (
    OtherContent,
    OtherUpdate,
    Plan,
    SessionEnd,
    SessionUpdateParams,
    ToolCallUpdate,
)


def test_a_newer_servers_additions_parse_leniently() -> None:
    params = SessionUpdateParams.model_validate(
        {
            "sessionId": "s",
            "future": 1,
            "update": {
                "sessionUpdate": "session_end",
                "stopReason": "paused_for_lunch",
                "message": "later",
                "mood": "calm",
                "missingInfo": "when",
            },
        }
    )
    end = params.update
    assert isinstance(end, SessionEnd)
    assert (end.stop_reason, end.message, end.missing_info) == ("paused_for_lunch", "later", "when")
    usage = SessionUpdateParams.model_validate(
        {"sessionId": "s", "update": {"sessionUpdate": "usage_update", "used": 1}}
    )
    assert isinstance(usage.update, OtherUpdate) and usage.update.session_update == "usage_update"
    plan = SessionUpdateParams.model_validate(
        {
            "sessionId": "s",
            "update": {"sessionUpdate": "plan", "entries": [{"content": "a", "status": "later"}]},
        }
    )
    assert isinstance(plan.update, Plan) and plan.update.entries[0].status == "later"
    update = ToolCallUpdate.model_validate(
        {
            "toolCallId": "c",
            "status": "paused",
            "content": [
                {"type": "image", "data": "…"},
                {"type": "content", "content": {"type": "text", "text": "ok"}},
            ],
        }
    )
    assert update.status == "paused" and update.text() == "ok"
    assert isinstance(update.content[0], OtherContent)
    undone = UndoSessionResult.model_validate(
        {"sessionId": "s", "files": [{"path": "a", "action": "shredded"}], "extra": True}
    )
    assert undone.files[0].action == "shredded" and undone.unchanged == []


def test_the_server_parses_strictly() -> None:
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        strict_validate(StartSessionArgs, {"task": "t", "colour": "blue"})
    with pytest.raises(ValidationError, match="stopReason"):
        strict_validate(
            SessionUpdateParams,
            {"sessionId": "s", "update": {"sessionUpdate": "session_end", "stopReason": "x"}},
        )
    with pytest.raises(ValidationError, match="unknown kind"):
        strict_validate(SessionUpdateParams, {"sessionId": "s", "update": {"sessionUpdate": "x"}})
    # A client may add fields of its own to its answers.
    assert strict_validate(AskUserResult, {"answer": "yes", "client": "x"}).answer == "yes"


def test_the_wire_keeps_its_shape() -> None:
    end = SessionEnd(stop_reason="waiting_human", message="log in", steps=3, url="https://x")
    assert list(end.wire()) == ["sessionUpdate", "stopReason", "message", "steps", "url"]
    args = StartSessionArgs(task="t", root_uri="file:///w", model=None)
    assert args.wire() == {"task": "t", "rootUri": "file:///w", "workflow": "default"}


def test_one_outcome_from_the_server_to_the_client() -> None:
    outcome = SessionOutcome(
        stop_reason="needs_user_input",
        message="Which name?",
        steps=2,
        missing_info="the name",
        why_no_default="two fit",
    )
    end = SessionEnd.of(outcome)
    assert end.wire() == {
        "sessionUpdate": "session_end",
        "stopReason": "needs_user_input",
        "message": "Which name?",
        "steps": 2,
        "missingInfo": "the name",
        "whyNoDefault": "two fit",
    }
    received = SessionEnd.model_validate(end.wire()).outcome()
    assert type(received) is SessionOutcome and received == outcome and received.waiting
    with pytest.raises(ValidationError):
        outcome.message = "changed"  # type: ignore[misc]
