"""The done checks respect the person: a change they declined is never asked for again.

A turn whose edits the person declined (a review, a permission request, a protected file) and
that changed nothing ends as any turn does, with the model's answer: no "make the change", no
``failed`` end. Edits that failed on their own (a text not found) still must be made.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cadenza.engine.events import CheckRan
from cadenza.engine.permissions import PermissionAnswer
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.variants import API_LOOP, LoopSettings
from cadenza.messages import ToolMessage, UserMessage
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply
from tests.engine.test_tests_check import RIGHT, SCRIPT, TOOL_LOOP, project

ANSWER = "I left calc.py as it is: the change was declined."
MISSED = call("edit_file", "miss", path="calc.py", old_string="return y", new_string="return 2")
SETTINGS = call("create_file", "settings", path=".vscode/settings.json", content="{}\n")
DONE = call("complete", status="done", summary=ANSWER)
ALLOW_REJECT = ("allow_once", "reject_once")


def session_for(
    root: Path,
    provider: ScriptedProvider,
    editor: MemoryEditor,
    *,
    loop: LoopSettings = API_LOOP,
    gated: frozenset[str] = frozenset(),
) -> Session:
    settings = SessionSettings(loop=loop, max_steps=10, test_command=SCRIPT, gated_tools=gated)
    return Session(
        session_id="s1",
        task="Make double() in calc.py return twice its argument.",
        root=root,
        provider=provider,
        editor=editor,
        settings=settings,
    )  # type: ignore[arg-type]


def checks(editor: MemoryEditor) -> list[CheckRan]:
    return [e for e in editor.events if isinstance(e, CheckRan)]


def told(session: Session) -> list[str]:
    """What the session told the model: tool results and check messages."""
    return [
        m.content
        for m in session.messages
        if isinstance(m, ToolMessage) or (isinstance(m, UserMessage) and m.tag == "check")
    ]


async def test_a_declined_review_ends_the_turn_with_the_answer(tmp_path: Path) -> None:
    project(tmp_path)
    editor = MemoryEditor(refuse="the person declined the change", refused_by="person")
    provider = ScriptedProvider([reply(RIGHT), reply(content=ANSWER)])
    session = session_for(tmp_path, provider, editor)
    outcome = await session.run()
    assert (outcome.stop_reason, outcome.message) == ("end_turn", ANSWER)
    assert len(provider.requests) == 2 and checks(editor) == []
    assert told(session) == ["calc.py was not changed: the person declined the change"]
    assert (tmp_path / "calc.py").read_text() == "def double(x):\n    return x\n"


@pytest.mark.parametrize(
    "answer",
    [
        PermissionAnswer(outcome="selected", option="reject_once"),
        PermissionAnswer(outcome="cancelled"),
    ],
)
async def test_a_declined_protected_file_is_not_asked_for_again(
    tmp_path: Path, answer: PermissionAnswer
) -> None:
    project(tmp_path)
    editor = MemoryEditor(permissions=[answer])
    provider = ScriptedProvider([reply(SETTINGS), reply(content=ANSWER)])
    session = session_for(tmp_path, provider, editor)
    outcome = await session.run()
    assert (outcome.stop_reason, outcome.message) == ("end_turn", ANSWER)
    assert len(provider.requests) == 2 and checks(editor) == []
    [result] = told(session)
    assert result.startswith(".vscode/settings.json was not changed: it is a protected file")
    assert not (tmp_path / ".vscode").exists()


async def test_an_edit_the_permission_gate_declined_is_not_asked_for_again(
    tmp_path: Path,
) -> None:
    """The person gates ``edit_file`` and rejects it; a failed edit before it does not make
    the turn's claim a "make the change": the person is deciding."""
    project(tmp_path)
    allow, reject = (PermissionAnswer(outcome="selected", option=o) for o in ALLOW_REJECT)
    editor = MemoryEditor(permissions=[allow, reject])
    provider = ScriptedProvider([reply(MISSED), reply(RIGHT), reply(content=ANSWER)])
    session = session_for(tmp_path, provider, editor, gated=frozenset({"edit_file"}))
    outcome = await session.run()
    assert (outcome.stop_reason, outcome.message) == ("end_turn", ANSWER)
    assert len(provider.requests) == 3 and checks(editor) == []
    missed, rejected = told(session)
    assert missed.startswith("old_string was not found in calc.py")
    assert rejected.startswith("the person rejected this edit_file call")


async def test_the_small_models_claim_after_a_declined_edit_stands(tmp_path: Path) -> None:
    """``all`` and the done gate (the small models' loop) respect the person too: the first
    ``complete(done)`` after the declined edit is accepted, with no check."""
    project(tmp_path)
    editor = MemoryEditor(refuse="the person declined the change", refused_by="person")
    provider = ScriptedProvider([reply(RIGHT), reply(DONE)])
    # One reply a step: the tests, run unasked before the first change, fail, and candidates
    # would be asked for at once; they are not what this is about.
    session = session_for(tmp_path, provider, editor, loop=TOOL_LOOP.replace(candidates=0))
    outcome = await session.run()
    assert (outcome.stop_reason, outcome.message) == ("end_turn", ANSWER)
    assert len(provider.requests) == 2 and checks(editor) == []


async def test_an_edit_the_editor_refused_on_its_own_must_still_be_made(tmp_path: Path) -> None:
    """Not the person: a stale buffer. The claim goes back to the model, in the model's words;
    the check line says what happened in the person's."""
    project(tmp_path)
    editor = MemoryEditor(refuse="the file changed in the editor since it was read")
    provider = ScriptedProvider([reply(RIGHT), *[reply(content="done")] * 3])
    session = session_for(tmp_path, provider, editor)
    outcome = await session.run()
    assert outcome.stop_reason == "failed"
    assert outcome.message == (
        "Not done: nothing was changed: the edit the agent tried did not apply"
    )
    refused = told(session)[1]
    assert "each of your 1 edit call(s) failed" in refused and "Make the change" in refused
    assert [(c.name, c.status, c.refused) for c in checks(editor)] == [
        ("changed", "failed", True),
        ("changed", "failed", True),
        ("changed", "failed", False),
    ]
    assert {c.detail for c in checks(editor)} == {
        "nothing was changed: the edit the agent tried did not apply"
    }


async def test_a_declined_edit_beside_an_applied_one_is_checked_as_usual(tmp_path: Path) -> None:
    """Something changed: the checks judge what did (here the tests pass)."""
    project(tmp_path)
    editor = MemoryEditor(permissions=[PermissionAnswer(outcome="selected", option="reject_once")])
    provider = ScriptedProvider([reply(RIGHT, SETTINGS), reply(content="double is fixed.")])
    session = session_for(tmp_path, provider, editor)
    outcome = await session.run()
    assert (outcome.stop_reason, outcome.message) == ("end_turn", "double is fixed.")
    assert [(c.name, c.status) for c in checks(editor)] == [
        ("changed", "passed"),
        ("tests", "passed"),
    ]
