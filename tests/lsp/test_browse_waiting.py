"""``waiting_human`` end to end: the real server drives real headless Chromium to a login page,
the editor is asked (``window/showDocument`` + ``cadenza/waitingHuman``), the test plays the
person by logging in through the same browser (attached over CDP), and on "continue" the
session resumes the same browser session, logged in (cookies kept)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.lsp.conftest import Connect
from tests.lsp.harness import capabilities
from tests.lsp.test_waiting import ends, user_texts, wait_for
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages
from tests.support.web import SECRET, TestSite
from tests.tools.test_browse_interactive import free_port, log_in_as_the_person, needs_chromium


@pytest.fixture
def site() -> Iterator[TestSite]:
    with TestSite() as served:
        yield served


def browser_options(port: int) -> dict[str, Any]:
    return {"browser": {"headless": True, "remoteDebuggingPort": port}}


@needs_chromium
async def test_login_page_waits_for_the_person_then_resumes_logged_in(
    connect: Connect, fake: FakeOpenAI, site: TestSite
) -> None:
    port = free_port()
    editor = await connect(
        caps=capabilities(request_permission=True, waiting_human=True, show_document=True),
        user_config=browser_options(port),
    )
    editor.human_gate = asyncio.Event()
    account = site.url("/account")
    fake.script(
        call("browse_interactive", {"action": "open", "url": account}, "c1"),
        call("browse_interactive", {"action": "read"}, "c2"),
        text("You are logged in; the secret is on the page."),
    )
    session_id = await editor.start("read my account page")

    [waiting] = await ends(editor, session_id, 1)
    assert waiting["stopReason"] == "waiting_human"
    assert waiting["url"] == account
    assert waiting["browserSessionId"].startswith("br-")
    assert "password" in waiting["message"]
    await wait_for(lambda: len(editor.human_requests) == 1)
    # Headless: the person acts through the browser's own DevTools page of that tab.
    act = waiting["actUrl"]
    assert act.startswith(f"http://127.0.0.1:{port}/devtools/inspector.html?ws=")
    [shown] = editor.client.shown_documents
    assert shown.uri == act and shown.external is True
    [request] = editor.human_requests
    assert request["sessionId"] == session_id
    assert request["uri"] == act
    assert request["opened"] is True
    assert request["waitReason"] == waiting["message"]

    await log_in_as_the_person(port, account, "ada")  # the person, in the same browser
    editor.human_gate.set()  # "Continue when done"

    _, end = await ends(editor, session_id, 2)
    assert end["stopReason"] == "end_turn"
    kinds = editor.kinds(session_id)
    assert kinds.count("session_resume") == 1
    resumed = fake.requests[1]
    assert waiting["browserSessionId"] in user_texts(resumed)[-1]
    read = list(tool_messages(fake.requests[2]))[-1]
    assert "Welcome, ada" in read["content"]
    assert SECRET in read["content"]
    assert len(editor.permission_requests) == 2  # browse_interactive is gated


@needs_chromium
async def test_fallback_prompt_cancel_ends_the_session(
    connect: Connect, fake: FakeOpenAI, site: TestSite
) -> None:
    editor = await connect(
        caps=capabilities(request_permission=True), user_config=browser_options(free_port())
    )
    editor.message_choice = "Cancel"
    fake.script(call("browse_interactive", {"action": "open", "url": site.url("/account")}, "c1"))
    session_id = await editor.start("read my account page")
    first, last = await ends(editor, session_id, 2)
    assert first["stopReason"] == "waiting_human"
    assert last["stopReason"] == "cancelled"
    [request] = editor.message_requests
    assert site.url("/account") in request.message
    assert [a.title for a in request.actions or []] == ["Continue when done", "Cancel"]
    assert len(fake.requests) == 1
