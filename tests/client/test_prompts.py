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
from cadenza.client.wire import AskUserParams


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
    assert terminal.asked[2]["choices"] == ["Yes", "No"]


async def test_prompt_errors_reach_the_caller(terminal: FakeTerminal) -> None:
    terminal.replies.append(RuntimeError("terminal gone"))
    with pytest.raises(RuntimeError, match="terminal gone"):
        await TerminalPrompter(Console(file=io.StringIO())).ask(AskUserParams(question="?"))


async def test_declining_prompter() -> None:
    prompter = DecliningPrompter()
    assert await prompter.ask(AskUserParams(question="?")) is None
    assert await prompter.choose("?", ["a"]) is None
