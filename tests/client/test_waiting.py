"""The headless client and a waiting session: the real server, a scripted model.

After ``needs_user_input`` the server asks (``cadenza/askUser``); a prompter that answers
resumes the session and the outcome is the later end; one that declines gets the waiting end
(``cadenza run`` then exits with status 3 and prints the question).
"""

from __future__ import annotations

from collections.abc import Sequence

from cadenza.client import ClientOptions
from cadenza.schema.requests import AskUserParams
from tests.client.test_field_cases import run
from tests.support.fake_openai import FakeOpenAI, call, text

ASK = {
    "status": "needs_user_input",
    "summary": "",
    "missing_info": "the new name",
    "why_no_default": "two names fit",
}


class Answer:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.questions: list[AskUserParams] = []

    async def ask(self, request: AskUserParams) -> str | None:
        self.questions.append(request)
        return self.answer

    async def choose(self, message: str, actions: Sequence[str]) -> str | None:
        return None


async def test_an_answer_resumes_the_session(opts: ClientOptions, fake: FakeOpenAI) -> None:
    fake.script(call("complete", ASK, "c1"), text("Renamed to total_of."))
    prompter = Answer("total_of")
    ended = await run(opts, "rename total", prompter)
    assert ended.outcome.stop_reason == "end_turn"
    assert ended.outcome.message == "Renamed to total_of."
    [question] = prompter.questions
    assert question.question == "the new name"
    assert question.why_no_default == "two names fit"
    last_user = [m for m in fake.requests[-1]["messages"] if m["role"] == "user"][-1]
    assert last_user["content"].endswith(": total_of")


async def test_a_declined_prompt_ends_with_the_question(
    opts: ClientOptions, fake: FakeOpenAI
) -> None:
    fake.script(call("complete", ASK, "c1"))
    ended = await run(opts, "rename total", Answer(None))
    assert ended.outcome.stop_reason == "needs_user_input"
    assert ended.outcome.missing_info == "the new name"
    assert len(fake.requests) == 1
