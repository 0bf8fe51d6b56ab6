"""Cadenza's server → client requests: ``cadenza/askUser``, ``requestPermission``, ``waitingHuman``.

A client that declares ``experimental.cadenza.<name>`` in its capabilities answers them (an agent
panel shows them properly); others get ``window/showMessageRequest`` instead. The server reads
the answers strictly (``base.strict_validate``) but ignores fields it does not know: a client may
add its own.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from cadenza.schema.base import (
    MAX_REPLY_CHARS,
    OpenWireModel,
    SparseWireModel,
    WireModel,
    encodable,
)


class AskUserParams(SparseWireModel):
    """Params of the server → client request ``cadenza/askUser``.

    Attributes:
        session_id: The session asking.
        question: The question (for ``needs_user_input``: the missing information).
        why_no_default: Why the agent could not pick a reasonable default itself.
        options: Suggested answers, when the agent offered some; free text is always allowed.
    """

    session_id: str = ""
    question: str = ""
    why_no_default: str | None = None
    options: list[str] | None = None


class AskUserResult(OpenWireModel):
    """Result of ``cadenza/askUser``: ``{answer}``, null when the person declined."""

    answer: str | None = Field(default=None, max_length=MAX_REPLY_CHARS)

    @field_validator("answer")
    @classmethod
    def _valid_text(cls, value: str | None) -> str | None:
        return None if value is None else encodable(value)


class PermissionToolCall(SparseWireModel):
    """ACP ``ToolCallUpdate`` as sent in a permission request (``raw_input``: parsed JSON)."""

    tool_call_id: str
    title: str
    kind: str
    raw_input: Any = None


PermissionOptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
"""ACP's ``PermissionOptionKind``."""


class PermissionOption(WireModel):
    """ACP ``PermissionOption``: ``{optionId, name, kind}``."""

    option_id: str
    name: str
    kind: PermissionOptionKind


class RequestPermissionParams(SparseWireModel):
    """Params of the server → client request ``cadenza/requestPermission`` (ACP's shape).

    Attributes:
        protected_paths: Set when the call would change protected paths (workspace-relative;
            files that configure Cadenza, the editor, git, CI or other tools), or reach an
            address on the person's machine or local network (``browse``: the
            ``scheme://host:port``): the client must ask the person every time, never answer
            from a setting, an "always" rule or a run's ``--allow``. Only the once options are
            offered then.
    """

    session_id: str
    tool_call: PermissionToolCall
    options: list[PermissionOption]
    protected_paths: list[str] | None = None


class SelectedOutcome(OpenWireModel):
    """``{outcome: "selected", optionId}``."""

    outcome: Literal["selected"]
    option_id: str


class CancelledOutcome(OpenWireModel):
    """``{outcome: "cancelled"}``: the prompt was dismissed."""

    outcome: Literal["cancelled"]


class RequestPermissionResult(OpenWireModel):
    """Result of ``cadenza/requestPermission``: ``{outcome: Selected | Cancelled}``."""

    outcome: SelectedOutcome | CancelledOutcome = Field(discriminator="outcome")


class WaitingHumanParams(SparseWireModel):
    """Params of the server → client request ``cadenza/waitingHuman``.

    Attributes:
        session_id: The session that waits.
        wait_reason: What the person must do in the browser.
        uri: The page, when known.
        opened: True when the server already asked the editor to open ``uri``
            (``window/showDocument``); the client then does not open it again.
    """

    session_id: str
    wait_reason: str
    uri: str | None = None
    opened: bool = False


class WaitingHumanResult(OpenWireModel):
    """Result of ``cadenza/waitingHuman``: ``{action: "continue" | "cancel"}``."""

    action: Literal["continue", "cancel"]
