"""What ``cadenza run`` prints when stdout is not a terminal, and the change summary helpers."""

from __future__ import annotations

import io

from rich.console import Console

from cadenza.client.cli import exit_status
from cadenza.client.display import SessionDisplay, print_summary
from cadenza.client.edits import FileChange
from cadenza.client.events import (
    EditRejected,
    EditWritten,
    PermissionAnswered,
    Progress,
    ServerMessage,
    UserAsked,
)
from cadenza.client.summary import diff_stat, merge_changes, unified_diff
from cadenza.schema.updates import (
    AgentMessageChunk,
    Candidates,
    Check,
    Compaction,
    Movement,
    Rules,
    SessionEnd,
    SessionUpdateParams,
    TextBlock,
    ToolCall,
    ToolCallUpdate,
    ToolOutput,
)


def plain_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=60, highlight=False), out


def test_off_a_terminal_a_step_and_then_its_progress_now_and_then() -> None:
    """A time budget rides on every report; a CI log still gets the step's line, then a line
    of its progress at most every ``QUIET_REPORT_S``, not one every few seconds."""
    console, out = plain_console()
    display = SessionDisplay(console)
    now = [100.0]
    display.clock = lambda: now[0]
    budget = " · 2 s of 10 min"
    with display:
        display(Progress(kind="report", message="step 1/25" + budget))
        for second, tokens in ((3, 0), (10, 12), (31, 140), (40, 180), (62, 260)):
            now[0] = 100.0 + second
            doing = f"writing a reply, {tokens} tokens" if tokens else "reading the conversation"
            display(Progress(kind="report", message=f"step 1/25 · {doing} · {second} s of 10 min"))
        display(Progress(kind="report", message="plan · step 2/25" + budget))
    assert out.getvalue().splitlines() == [
        "· step 1/25",
        "  · writing a reply, 140 tokens · 31 s of 10 min",
        "  · writing a reply, 260 tokens · 62 s of 10 min",
        "· step 2/25",
    ]


def test_off_a_terminal_progress_never_cuts_a_line_of_the_agent_s_text() -> None:
    console, out = plain_console()
    display = SessionDisplay(console)
    now = [100.0]
    display.clock = lambda: now[0]
    with display:
        display(Progress(kind="report", message="step 1/25"))
        display(AgentMessageChunk(content=TextBlock(text='"""A')))
        now[0] = 140.0
        display(Progress(kind="report", message="step 1/25 · writing a reply, 8 tokens"))
        display(AgentMessageChunk(content=TextBlock(text=' tiny inventory."""\n')))
        now[0] = 180.0
        display(Progress(kind="report", message="step 1/25 · writing a reply, 20 tokens"))
    assert out.getvalue().splitlines() == [
        "· step 1/25",
        "· the agent wrote:",
        '"""A tiny inventory."""',
        "  · writing a reply, 20 tokens",
    ]


def test_plain_output_lines() -> None:
    console, out = plain_console()
    display = SessionDisplay(console, declined_note="--yes")
    with display:
        assert display.live_enabled is False
        display(Progress(kind="begin", title="Cadenza"))
        display(Progress(kind="report", message="step 1/25"))
        display(ToolCall(tool_call_id="1", title="reading app.py", kind="read"))
        display(Progress(kind="report", message="reading app.py"))
        display(ToolCallUpdate(tool_call_id="1", status="completed"))
        display(ToolCall(tool_call_id="2", title="editing app.py", kind="edit"))
        display(ToolCallUpdate(tool_call_id="2", status=None))  # a diff while running: silent
        waiting = ToolOutput(content=TextBlock(text="waiting for the workspace: session x"))
        display(ToolCallUpdate(tool_call_id="2", content=[waiting]))  # a note while running
        change = FileChange(path="app.py", kind="modified", before="a\n", after="b\n")
        display(EditWritten(label=None, changes=(change,)))
        failure = ToolOutput(content=TextBlock(text="old_string not found\ndetails"))
        display(ToolCallUpdate(tool_call_id="2", status="failed", content=[failure]))
        display(EditRejected(label=None, reason="x is outside the workspace"))
        display(UserAsked(question="Which name?", answer=None))
        display(ServerMessage(level="log", message="noise", shown=False))
        display(ServerMessage(level="warning", message="careful", shown=True))
        display(AgentMessageChunk(content=TextBlock(text="All ")))
        display(AgentMessageChunk(content=TextBlock(text="done.\nBye")))
        display(SessionEnd(stop_reason="end_turn", message="All done.\nBye", steps=2))
    assert out.getvalue().splitlines() == [
        "· Cadenza",
        "· step 1/25",
        "✓ reading app.py",
        "  · waiting for the workspace: session x",
        "  ✎ app.py",
        "✗ editing app.py · old_string not found",
        "  ✗ edit refused: x is outside the workspace",
        "? Which name? → declined (--yes)",
        "server warning: careful",
        "· the agent wrote:",
        "All done.",
        "Bye",
    ]
    assert display.streamed_text


def test_the_agents_text_is_headed_as_text_not_shown_as_a_call() -> None:
    console, out = plain_console()
    with SessionDisplay(console) as display:
        display(AgentMessageChunk(content=TextBlock(text="a.py\n```python\nx = 2\n```\n")))
        display(ToolCall(tool_call_id="1", title="writing a.py", kind="edit"))
        display(ToolCallUpdate(tool_call_id="1", status="completed"))
        display(AgentMessageChunk(content=TextBlock(text='complete(done, "fixed")')))
        display(Check(name="changed", status="passed", detail="changed: a.py"))
    assert out.getvalue().splitlines() == [
        "· the agent wrote:",
        "a.py",
        "```python",
        "x = 2",
        "```",
        "✓ writing a.py",
        "· the agent wrote:",
        'complete(done, "fixed")',
        "✓ check: something changed · changed: a.py",
    ]


def test_a_result_for_the_model_is_shown_as_its_summary() -> None:
    console, out = plain_console()
    model_text = "You already called write_file with exactly these arguments. Do not call it again."
    with SessionDisplay(console) as display:
        display(ToolCall(tool_call_id="1", title="writing t.py", kind="edit"))
        unchanged = ToolOutput(content=TextBlock(text="t.py already has exactly this text"))
        summary = "t.py unchanged: written back with the text it already had"
        display(
            ToolCallUpdate(
                tool_call_id="1", status="completed", content=[unchanged], summary=summary
            )
        )
        display(ToolCall(tool_call_id="2", title="writing t.py", kind="edit"))
        note = ToolOutput(content=TextBlock(text=model_text))
        summary = "not run again: the same call as at step 1, nothing changed since"
        display(ToolCallUpdate(tool_call_id="2", status="failed", content=[note], summary=summary))
    assert out.getvalue().splitlines() == [
        "· t.py unchanged: written back with the text it already had",
        "✗ writing t.py · not run again: the same call as at step 1, nothing changed since",
    ]


def test_a_refused_call_shows_why_in_the_persons_words() -> None:
    console, out = plain_console()
    display = SessionDisplay(console, declined_note="--yes")
    model_text = "the person rejected this run_command call; it was not run. Do not retry it: …"
    refused = ToolOutput(content=TextBlock(text=model_text))
    with display:
        for call_id, answer, kind, rule in [
            ("1", "Reject", "reject_once", "run_command:rm *"),
            ("2", "Reject", "reject_once", ""),
            ("3", None, None, ""),
        ]:
            display(ToolCall(tool_call_id=call_id, title="running `rm -rf x`", kind="execute"))
            display(
                PermissionAnswered(
                    tool="run_command",
                    tool_call_id=call_id,
                    title="running `rm -rf x`",
                    answer=answer,
                    kind=kind,
                    rule=rule,
                )
            )
            display(ToolCallUpdate(tool_call_id=call_id, status="failed", content=[refused]))
    lines = out.getvalue().splitlines()
    assert "Do not retry" not in out.getvalue()
    assert lines == [
        "? permission to call run_command (running `rm -rf x`) → Reject (your rule "
        "`run_command:rm *`)",
        "✗ running `rm -rf x` · refused by your rule `run_command:rm *`",
        "? permission to call run_command (running `rm -rf x`) → Reject",
        "✗ running `rm -rf x` · you rejected it",
        "? permission to call run_command (running `rm -rf x`) → declined (--yes)",
        "✗ running `rm -rf x` · not run: no one allowed it",
    ]
    # Declined unasked, with the rule that would let it run.
    console, out = plain_console()
    with SessionDisplay(console, declined_note="--yes") as display:
        display(
            PermissionAnswered(
                tool="run_command",
                tool_call_id="t9",
                title="running `pytest`",
                answer=None,
                kind=None,
                allow_rule="run_command:pytest *",
            )
        )
    assert out.getvalue().splitlines() == [
        "? permission to call run_command (running `pytest`) → declined (--yes; --allow "
        "'run_command:pytest *' lets it run)"
    ]


def test_checks_rules_and_a_refused_claim_are_shown() -> None:
    """The done checks and the rule files read: found by a fresh-user review to be invisible."""
    console, out = plain_console()
    display = SessionDisplay(console)
    with display:
        display(Rules(files=["AGENTS.md", "CLAUDE.md"], truncated=["CLAUDE.md"]))
        display(Rules(files=[]))  # none found: nothing to say
        display(ToolCall(tool_call_id="c", title="complete", kind="other"))
        refusal = "not accepted yet: the task is not done, a check failed:\n- the tests fail"
        text = ToolOutput(content=TextBlock(text=refusal))
        display(ToolCallUpdate(tool_call_id="c", status="failed", content=[text]))
        display(Check(name="tests", status="failed", detail="the tests fail\nFFF", refused=True))
        display(Check(name="tests", status="passed", detail="the tests pass (4 passed)"))
        display(Check(name="changed", status="skipped", detail="not run: declined"))
    assert out.getvalue().splitlines() == [
        "· project rules read: AGENTS.md, CLAUDE.md (cut to fit: CLAUDE.md)",
        "✗ complete · not accepted yet: the task is not done, a check failed: the tests fail",
        "✗ check: the tests · the tests fail (sent back to the agent)",
        "✓ check: the tests · the tests pass (4 passed)",
        "· check skipped: something changed · not run: declined",
    ]


def test_check_lines_keep_whole_words_and_drop_a_dangling_lead_in() -> None:
    """A fresh user read check lines cut mid-word and mid-parenthesis (``exit code``)."""
    console, out = plain_console()
    display = SessionDisplay(console)
    command = "`python3 -m pytest -x -q tests/test_app.py tests/test_cart.py`"
    tests = (
        f"nothing was changed in this session and the tests fail ({command}, exit code 1). "
        "The end of their output:\nF\n1 failed in 0.03s"
    )
    errors = "the language server reports errors after the changes:\n- app.py:3:5 error: bad"
    runaway = "the tests pass (" + " ".join(["word"] * 120) + ")"
    refusal = "not accepted yet: the task is not done, a check failed:\n- " + tests
    with display:
        display(Check(name="tests", status="failed", detail=tests, refused=True))
        display(Check(name="diagnostics", status="failed", detail=errors))
        display(Check(name="tests", status="passed", detail=runaway))
        display(ToolCall(tool_call_id="c", title="complete", kind="other"))
        failure = ToolOutput(content=TextBlock(text=refusal))
        display(ToolCallUpdate(tool_call_id="c", status="failed", content=[failure]))
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        "✗ check: the tests · nothing was changed in this session and the tests fail "
        f"({command}, exit code 1). (sent back to the agent)"
    )
    assert lines[1] == (
        "✗ check: no errors from the language server · the language server reports errors "
        "after the changes: app.py:3:5 error: bad"
    )
    shown = lines[2].removeprefix("✓ check: the tests · ")
    assert shown.endswith(" word…") and len(shown) <= 400
    assert lines[3] == (
        "✗ complete · not accepted yet: the task is not done, a check failed: nothing was changed "
        f"in this session and the tests fail ({command}, exit code 1)."
    )


def test_a_long_failure_is_cut_after_a_whole_word() -> None:
    console, out = plain_console()
    display = SessionDisplay(console)
    why = "the command failed because " + "something went wrong " * 20
    with display:
        display(ToolCall(tool_call_id="1", title="running `make`", kind="execute"))
        failure = ToolOutput(content=TextBlock(text=why))
        display(ToolCallUpdate(tool_call_id="1", status="failed", content=[failure]))
    shown = out.getvalue().splitlines()[0].removeprefix("✗ running `make` · ")
    kept = shown.removesuffix("…")
    assert shown.endswith("…") and len(shown) <= 200
    assert why.startswith(kept) and why[len(kept)] == " "  # the cut falls between two words


def test_summary_with_diff_and_stats() -> None:
    console, out = plain_console()
    changes = (
        FileChange(path="app.py", kind="modified", before="a\r\nb\r\n", after="a\r\nB\r\n"),
        FileChange(path="new.py", kind="created", before=None, after="x\ny\n"),
    )
    print_summary(
        console,
        stop_reason="end_turn",
        message="done",
        steps=3,
        wall_time=1.25,
        changes=changes,
        show_message=False,
    )
    text = out.getvalue()
    assert "finished · 3 steps in the session · 1.2 s" in text
    assert "end_turn" not in text
    assert "files changed (2):" in text
    assert "  M app.py  +1 -1" in text
    assert "  A new.py  +2 -0" in text
    assert "-b\n+B\n" in text
    assert "--- /dev/null\n+++ b/new.py" in text
    assert "done" not in text.replace("wall", "")


def test_summary_footer_keeps_a_number_with_its_unit_in_a_narrow_terminal() -> None:
    def footer(width: int) -> list[str]:
        out = io.StringIO()
        console = Console(file=out, force_terminal=False, width=width, highlight=False)
        print_summary(
            console,
            stop_reason="end_turn",
            message="",
            steps=2,
            wall_time=601.1,
            changes=(),
            show_message=False,
        )
        return out.getvalue().splitlines()

    narrow = footer(42)  # rich alone broke it as "... · 601.1" and "s"
    assert "finished · 2 steps in the session" in narrow and "601.1 s" in narrow
    assert "finished · 2 steps in the session · 601.1 s" in footer(80)


def test_summary_error_message_shown() -> None:
    console, out = plain_console()
    print_summary(
        console,
        stop_reason="error",
        message="HTTP 500",
        steps=1,
        wall_time=0.5,
        changes=(),
        show_message=True,
    )
    assert "error: HTTP 500" in out.getvalue()
    assert "no files changed" in out.getvalue()


def test_exit_status_table() -> None:
    assert exit_status("end_turn") == 0
    assert exit_status("error") == 1
    assert exit_status("failed") == 1
    assert exit_status("aborted") == 1
    assert exit_status("cancelled") == 1
    assert exit_status("max_steps") == 3
    assert exit_status("needs_user_input") == 3
    assert exit_status("waiting_human") == 3
    assert exit_status("something_new") == 1


def test_the_candidate_kept_is_shown_with_why() -> None:
    console, out = plain_console()
    display = SessionDisplay(console)
    with display:
        wire = {"sessionUpdate": "candidates", "tried": 3, "kept": 2, "passed": [1, 4, None]}
        params = SessionUpdateParams.model_validate(
            {"sessionId": "s", "update": {**wire, "step": 4, "of": 5}}
        )
        assert isinstance(params.update, Candidates)
        display(params.update)
        display(Candidates(step=5, tried=2, kept=1, passed=[None, None]))
        why = ["", "", "it was cut off"]
        display(Candidates(step=6, tried=3, kept=1, passed=[2, 2, None], why=why))
        why = ["it was cut off", "its change did not apply"]
        display(Candidates(step=7, tried=2, kept=1, passed=[None, None], why=why))
    assert out.getvalue().splitlines() == [
        "· Tried 3 replies against the tests on copies of the workspace; kept reply 2: 4 of 5 "
        "tests pass with it (each reply: 1, 4, not judged).",
        "· Tried 2 replies against the tests; none could be judged, kept reply 1.",
        "· Tried 3 replies against the tests on copies of the workspace; kept reply 1: 2 "
        "tests pass with it (each reply: 2; 2; not judged: it was cut off).",
        "· Tried 2 replies against the tests; none could be judged (it was cut off; its change "
        "did not apply), kept reply 1.",
    ]


def test_movements_and_compaction_in_plain_output() -> None:
    console, out = plain_console()
    display = SessionDisplay(console)
    with display:
        display(Progress(kind="begin", title="Cadenza"))
        display(Movement(workflow="pir", movement="plan", index=1))
        display(Progress(kind="report", message="plan · step 1/25"))
        display(Movement(workflow="pir", movement="implement", index=2, reason="a\nsecond line"))
        display(Progress(kind="report", message="implement · step 2/25"))
        display(Compaction(tokens_before=3000, tokens_after=1200, messages_summarized=6))
        long = Movement(workflow="pir", movement="review", index=3, reason="r" * 300)
        display(long)
    lines = out.getvalue().splitlines()
    assert lines[:5] == [
        "· Cadenza",
        "▶ movement plan",
        "· step 1/25",
        "▶ movement implement · a",
        "· step 2/25",
    ]
    assert lines[5] == "· context compacted: 6 messages summarized, 3000 → 1200 tokens"
    assert lines[6].startswith("▶ movement review · rrr")
    assert lines[6].endswith("…") and len(lines[6]) == len("▶ movement review · ") + 120


def test_summary_of_needs_user_input() -> None:
    console, out = plain_console()
    print_summary(
        console,
        stop_reason="needs_user_input",
        message="I need a name.",
        steps=2,
        wall_time=0.5,
        changes=(),
        show_message=True,
        missing_info="the new name",
        why_no_default="two names fit",
    )
    lines = out.getvalue().splitlines()
    assert "message: I need a name." in lines
    assert "needs: the new name" in lines
    assert "why no default: two names fit" in lines
    assert any(line.startswith("waiting for your answer · 2 steps ") for line in lines)


def test_merge_changes_folds_per_path() -> None:
    merged = merge_changes(
        [
            FileChange(path="a", kind="modified", before="1", after="2"),
            FileChange(path="b", kind="created", before=None, after="x"),
            FileChange(path="a", kind="modified", before="2", after="3"),
            FileChange(path="b", kind="modified", before="x", after="y"),
            FileChange(path="c", kind="created", before=None, after="tmp"),
            FileChange(path="c", kind="deleted", before="tmp", after=None),
            FileChange(path="d", kind="modified", before="same", after="other"),
            FileChange(path="d", kind="modified", before="other", after="same"),
            FileChange(path="e", kind="modified", before="e0", after="e1"),
            FileChange(path="f", kind="renamed", before="e0", after="e1", old_path="e"),
        ]
    )
    assert [(c.path, c.kind, c.before, c.after, c.old_path) for c in merged] == [
        ("a", "modified", "1", "3", None),
        ("b", "created", None, "y", None),
        ("f", "renamed", "e0", "e1", "e"),
    ]


def test_diff_helpers() -> None:
    change = FileChange(path="a", kind="modified", before="1\n2\n3\n", after="1\nzwei\n3\n4\n")
    assert diff_stat(change).added == 2 and diff_stat(change).removed == 1
    many = FileChange(
        path="big", kind="created", before=None, after="".join(f"{i}\n" for i in range(100))
    )
    lines = unified_diff(many, max_lines=10)
    assert len(lines) == 11 and lines[-1] == "… 93 more lines"


def test_an_empty_task_is_a_usage_error() -> None:
    import argparse

    from cadenza.client.options import usage_problem

    def args(task: str, **extra: object) -> argparse.Namespace:
        return argparse.Namespace(command="run", task=task, **extra)

    assert "the task is empty" in (usage_problem(args("  \n")) or "")
    assert usage_problem(args("rename x")) is None
    assert usage_problem(args("", interactive=True)) is None  # the prompt asks for it
    assert "--interactive cannot" in (
        usage_problem(args("x", interactive=True, output="json")) or ""
    )
