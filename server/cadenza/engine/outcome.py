"""How a session run ended (``SessionOutcome``), and the message that resumes it.

Kept apart from ``engine.session``: the outcome is what the faces and the transcript restore
read, without the machinery that produced it.
"""

from __future__ import annotations

from dataclasses import dataclass

from cadenza.engine.events import SessionFinished
from cadenza.types import StopReason

WAITING: frozenset[StopReason] = frozenset({"needs_user_input", "waiting_human"})
"""Stop reasons after which the session waits for the person and then resumes."""


@dataclass(frozen=True, kw_only=True)
class SessionOutcome:
    """How a session run ended.

    Attributes:
        stop_reason: See ``StopReason``.
        message: The final answer, the question (``needs_user_input``), what the person must
            do in the browser (``waiting_human``), or the error.
        steps: Model requests made in the whole session so far.
        missing_info: ``needs_user_input``: what is missing.
        why_no_default: ``needs_user_input``: why no reasonable default exists.
        browser_session_id: ``waiting_human``: the browser session to resume.
        url: ``waiting_human``: the page, when known.
        act_url: ``waiting_human``: where the person acts on it (see ``HumanWait``).
        movement: The movement the session was in when it stopped (a resume goes on there).
    """

    stop_reason: StopReason
    message: str
    steps: int
    missing_info: str | None = None
    why_no_default: str | None = None
    browser_session_id: str | None = None
    url: str | None = None
    act_url: str | None = None
    movement: str | None = None

    @property
    def waiting(self) -> bool:
        """True when the session waits for the person (and can resume)."""
        return self.stop_reason in WAITING

    def finished_event(self) -> SessionFinished:
        """The ``session_end`` event of this outcome."""
        return SessionFinished(
            stop_reason=self.stop_reason,
            message=self.message,
            steps=self.steps,
            missing_info=self.missing_info,
            why_no_default=self.why_no_default,
            browser_session_id=self.browser_session_id,
            url=self.url,
            act_url=self.act_url,
        )


def resume_message(outcome: SessionOutcome, reply: str, *, restored: bool = False) -> str:
    """The user message that resumes a session after ``outcome`` with the person's ``reply``.

    ``restored``: the session was rebuilt from its transcript (a server restart), so a browser
    session it waited in is gone.
    """
    if outcome.stop_reason == "waiting_human":
        browser = outcome.browser_session_id or "?"
        said = f" They said: {reply.strip().rstrip('.')}." if reply.strip() else ""
        if restored:
            return (
                f"The person is done in the browser.{said} But Cadenza restarted since, and the "
                f"browser session {browser} is gone: open the page again with browse_interactive "
                "(action open, no session_id); the person may have to act again."
            )
        return (
            f"The person is done in the browser (browser session {browser}).{said} Continue the "
            f"task: call browse_interactive with session_id {browser!r} to see the page now."
        )
    if outcome.stop_reason == "needs_user_input":
        asked = outcome.missing_info or outcome.message
        return f"The person answered your question ({asked}): {reply}"
    return reply
