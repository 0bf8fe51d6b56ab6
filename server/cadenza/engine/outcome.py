"""The message that resumes a session after its ``SessionOutcome``, with the person's reply."""

from __future__ import annotations

from cadenza.schema.outcome import SessionOutcome


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
