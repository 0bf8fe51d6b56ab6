"""``waiting_human`` over ACP: ask the person to act in the browser, then go on or stop.

A run that stops with ``waiting_human`` (``browse_interactive`` met a login page, a captcha...)
does not end the prompt turn. The person is asked, in the same turn:

- with ``elicitation/create`` in URL mode when the client declared
  ``clientCapabilities.elicitation.url`` (the message says what to do, the URL is where:
  ``act_url`` when set, e.g. the DevTools page of a headless browser's tab, else the page);
  ``accept`` is "done, go on", ``decline`` and ``cancel`` stop;
- else with ``session/request_permission`` and two options, ``continue`` (``allow_once``,
  "Continue when done") and ``cancel`` (``reject_once``, "Cancel"); the message is sent first
  as an ``agent_message_chunk``.

On "go on" the engine session resumes (``Session.resume("")``: the same browser session, its
cookies kept) and the turn goes on streaming. Anything else (declined, dismissed, an error,
a malformed answer) ends the prompt with ``stopReason: "cancelled"``; the session stays
usable and the next prompt is a follow-up.

``AcpPerson`` is this face's ``host.driver.PersonPort`` for one prompt turn: it asks about a
browser wait within the turn, and about nothing else (a question ends the turn: the answer
is the next prompt).
"""

from __future__ import annotations

import logging
import uuid
from typing import Protocol

from acp import RequestError, update_agent_message_text
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    CancelElicitationResponse,
    DeclineElicitationResponse,
    ElicitationMode,
    ElicitationUrlSessionMode,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)
from pydantic import ValidationError

from cadenza.acp.editor import AcpEditor
from cadenza.host.live import LiveSession
from cadenza.schema.outcome import SessionOutcome

log = logging.getLogger(__name__)

CONTINUE = "continue"
CANCEL = "cancel"


class ElicitationClient(Protocol):
    """The client requests a human wait makes (the SDK's ``AgentSideConnection``)."""

    async def create_elicitation(
        self, message: str, mode: ElicitationMode
    ) -> AcceptElicitationResponse | DeclineElicitationResponse | CancelElicitationResponse:
        """``elicitation/create``."""
        ...

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """``session/request_permission``."""
        ...


def human_options() -> list[PermissionOption]:
    """The two options of the fallback question."""
    return [
        PermissionOption(option_id=CONTINUE, name="Continue when done", kind="allow_once"),
        PermissionOption(option_id=CANCEL, name="Cancel", kind="reject_once"),
    ]


def act_url(outcome: SessionOutcome) -> str | None:
    """Where the person acts: ``act_url`` when set, else the page."""
    return outcome.act_url or outcome.url


async def person_is_done(
    client: ElicitationClient, editor: AcpEditor, outcome: SessionOutcome, *, url_mode: bool
) -> bool:
    """Ask the person to act in the browser; True when they say to go on."""
    url = act_url(outcome)
    message = outcome.message.strip() or "Act in the browser, then continue."
    try:
        if url_mode and url:
            await editor.stream.flush()
            mode = ElicitationUrlSessionMode(
                session_id=editor.session_id,
                elicitation_id=uuid.uuid4().hex,
                url=url,  # type: ignore[arg-type]  # validated into AnyUrl
                tool_call_id=editor.last_call_id,
            )
            answer = await client.create_elicitation(message=message, mode=mode)
            return isinstance(answer, AcceptElicitationResponse)
        text = f"{message}\n{url}" if url and url not in message else message
        editor.stream.send(update_agent_message_text(text))
        await editor.stream.flush()
        tool_call = ToolCallUpdate(
            tool_call_id=editor.last_call_id or f"waiting-{uuid.uuid4().hex[:8]}",
            title=f"Waiting for you in the browser: {url}" if url else "Waiting for you",
        )
        response = await client.request_permission(
            session_id=editor.session_id, tool_call=tool_call, options=human_options()
        )
    except (RequestError, ValidationError) as exc:
        log.warning("session %s: asking the person failed: %s", editor.session_id, exc)
        return False
    outcome_ = response.outcome
    return isinstance(outcome_, AllowedOutcome) and outcome_.option_id == CONTINUE


class AcpPerson:
    """The person behind the ACP client during one prompt turn (``host.driver.PersonPort``).

    Args:
        client: The connection (elicitation, permission requests).
        editor: The session's editor (its updates, the last tool call).
        url_mode: The client takes URL elicitations.
    """

    def __init__(self, client: ElicitationClient, editor: AcpEditor, *, url_mode: bool) -> None:
        self._client = client
        self._editor = editor
        self._url_mode = url_mode

    def asks(self, outcome: SessionOutcome) -> bool:
        """A browser wait is asked within the turn; a question ends it."""
        return outcome.stop_reason == "waiting_human"

    async def before_run(self, live: LiveSession[None]) -> None:
        """Each run's final message is the text published since its last step started."""
        self._editor.step_text = ""

    async def prompt(self, live: LiveSession[None], outcome: SessionOutcome) -> None:
        """Ask whether the person is done in the browser: go on, or end the turn cancelled."""
        try:
            done = await person_is_done(
                self._client, self._editor, outcome, url_mode=self._url_mode
            )
        except Exception:  # the turn must not wait forever for an answer that cannot come
            log.exception("session %s: asking the person failed", live.session_id)
            done = False
        live.give_reply("" if done else None)
