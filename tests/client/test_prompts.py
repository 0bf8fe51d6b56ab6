"""The terminal prompter: answers read off the event loop, the live display paused meanwhile."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from rich.console import Console
from rich.prompt import Prompt

from cadenza.client.prompts import DecliningPrompter, TerminalPrompter
from cadenza.schema.requests import AskUserParams


@dataclass
class FakeTerminal:
    replies: list[Any] = field(default_factory=list)
    asked: list[dict[str, Any]] = field(default_factory=list)

    def ask(self, prompt: str, **kwargs: Any) -> str:
        self.asked.append({"prompt": prompt, **kwargs})
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return str(reply)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> FakeTerminal:
    fake = FakeTerminal()
    monkeypatch.setattr(Prompt, "ask", fake.ask)
    return fake


async def test_terminal_prompter_answers_and_pauses(terminal: FakeTerminal) -> None:
    pauses: list[str] = []

    @contextlib.contextmanager
    def pause() -> Iterator[None]:
        pauses.append("stop")
        yield
        pauses.append("start")

    prompter = TerminalPrompter(Console(file=io.StringIO()), pause=pause)
    terminal.replies.extend(["  new_name \n", "", "Yes", EOFError()])
    request = AskUserParams(question="Which name?", why_no_default="two candidates")
    assert await prompter.ask(request) == "new_name"
    assert await prompter.ask(AskUserParams(question="Again?")) is None  # empty line declines
    assert await prompter.choose("Proceed?", ["Yes", "No"]) == "Yes"
    assert await prompter.choose("Proceed?", ["Yes", "No"]) is None  # end of input
    assert pauses == ["stop", "start"] * 4
    assert "two candidates" in terminal.asked[0]["prompt"]
    assert "1. Yes, 2. No (number or name)" in terminal.asked[2]["prompt"]


async def test_a_choice_is_picked_by_number_name_or_a_unique_start(
    terminal: FakeTerminal,
) -> None:
    out = io.StringIO()
    prompter = TerminalPrompter(Console(file=out))
    options = ["Allow once", "Always allow", "Reject", "Always reject"]
    terminal.replies.extend(["1", "reject", "al", "Always r", "9", "3"])
    assert await prompter.choose("Run it?", options) == "Allow once"
    assert await prompter.choose("Run it?", options) == "Reject"
    # "al" starts two names and "9" is no option: asked again, then answered.
    assert await prompter.choose("Run it?", options) == "Always reject"
    assert await prompter.choose("Run it?", options) == "Reject"
    assert out.getvalue().count("Please answer with a number from 1 to 4, or a name.") == 2


async def test_prompt_errors_reach_the_caller(terminal: FakeTerminal) -> None:
    terminal.replies.append(RuntimeError("terminal gone"))
    with pytest.raises(RuntimeError, match="terminal gone"):
        await TerminalPrompter(Console(file=io.StringIO())).ask(AskUserParams(question="?"))


async def test_declining_prompter() -> None:
    prompter = DecliningPrompter()
    assert await prompter.ask(AskUserParams(question="?")) is None
    assert await prompter.choose("?", ["a"]) is None


async def test_an_edit_to_confirm_shows_its_diff_then_asks_yes_or_no(
    terminal: FakeTerminal,
) -> None:
    from cadenza.client.edits import EditReview, FileChange

    out = io.StringIO()
    prompter = TerminalPrompter(Console(file=out, width=100))
    review = EditReview(
        label="edit_file app.py",
        description="Cadenza edit_file: replace 1 occurrence(s) of `x = 1` with `x = 2` in app.py",
        changes=(FileChange(path="app.py", kind="modified", before="x = 1\n", after="x = 2\n"),),
    )
    terminal.replies.extend(["y", "n", EOFError()])
    assert await prompter.confirm_edit(review) is True
    assert await prompter.confirm_edit(review) is False
    assert await prompter.confirm_edit(review) is False  # end of input declines
    shown = out.getvalue()
    assert "Cadenza edit_file: replace 1 occurrence(s) of `x = 1` with `x = 2` in app.py" in shown
    assert "--- a/app.py" in shown and "+++ b/app.py" in shown
    assert "-x = 1" in shown and "+x = 2" in shown
    assert terminal.asked[0]["prompt"] == "Apply this change?"
    assert terminal.asked[0]["choices"] == ["y", "n"]


async def test_declining_prompter_accepts_edits_only_with_yes() -> None:
    from cadenza.client.edits import EditReview

    review = EditReview(label="x", description=None, changes=())
    assert await DecliningPrompter().confirm_edit(review) is False
    assert await DecliningPrompter(accept_edits=True).confirm_edit(review) is True
