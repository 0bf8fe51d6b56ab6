"""The names of Cadenza's own protocol surface: commands, requests, notifications, stop reasons.

Commands go through ``workspace/executeCommand`` (LSP); the ``cadenza/*`` methods are the
server's own requests and notifications to the client.
"""

from __future__ import annotations

from typing import get_args

from cadenza.types import StopReason

START_SESSION = "cadenza.startSession"
CANCEL_SESSION = "cadenza.cancelSession"
UNDO_SESSION = "cadenza.undoSession"
RESTORE_TURN = "cadenza.restoreTurn"
ACP_RESTORE_TURN = "_cadenza/restoreTurn"
"""The ACP face's extension method of ``cadenza.restoreTurn`` (same arguments, same result)."""
REPLY_SESSION = "cadenza.replySession"
LIST_SESSIONS = "cadenza.listSessions"
LOAD_SESSION = "cadenza.loadSession"
PROMPT_SESSION = "cadenza.promptSession"
CONFIGURE_SESSION = "cadenza.configureSession"
STEER_SESSION = "cadenza.steerSession"
ACP_STEER_SESSION = "_cadenza/steerSession"
"""The ACP face's extension method of ``cadenza.steerSession`` (same arguments, same result)."""
LIST_CHANGES = "cadenza.listChanges"
REVIEW_CHANGES = "cadenza.reviewChanges"
LIST_MODELS = "cadenza.listModels"
PULL_MODEL = "cadenza.pullModel"
LIST_COMMANDS = "cadenza.listCommands"
LIST_PERMISSIONS = "cadenza.listPermissions"
REVOKE_PERMISSION = "cadenza.revokePermission"

SESSION_UPDATE = "cadenza/sessionUpdate"
"""Server → client notification: one update of a session (``updates.SessionUpdateParams``)."""
ASK_USER = "cadenza/askUser"
REQUEST_PERMISSION = "cadenza/requestPermission"
WAITING_HUMAN = "cadenza/waitingHuman"
DIAGNOSTICS = "cadenza/diagnostics"
REFERENCES = "cadenza/references"
DEFINITION = "cadenza/definition"
RENAME = "cadenza/rename"
INTEL_REQUESTS = frozenset({DIAGNOSTICS, REFERENCES, DEFINITION, RENAME})
"""Code intelligence from the editor's language servers (``schema.intel``)."""
RAW_RESULT_REQUESTS = frozenset({ASK_USER, REQUEST_PERMISSION, WAITING_HUMAN}) | INTEL_REQUESTS
"""Cadenza's own server → client requests: their results are validated by the schema (strictly,
``base.strict_validate``), not by pygls."""

KNOWN_STOP_REASONS: tuple[str, ...] = get_args(StopReason)
"""Stop reasons of this protocol version; a newer server may send others (kept as strings)."""
