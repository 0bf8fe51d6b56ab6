"""A file name, a title or a path from the workspace stays on its own line in what the client
prints: a line break in it is shown as ``\\x0a``, never made, so it cannot forge a line such as
``✓ tests pass`` under it."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console
from rich.prompt import Prompt

from cadenza.client.display import SessionDisplay, print_summary
from cadenza.client.edits import EditReview, FileChange
from cadenza.client.events import EditRejected, EditWritten, PermissionAnswered, Progress
from cadenza.client.permissions import PermissionAsk
from cadenza.client.prompts import TerminalPrompter
from cadenza.client.undo import print_undone
from cadenza.schema.commands import UndoneFile, UndoSessionResult
from cadenza.schema.requests import (
    PermissionOption,
    PermissionToolCall,
    RequestPermissionParams,
)
from cadenza.schema.updates import Movement, Rules, ToolCall, ToolCallUpdate

FORGED = "\n✓ tests pass"
NAME = f"notes{FORGED}.md"


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=300, highlight=False), out


def assert_not_forged(printed: str) -> None:
    lines = printed.splitlines()
    assert not any(line.strip().startswith("✓ tests pass") for line in lines), printed
    assert "notes\\x0a✓ tests pass.md" in printed


def test_names_and_titles_in_the_run_log_stay_on_one_line() -> None:
    out_console, out = console()
    display = SessionDisplay(out_console, declined_note="--yes")
    with display:
        display(Rules(files=[NAME]))
        display(Progress(kind="begin", title=NAME))
        display(Movement(workflow="pir", movement=NAME, index=1, reason="why"))
        display(ToolCall(tool_call_id="1", title=f"reading {NAME}", kind="read"))
        display(ToolCallUpdate(tool_call_id="1", status="completed"))
        display(ToolCall(tool_call_id="2", title=f"writing {NAME}", kind="edit"))
        display(ToolCallUpdate(tool_call_id="2", status="completed", summary=f"{NAME} unchanged"))
        change = FileChange(path=NAME, kind="modified", before="a\n", after="b\n")
        display(EditWritten(label=None, changes=(change,)))
        display(EditRejected(label=None, reason=f"{NAME} changed on disk"))
        display(
            PermissionAnswered(
                tool_call_id="3",
                tool="delete_file",
                title=f"deleting {NAME}",
                answer=None,
                kind=None,
            )
        )
    printed = out.getvalue()
    assert_not_forged(printed)
    assert printed.count("notes\\x0a✓ tests pass.md") == 8


def test_the_summary_lists_a_changed_file_on_one_line() -> None:
    out_console, out = console()
    change = FileChange(path=NAME, kind="created", before=None, after="x\n")
    print_summary(
        out_console,
        stop_reason="end_turn",
        message="",
        steps=1,
        wall_time=1.0,
        changes=(change,),
        show_message=False,
    )
    assert_not_forged(out.getvalue())


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    prompts: list[str] = []

    def ask(prompt: str, **kwargs: Any) -> str:
        prompts.append(prompt)
        return "n" if kwargs.get("choices") == ["y", "n"] else ""

    monkeypatch.setattr(Prompt, "ask", ask)
    return prompts


async def test_the_consent_prompts_show_a_name_on_one_line(asked: list[str]) -> None:
    out_console, out = console()
    prompter = TerminalPrompter(out_console)
    change = FileChange(path="a.py", kind="modified", before="a\n", after="b\n")
    review = EditReview(label=f"write_file {NAME}", description="", changes=(change,))
    assert await prompter.confirm_edit(review) is False
    call = PermissionToolCall(
        tool_call_id="c1", title=f"deleting {NAME}", kind="delete", raw_input={"path": NAME}
    )
    option = PermissionOption(option_id="o1", name=f"Allow {NAME}", kind="allow_once")
    params = RequestPermissionParams(session_id="s1", tool_call=call, options=[option])
    assert await prompter.permit(PermissionAsk(tool="delete_file", params=params)) is None
    assert_not_forged(out.getvalue())
    [question] = asked[1:]
    assert_not_forged(question)
    assert "1. Allow notes\\x0a✓ tests pass.md" in question


def test_undo_lists_each_file_on_one_line() -> None:
    out_console, out = console()
    result = UndoSessionResult(
        session_id="s1",
        files=[UndoneFile(path=NAME, action="moved_back", old_path=f"old-{NAME}")],
        unchanged=[NAME],
    )
    print_undone(out_console, result)
    printed = out.getvalue()
    assert_not_forged(printed)
    assert printed.splitlines() == [
        "moved_back notes\\x0a✓ tests pass.md (from old-notes\\x0a✓ tests pass.md)",
        "unchanged notes\\x0a✓ tests pass.md (already as before)",
    ]
