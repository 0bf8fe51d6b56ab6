"""The one bridge from the faces to the layers below the host: ports, events and their values.

A face (``cadenza.lsp``, ``cadenza.acp``) implements the engine's ``Editor`` port (and may
offer ``CodeIntel``, the editor's language servers), turns the engine's events into its own
updates, and asks the session service (``host.service``) for everything else. The types it
needs for that are declared here and nowhere else: ``lint-imports`` (the
``faces-through-host`` contract in ``pyproject.toml``) forbids the faces to import
``cadenza.engine``, ``cadenza.tools`` or ``cadenza.providers`` themselves, so what a face may
depend on below the host is this list.

A few helpers are here too, because a face must do exactly what the tools do: name a workspace
file (``relative_name``), write an edit on disk when its client cannot (``apply_on_disk``),
word the events' durations (``duration``), and (the LSP face's edits and positions) split
lines and diff them (``line_start``, ``line_end``, ``lines_with_ends``, ``split_ending``,
``changed_line_spans``).
"""

from __future__ import annotations

from cadenza.engine.budget import duration
from cadenza.engine.events import (
    Activity,
    AgentMessageChunk,
    CandidatesTried,
    CheckpointWritten,
    CheckRan,
    ContextCompacted,
    ContractRepaired,
    FileEdited,
    FilesSeen,
    ModelReplied,
    MovementStarted,
    PermissionDecided,
    PlanUpdated,
    RulesLoaded,
    SessionEvent,
    SessionFinished,
    SessionResumed,
    StepStarted,
    ToolCacheLookup,
    ToolCallFinished,
    ToolCallStarted,
    WorkspaceWaited,
)
from cadenza.engine.permissions import (
    OPTION_NAMES,
    PATTERN_OPTION,
    PermissionAnswer,
    PermissionOptionKind,
    PermissionRequest,
    PermissionStore,
)
from cadenza.engine.session_list import SessionSummary
from cadenza.engine.transcript import EventRecord, MessageRecord, TranscriptRecord
from cadenza.engine.workflows import DEFAULT_WORKFLOW, Workflow
from cadenza.providers.models import PullProgress
from cadenza.tools.base import ToolError
from cadenza.tools.fs import apply_on_disk
from cadenza.tools.host import DocumentSnapshot, EditOutcome, FileEdit
from cadenza.tools.intel import (
    CodeIntel,
    IntelDiagnostic,
    IntelError,
    IntelFeature,
    IntelLocation,
    IntelRename,
    IntelUnavailable,
    Severity,
)
from cadenza.tools.linediff import changed_line_spans
from cadenza.tools.paths import relative_name
from cadenza.tools.resources import SessionResources
from cadenza.tools.textfile import line_end, line_start, lines_with_ends, split_ending

# The ``Editor`` port a face implements, and the values that cross it.
__all__ = [
    "OPTION_NAMES",
    "PATTERN_OPTION",
    "DocumentSnapshot",
    "EditOutcome",
    "FileEdit",
    "PermissionAnswer",
    "PermissionOptionKind",
    "PermissionRequest",
    "ToolError",
]

# The ``CodeIntel`` port: the editor's language servers, when a face offers them.
__all__ += [
    "CodeIntel",
    "IntelDiagnostic",
    "IntelError",
    "IntelFeature",
    "IntelLocation",
    "IntelRename",
    "IntelUnavailable",
    "Severity",
]

# The engine's events, which a face turns into its updates (live and replayed).
__all__ += [
    "Activity",
    "AgentMessageChunk",
    "CandidatesTried",
    "CheckRan",
    "CheckpointWritten",
    "ContextCompacted",
    "ContractRepaired",
    "FileEdited",
    "FilesSeen",
    "ModelReplied",
    "MovementStarted",
    "PermissionDecided",
    "PlanUpdated",
    "RulesLoaded",
    "SessionEvent",
    "SessionFinished",
    "SessionResumed",
    "StepStarted",
    "ToolCacheLookup",
    "ToolCallFinished",
    "ToolCallStarted",
    "WorkspaceWaited",
]

# What the host hands a face: a stored session's summary and records (replayed as updates), a
# workflow (a mode), a model pull's progress; the workspace's remembered permission answers
# (the gate's store, which the LSP face lists and revokes); and what a session's tools hold,
# which the ACP face keeps from one turn to the next (``host.service.FaceParts.resources``).
__all__ += [
    "DEFAULT_WORKFLOW",
    "EventRecord",
    "MessageRecord",
    "PermissionStore",
    "PullProgress",
    "SessionResources",
    "SessionSummary",
    "TranscriptRecord",
    "Workflow",
]

# Helpers that keep a face's names, writes, words and lines the same as the tools'.
__all__ += [
    "apply_on_disk",
    "changed_line_spans",
    "duration",
    "line_end",
    "line_start",
    "lines_with_ends",
    "relative_name",
    "split_ending",
]
