"""``update_plan`` answered by the engine: a valid list becomes the plan, a bad one an error."""

from __future__ import annotations

import json

from cadenza.engine.plan import MAX_ENTRIES, decide_plan
from cadenza.messages import ToolCall


def plan_call(arguments: object) -> ToolCall:
    return ToolCall(id="p", name="update_plan", arguments=json.dumps(arguments))


def test_a_valid_list_is_the_plan_and_says_how_far_it_is() -> None:
    content, plan = decide_plan(
        plan_call(
            {
                "entries": [
                    {"content": " Read the code ", "status": "completed"},
                    {"content": "Fix it", "status": "in_progress"},
                ]
            }
        )
    )
    assert content == "plan updated (1 of 2 done)"
    assert plan is not None
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Read the code", "completed"),
        ("Fix it", "in_progress"),
    ]


def test_bad_lists_are_errors_the_model_reads() -> None:
    bad = [
        {"entries": [{"content": "x", "status": "done"}]},
        {"entries": [{"content": "", "status": "pending"}]},
        {"entries": [{"content": "x", "status": "pending", "priority": "high"}]},
        {"entries": [{"content": "x", "status": "pending"}] * (MAX_ENTRIES + 1)},
        {},
    ]
    for arguments in bad:
        content, plan = decide_plan(plan_call(arguments))
        assert plan is None, arguments
        assert content.startswith("invalid arguments for update_plan"), content
    content, plan = decide_plan(ToolCall(id="p", name="update_plan", arguments="{not json"))
    assert plan is None and "not valid JSON" in content
