"""Done means checked: the rename and "nothing changed" checks at a claim of done."""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.checks import MAX_REFUSALS, Done, changed_check
from cadenza.engine.events import CheckRan, ToolCallFinished
from cadenza.engine.leftovers import MAX_FILE_BYTES, find_uses
from cadenza.engine.loop import CHECKS_SUMMARY
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.variants import API_LOOP, LOCAL_LOOP, LoopSettings
from cadenza.messages import ToolMessage, UserMessage
from cadenza.tools.host import DocumentSnapshot
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply

TOOL_LOOP = LOCAL_LOOP.replace(edit="old_string", ending="complete")
"""The small-model profile speaking tool calls, as these scripted models do."""

TASK = "Rename the function calc_total to compute_total everywhere in the workspace."


def inventory(root: Path) -> None:
    (root / "inventory.py").write_text("def calc_total(items):\n    return sum(items)\n")
    (root / "report.py").write_text(
        "from inventory import calc_total\n\n\ndef main():\n    print(calc_total([1]))\n"
    )


def make_session(
    root: Path, provider: ScriptedProvider, loop: LoopSettings, task: str = TASK
) -> tuple[Session, MemoryEditor]:
    editor = MemoryEditor()
    session = Session(
        session_id="s1",
        task=task,
        root=root,
        provider=provider,
        editor=editor,
        settings=SessionSettings(loop=loop, max_steps=10),
    )  # type: ignore[arg-type]
    return session, editor


def checks(editor: MemoryEditor) -> list[CheckRan]:
    return [e for e in editor.events if isinstance(e, CheckRan)]


def tool_results(session: Session) -> list[str]:
    return [m.content for m in session.messages if isinstance(m, ToolMessage)]


RENAME_DEF = call(
    "edit_file",
    path="inventory.py",
    old_string="def calc_total(items):",
    new_string="def compute_total(items):",
)
RENAME_USES = call(
    "edit_file",
    path="report.py",
    old_string="calc_total",
    new_string="compute_total",
    replace_all=True,
)
DONE = call("complete", status="done", summary="renamed")


async def test_the_echo_names_leftovers_in_files_the_task_does_not_name(tmp_path: Path) -> None:
    inventory(tmp_path)
    provider = ScriptedProvider([reply(RENAME_DEF), reply(RENAME_USES), reply(DONE)])
    session, editor = make_session(tmp_path, provider, TOOL_LOOP)
    outcome = await session.run()
    first = tool_results(session)[0]
    assert first.endswith("calc_total is still used in: report.py lines 1, 5. Change those next.")
    assert outcome.stop_reason == "end_turn"
    [check, changed] = checks(editor)
    assert (check.name, check.status, check.refused) == ("rename", "passed", False)
    assert check.detail == "no use of calc_total is left (2 files searched)"
    assert (changed.name, changed.status) == ("changed", "passed")


async def test_done_with_leftovers_is_refused_then_fails(tmp_path: Path) -> None:
    inventory(tmp_path)
    provider = ScriptedProvider([reply(RENAME_DEF)] + [reply(DONE)] * (MAX_REFUSALS + 1))
    session, editor = make_session(tmp_path, provider, TOOL_LOOP)
    outcome = await session.run()
    assert outcome.stop_reason == "failed"
    assert "calc_total is still used in: report.py lines 1, 5" in outcome.message
    results = tool_results(session)
    for refused in results[1 : 1 + MAX_REFUSALS]:
        assert refused.startswith("not accepted yet: the task is not done, a check failed:")
        assert "report.py lines 1, 5" in refused and "call complete" in refused
    assert results[-1].startswith("complete(done) not accepted; the task ends as failed.")
    # The person reads what happened to each claim, not the model's instructions.
    said = [e.summary for e in editor.events if isinstance(e, ToolCallFinished)][1:]
    assert said == [CHECKS_SUMMARY] * MAX_REFUSALS + ["not accepted: the task ends as not done"]
    ran = checks(editor)
    assert [(c.name, c.status, c.refused) for c in ran if c.name == "rename"] == [
        ("rename", "failed", True),
        ("rename", "failed", True),
        ("rename", "failed", False),
    ]


async def test_leftovers_fixed_after_a_refusal_are_accepted(tmp_path: Path) -> None:
    inventory(tmp_path)
    provider = ScriptedProvider([reply(RENAME_DEF), reply(DONE), reply(RENAME_USES), reply(DONE)])
    session, _ = make_session(tmp_path, provider, TOOL_LOOP)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and outcome.message == "renamed"
    assert "calc_total" not in (tmp_path / "report.py").read_text()


async def test_a_final_answer_is_checked_too(tmp_path: Path) -> None:
    """API loop: a reply without calls claims done; a refusal is a user message."""
    inventory(tmp_path)
    provider = ScriptedProvider(
        [reply(RENAME_DEF), reply(content="done"), reply(RENAME_USES), reply(content="done!")]
    )
    session, editor = make_session(tmp_path, provider, API_LOOP.replace(checks="rename"))
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and outcome.message == "done!"
    refusal = [m for m in session.messages if isinstance(m, UserMessage) and m.tag == "check"]
    assert len(refusal) == 1 and "report.py lines 1, 5" in refusal[0].content
    assert "empty tool_calls list" in refusal[0].content
    assert [c.status for c in checks(editor)] == ["failed", "passed"]  # no "changed" check


async def test_api_loop_final_answers_fail_after_the_refusals(tmp_path: Path) -> None:
    inventory(tmp_path)
    answers = [reply(content="done")] * (MAX_REFUSALS + 1)
    provider = ScriptedProvider([reply(RENAME_DEF), *answers])
    session, _ = make_session(tmp_path, provider, API_LOOP.replace(checks="rename"))
    outcome = await session.run()
    assert outcome.stop_reason == "failed" and outcome.message.startswith("Not done: ")


async def test_nothing_changed_is_refused_once(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    provider = ScriptedProvider([reply(DONE), reply(DONE)])
    session, editor = make_session(tmp_path, provider, TOOL_LOOP, task="Set x to 2 in a.py.")
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and outcome.steps == 2
    first = tool_results(session)[0]
    assert "nothing was changed in this session" in first and "edit_file" in first
    assert [(c.name, c.status, c.refused) for c in checks(editor)] == [
        ("changed", "failed", True),
        ("changed", "failed", False),
    ]


async def test_nothing_changed_after_failed_edits_must_pass(tmp_path: Path) -> None:
    """The model tried to edit and every edit failed: its claim of done is never accepted."""
    (tmp_path / "a.py").write_text("x = 1\n")
    bad = call("edit_file", path="a.py", old_string="x = 3", new_string="x = 2")
    # The done gate refuses the first claim (right after the failed call), the checks the rest.
    provider = ScriptedProvider([reply(bad), *[reply(DONE)] * 4])
    session, editor = make_session(tmp_path, provider, TOOL_LOOP, task="Set x to 2 in a.py.")
    outcome = await session.run()
    assert outcome.stop_reason == "failed", outcome
    assert (
        outcome.message == "Not done: nothing was changed: the edit the agent tried did not apply"
    )
    refused = tool_results(session)[2]  # the model's words: what to do
    assert "each of your 1 edit call(s) failed" in refused and "Make the change" in refused
    assert [(c.name, c.status, c.refused) for c in checks(editor)] == [
        ("changed", "failed", True),
        ("changed", "failed", True),
        ("changed", "failed", False),
    ]
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


async def test_a_file_written_back_as_it_was_is_said_so_not_a_failed_edit(
    tmp_path: Path,
) -> None:
    """The write applied and changed nothing: the person reads that, not "did not apply"."""
    (tmp_path / "a.py").write_text("x = 1\n")
    read = call("read_file", path="a.py")
    same = call("write_file", path="a.py", content="x = 1\n")
    loop = LOCAL_LOOP.replace(edit="write_file", ending="complete")
    provider = ScriptedProvider([reply(read), reply(same), *[reply(DONE)] * 3])
    session, editor = make_session(tmp_path, provider, loop, task="Set x to 2 in a.py.")
    outcome = await session.run()
    assert outcome.stop_reason == "failed", outcome
    found = "nothing was changed: a.py was written back with the text it already had"
    assert outcome.message == f"Not done: {found}"
    assert [(c.status, c.detail) for c in checks(editor)] == [("failed", found)] * 3
    told = [m.content for m in session.messages if isinstance(m, UserMessage)]
    told += tool_results(session)
    assert not any("failed" in t and "edit call" in t for t in told)
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


def test_the_changed_check_names_files_written_back_beside_edits_that_failed() -> None:
    done = Done(changed=[], ran=False)
    mixed = changed_check(done, "edit_file", ["write_file", "edit_file"], ["a.py"])
    assert mixed.detail == (
        "nothing was changed: a.py was written back with the text it already had, and the "
        "other edit the agent tried did not apply"
    )
    both = changed_check(done, "write_file", ["write_file"] * 3, ["a.py", "b.py", "a.py"])
    assert both.detail == (
        "nothing was changed: a.py, b.py were written back with the text they already had"
    )
    assert not both.passed and both.must_pass


async def test_no_change_check_without_an_edit_tool_or_when_off(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    provider = ScriptedProvider([reply(DONE)])
    session, editor = make_session(tmp_path, provider, TOOL_LOOP.replace(checks="rename"))
    assert (await session.run()).steps == 1 and checks(editor) == []
    provider = ScriptedProvider([reply(DONE)])
    session, editor = make_session(tmp_path, provider, API_LOOP.replace(checks="off"))
    assert (await session.run()).steps == 1


async def test_one_reply_with_two_claims_spends_one_refusal(tmp_path: Path) -> None:
    inventory(tmp_path)
    again = call("complete", "c2", status="done", summary="renamed")
    provider = ScriptedProvider(
        [reply(RENAME_DEF), reply(DONE, again), reply(RENAME_USES), reply(DONE)]
    )
    session, _ = make_session(tmp_path, provider, TOOL_LOOP)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    results = tool_results(session)
    assert results[1] == results[2] and results[1].startswith("not accepted yet")


async def test_an_unasked_rename_shaped_edit_is_not_checked(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("y = a + b\n")
    (tmp_path / "b.py").write_text("b = 3\n")
    edit = call("edit_file", path="a.py", old_string="a + b", new_string="a + c")
    provider = ScriptedProvider([reply(edit), reply(DONE)])
    session, editor = make_session(tmp_path, provider, TOOL_LOOP, task="Fix the sum in a.py.")
    assert (await session.run()).stop_reason == "end_turn"
    assert [c.name for c in checks(editor)] == ["changed"]


async def test_the_step_bound_with_leftovers_ends_failed(tmp_path: Path) -> None:
    from cadenza.engine.workflows import Movement, Workflow

    inventory(tmp_path)
    flow = Workflow(name="w", movements=(Movement(name="only", instructions="", max_steps=1),))
    provider = ScriptedProvider([reply(RENAME_DEF)])
    editor = MemoryEditor()
    session = Session(
        session_id="s1",
        task=TASK,
        root=tmp_path,
        provider=provider,
        editor=editor,
        workflow=flow,
        settings=SessionSettings(loop=TOOL_LOOP, max_steps=10),
    )  # type: ignore[arg-type]
    outcome = await session.run()
    assert outcome.stop_reason == "failed" and "report.py" in outcome.message


async def test_find_uses_skips_excluded_big_and_binary_files(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("calc_total()\nother\ncalc_totals\n")
    for folder in (".git", "node_modules", ".venv"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.py").write_text("calc_total\n")
    (tmp_path / "big.txt").write_text("calc_total\n" + "x" * MAX_FILE_BYTES)
    (tmp_path / "bin.dat").write_bytes(b"calc_total\x00")
    (tmp_path / "latin.txt").write_bytes("calc_total caf\xe9\n".encode("latin-1"))
    editor = MemoryEditor()
    uses = await find_uses(tmp_path, editor, "calc_total")
    assert uses.where == {"a.py": [1]} and uses.complete
    # An open buffer's unsaved text wins over the disk.
    path = tmp_path / "a.py"
    editor.buffers[path] = DocumentSnapshot(path=path, text="ok\n", version=1)
    (tmp_path / "b.py").write_text("x\n")
    bpath = tmp_path / "b.py"
    editor.buffers[bpath] = DocumentSnapshot(path=bpath, text="\n\ncalc_total\n", version=1)
    assert (await find_uses(tmp_path, editor, "calc_total")).where == {"b.py": [3]}


async def test_python_comments_and_strings_are_no_use_of_a_renamed_name(tmp_path: Path) -> None:
    (tmp_path / "health.py").write_text(
        'import net\n\n\ndef probe(url):\n    """A quick check: short timeout."""\n'
        "    # the timeout is short\n    return net.fetch(url, timeout_s=2)\n"
    )
    (tmp_path / "late.py").write_text('def show(timeout):\n    return f"took {timeout} s"\n')
    (tmp_path / "notes.md").write_text("the timeout is short\n")  # not Python: plain words
    uses = await find_uses(tmp_path, MemoryEditor(), "timeout")
    assert uses.where == {"late.py": [1, 2], "notes.md": [1]}


async def test_a_command_that_ran_counts_as_a_possible_change(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    command = call("run_command", command="sed -i s/1/2/ a.py")
    provider = ScriptedProvider([reply(command), reply(DONE)])
    session, editor = make_session(tmp_path, provider, TOOL_LOOP, task="Set x to 2 in a.py.")
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and outcome.steps == 2
    [changed] = checks(editor)
    assert changed.status == "passed" and "a command ran" in changed.detail


async def test_writing_a_file_back_unchanged_is_no_change(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    same = call("write_file", path="a.py", content="x = 1\n")
    provider = ScriptedProvider([reply(same), reply(DONE), reply(same), *[reply(DONE)] * 3])
    loop = TOOL_LOOP.replace(edit="write_file")
    session, editor = make_session(tmp_path, provider, loop, task="Set x to 2 in a.py.")
    outcome = await session.run()
    assert outcome.stop_reason == "failed"
    changed = [c for c in checks(editor) if c.name == "changed"]
    assert changed and all(c.status == "failed" for c in changed)
    assert not any("a command ran" in c.detail for c in changed)


async def test_a_write_refused_as_unseen_goes_through_when_sent_again(tmp_path: Path) -> None:
    # The refusal shows the file: the same write is then no repeat, and it is made.
    (tmp_path / "a.py").write_text("x = 1\n")
    write = reply(content="a.py\n```python\nx = 2\n```\n")  # code as text
    provider = ScriptedProvider([write, write, reply(content="x is 2 now.")])
    loop = LOCAL_LOOP.replace(prime=False, checks="off")
    session, _ = make_session(tmp_path, provider, loop, task="Set x to 2.")
    outcome = await session.run()
    first, second = [m.content for m in session.messages if isinstance(m, ToolMessage)][:2]
    assert "had not shown its text" in first and second.startswith("overwrote a.py")
    assert outcome.stop_reason == "end_turn"
    assert (tmp_path / "a.py").read_text() == "x = 2\n"


async def test_a_refused_claim_at_the_movement_s_step_bound_ends_failed(tmp_path: Path) -> None:
    from cadenza.engine.workflows import Movement, Workflow

    inventory(tmp_path)
    flow = Workflow(name="w", movements=(Movement(name="only", instructions="", max_steps=2),))
    provider = ScriptedProvider([reply(RENAME_DEF), reply(DONE)])
    session = Session(
        session_id="s1",
        task=TASK,
        root=tmp_path,
        provider=provider,
        editor=MemoryEditor(),
        workflow=flow,
        settings=SessionSettings(loop=TOOL_LOOP, max_steps=10),
    )  # type: ignore[arg-type]
    outcome = await session.run()
    assert outcome.stop_reason == "failed" and "report.py lines 1, 5" in outcome.message
