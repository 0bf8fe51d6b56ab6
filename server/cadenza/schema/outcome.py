"""How a run of a session ended: :class:`SessionOutcome`, the one value every layer shares.

The engine returns it from a run, the host waits and resumes on it, the faces show it, the
``session_end`` event and the ``session_end`` update are it plus their kind tag, and the
headless client reports the one it received. On the wire its fields are camelCase, and those
that are None are absent.
"""

from __future__ import annotations

from typing import Annotated, Any, Self

from cadenza.schema.base import OPEN, SparseWireModel
from cadenza.types import StopReason

WAITING: frozenset[str] = frozenset({"needs_user_input", "waiting_human"})
"""Stop reasons after which the session waits for the person and then resumes."""


class SessionOutcome(SparseWireModel):
    """How a session run ended; after ``needs_user_input`` and ``waiting_human`` it waits.

    Attributes:
        stop_reason: See ``StopReason`` (a lenient parse keeps a newer server's reason).
        message: The final answer, the question (``needs_user_input``), what the person must
            do in the browser (``waiting_human``), or the error.
        steps: Model requests made in the whole session so far.
        missing_info: ``needs_user_input`` asked through ``complete``: what the agent needs.
        why_no_default: ``needs_user_input``: why it could not pick a reasonable default.
        browser_session_id: ``waiting_human``: the browser session the person acts in.
        url: ``waiting_human``: the page, when known.
        act_url: ``waiting_human``: where the person acts on the page, when not in a window
            on their screen (e.g. the DevTools page of a headless browser's tab).
    """

    stop_reason: Annotated[StopReason, OPEN]
    message: str = ""
    steps: int = 0
    missing_info: str | None = None
    why_no_default: str | None = None
    browser_session_id: str | None = None
    url: str | None = None
    act_url: str | None = None

    @property
    def waiting(self) -> bool:
        """True when the session waits for the person (and can resume)."""
        return self.stop_reason in WAITING

    @classmethod
    def of(cls, outcome: SessionOutcome, **extra: Any) -> Self:
        """``outcome`` as ``cls`` (an event or update that carries it), plus ``extra`` fields."""
        fields = {name: getattr(outcome, name) for name in SessionOutcome.model_fields}
        return cls(**fields, **extra)

    def outcome(self) -> SessionOutcome:
        """This outcome alone, without the kind tag of an event or update that carries it."""
        return SessionOutcome.of(self)
