"""The ACP face's pure parts: prompt text, stop reasons, final messages, updates, options."""

from __future__ import annotations

from pathlib import Path

from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    RequestPermissionResponse,
    ResourceContentBlock,
    TextContentBlock,
)

from cadenza.acp.permissions import permission_answer, permission_options, request_options
from cadenza.acp.turns import acp_stop_reason, final_message, prompt_text
from cadenza.acp.updates import UpdateMapper, first_sentence, replay_updates
from cadenza.engine.events import (
    FileEdited,
    MovementStarted,
    SessionFinished,
    StepStarted,
    ToolCallFinished,
    ToolCallStarted,
    WorkspaceWaited,
)
from cadenza.engine.permissions import PermissionAnswer, PermissionRequest
from cadenza.engine.transcript import EventRecord, MessageRecord, SessionStartRecord
from cadenza.engine.workflows import load_catalog
from cadenza.messages import AssistantMessage, UserMessage
from cadenza.permission_rules import suggest_rule


def dump(update: object) -> dict:
    return update.model_dump(mode="json", by_alias=True, exclude_none=True)  # type: ignore[attr-defined]


def test_prompt_text_joins_text_and_mentions() -> None:
    blocks = [
        TextContentBlock(type="text", text="fix"),
        ResourceContentBlock(type="resource_link", uri="file:///w/a.py", name="a.py"),
        TextContentBlock(type="text", text="  "),
    ]
    assert prompt_text(blocks) == "fix\n@file:///w/a.py"


def test_stop_reasons() -> None:
    assert [
        acp_stop_reason(r)
        for r in ("end_turn", "needs_user_input", "failed", "aborted", "error", "waiting_human")
    ] == ["end_turn"] * 6
    assert acp_stop_reason("max_steps") == "max_turn_requests"
    assert acp_stop_reason("cancelled") == "cancelled"


def test_final_message_is_not_repeated_and_marks_failures() -> None:
    assert final_message("end_turn", "done.", "done.\n") is None
    assert final_message("end_turn", "summary", "") == "summary"
    assert final_message("needs_user_input", "Which file?", "") == "Which file?"
    assert final_message("failed", "no tests", "") == "The task failed: no tests"
    assert final_message("error", "HTTP 500", "") == "Error: HTTP 500"
    assert final_message("cancelled", "x", "") is None
    assert final_message("end_turn", "", "") is None


def test_permission_options_and_answers() -> None:
    options = permission_options()
    assert [(o.option_id, o.kind, o.name) for o in options] == [
        ("allow_once", "allow_once", "Allow once"),
        ("allow_always", "allow_always", "Always allow"),
        ("reject_once", "reject_once", "Reject"),
        ("reject_always", "reject_always", "Always reject"),
    ]

    def answer(outcome: AllowedOutcome | DeniedOutcome) -> PermissionAnswer:
        return permission_answer(RequestPermissionResponse(outcome=outcome))

    assert answer(AllowedOutcome(outcome="selected", option_id="reject_always")) == (
        PermissionAnswer(outcome="selected", option="reject_always")
    )
    assert answer(AllowedOutcome(outcome="selected", option_id="bogus")).outcome == "cancelled"
    assert answer(DeniedOutcome(outcome="cancelled")).outcome == "cancelled"


def test_the_pattern_option_is_offered_and_read_for_a_command() -> None:
    command = {"command": "pytest -q"}
    request = PermissionRequest(
        tool_call_id="c1",
        name="run_command",
        title="running `pytest -q`",
        kind="execute",
        raw_input='{"command": "pytest -q"}',
        suggested=suggest_rule("run_command", command),
    )
    assert [(o.option_id, o.kind, o.name) for o in request_options(request)][:2] == [
        ("allow_once", "allow_once", "Allow once"),
        (
            "allow_pattern",
            "allow_always",
            "Always allow `pytest …` in this workspace "
            "(it runs this workspace's conftest.py and tests)",
        ),
    ]
    chosen = RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id="allow_pattern")
    )
    assert permission_answer(chosen, pattern_offered=True) == PermissionAnswer(
        outcome="selected", option="allow_always", pattern=True
    )
    assert permission_answer(chosen).outcome == "cancelled"  # not offered: unknown
    plain = PermissionRequest(
        tool_call_id="c2", name="delete_file", title="deleting x", kind="delete", raw_input="{}"
    )
    assert [o.option_id for o in request_options(plain)] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]


def test_finished_call_keeps_its_diff(tmp_path: Path) -> None:
    mapper = UpdateMapper(tmp_path)
    start = mapper.update(
        ToolCallStarted(
            tool_call_id="c1",
            name="write_file",
            title="writing n.py",
            tool_kind="edit",
            raw_input='{"path": "n.py"',  # cut arguments stay text
        )
    )
    assert dump(start)["rawInput"] == '{"path": "n.py"'
    edited = mapper.update(
        FileEdited(tool_call_id="c1", path="n.py", old_text=None, new_text="x\n")
    )
    diff = {"type": "diff", "path": str(tmp_path / "n.py"), "newText": "x\n"}
    assert dump(edited)["content"] == [diff]
    done = dump(
        mapper.update(ToolCallFinished(tool_call_id="c1", status="completed", content="ok"))
    )
    assert done["content"] == [diff, {"type": "content", "content": {"type": "text", "text": "ok"}}]
    assert mapper.update(StepStarted(step=1, max_steps=5)) is None


def test_a_call_waiting_for_the_workspace_says_for_whom(tmp_path: Path) -> None:
    waited = WorkspaceWaited(tool_call_id="c1", holder="session x (process 7) is running `make`")
    update = dump(UpdateMapper(tmp_path).update(waited))
    text = "waiting for the workspace: session x (process 7) is running `make`"
    assert update["toolCallId"] == "c1" and "status" not in update
    assert update["content"] == [{"type": "content", "content": {"type": "text", "text": text}}]


def test_replay_sends_the_final_message_of_a_complete_call(tmp_path: Path) -> None:
    records = [
        SessionStartRecord(
            session_id="s", task="t", root=str(tmp_path), workflow="default", model="m"
        ),
        MessageRecord(message=UserMessage(content="t", tag="task")),
        MessageRecord(message=UserMessage(content="Movement 'x' starts", tag="movement")),
        EventRecord(event=StepStarted(step=1, max_steps=5)),
        MessageRecord(message=AssistantMessage(content="")),
        EventRecord(event=SessionFinished(stop_reason="end_turn", message="All done", steps=1)),
        EventRecord(event=StepStarted(step=2, max_steps=5)),
        MessageRecord(message=AssistantMessage(content="plain answer")),
        EventRecord(event=SessionFinished(stop_reason="end_turn", message="plain answer", steps=2)),
    ]
    texts = [
        (u["sessionUpdate"], u["content"]["text"])
        for u in map(dump, replay_updates(records, tmp_path))
    ]
    assert texts == [
        ("user_message_chunk", "t"),
        ("agent_message_chunk", "All done"),
        ("agent_message_chunk", "plain answer"),
    ]


def test_plan_follows_the_movements_of_a_multi_movement_workflow(tmp_path: Path) -> None:
    workflows = load_catalog(None).workflows
    mapper = UpdateMapper(tmp_path, workflows)

    def plan(event: MovementStarted | SessionFinished) -> list[tuple[str, str]] | None:
        update = mapper.update(event)
        if update is None:
            return None
        return [(e["content"].split(":")[0], e["status"]) for e in dump(update)["entries"]]

    wf = "plan-implement-review"
    assert plan(MovementStarted(workflow="default", movement="work", index=1)) is None
    assert plan(MovementStarted(workflow=wf, movement="plan", index=1)) == [
        ("plan", "in_progress"),
        ("implement", "pending"),
        ("review", "pending"),
    ]
    plan(MovementStarted(workflow=wf, movement="implement", index=2))
    assert plan(MovementStarted(workflow=wf, movement="review", index=3)) == [
        ("plan", "completed"),
        ("implement", "completed"),
        ("review", "in_progress"),
    ]
    assert plan(MovementStarted(workflow=wf, movement="implement", index=4)) == [
        ("plan", "completed"),
        ("implement", "in_progress"),
        ("review", "completed"),
    ]
    assert plan(SessionFinished(stop_reason="cancelled")) is None
    assert plan(SessionFinished(stop_reason="end_turn", message="ok")) == [
        ("plan", "completed"),
        ("implement", "completed"),
        ("review", "completed"),
    ]
    # A new run starts a new plan.
    assert plan(MovementStarted(workflow=wf, movement="plan", index=1)) == [
        ("plan", "in_progress"),
        ("implement", "pending"),
        ("review", "pending"),
    ]


def test_plan_entries_are_whole_sentences(tmp_path: Path) -> None:
    workflows = load_catalog(None).workflows
    mapper = UpdateMapper(tmp_path, workflows)
    update = mapper.update(
        MovementStarted(workflow="plan-implement-review", movement="plan", index=1)
    )
    assert update is not None
    assert [e["content"] for e in dump(update)["entries"]] == [
        "plan: Read what the task needs and make a short plan: which files change and how.",
        "implement: Carry out the plan: make the edits.",
        "review: Check the changes against the task: read the edited files.",
    ]


def test_first_sentence() -> None:
    assert first_sentence("One line\nwrapped here. Second.") == "One line wrapped here."
    assert first_sentence("Para one\n\nPara two.") == "Para one"
    assert first_sentence("") == ""
    long = first_sentence("word " * 100, limit=20)
    assert long == "word word word word…"
