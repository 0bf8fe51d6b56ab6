r"""``cadenza run --output json``: the run as one JSON object, for scripts and CI bots.

Scripts should not parse the live display. With ``--output json`` the display and summary go
to stderr and stdout carries exactly one object, printed when the run is over::

    {"session_id": "…", "stop_reason": "end_turn", "exit_status": 0, "message": "…",
     "steps": 3, "wall_time_s": 1.92,
     "usage": {"requests": 3, "prompt_tokens": 30, "completion_tokens": 15, "total_tokens": 45},
     "files": [{"path": "app.py", "kind": "modified", "old_path": null, "added": 1,
                "removed": 1, "diff": "--- a/app.py\n+++ b/app.py\n@@ …"}],
     "permissions": {"allow": ["run_command"], "deny": [], "allow_all": false},
     "permission_prompts": [{"tool": "run_command", "answer": "Allow once",
                             "kind": "allow_once"}],
     "error": null, "missing_info": null, "why_no_default": null}

``stop_reason`` is ``interrupted`` after Ctrl-C before the session ended (``cancelled`` after
SIGTERM), and ``error`` when the server could not start or refused the session, or the session
itself ended in an error (``error`` then says why). ``files`` holds every file the run changed,
by an edit or by a command the agent ran (:mod:`cadenza.client.snapshot`); ``diff`` is the
whole unified diff of the file (never cut, unlike the display's).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from pydantic import BaseModel

from cadenza.client.edits import FileChange
from cadenza.client.events import ClientEvent, PermissionAnswered
from cadenza.client.outcome import RunResult, Usage
from cadenza.client.permissions import PermissionPolicy
from cadenza.client.summary import diff_stat, unified_diff

ERROR_STOP_REASONS = frozenset({"error", "aborted"})
"""Stop reasons whose ``message`` is an error, copied to the report's ``error``."""


class FileReport(BaseModel):
    """One changed file: what happened, line counts and the whole unified diff."""

    path: str
    kind: str
    old_path: str | None
    added: int
    removed: int
    diff: str


class UsageReport(BaseModel):
    """Model requests and tokens of the run."""

    requests: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class PermissionsReport(BaseModel):
    """The run's ``--allow`` / ``--deny`` / ``--allow-all``."""

    allow: list[str]
    deny: list[str]
    allow_all: bool


class PermissionPrompt(BaseModel):
    """A permission request of the run and its answer.

    Attributes:
        tool: The tool's name (None: the server did not name the call first).
        answer: The selected option's name, e.g. ``Allow once`` (None: declined, i.e.
            answered ``cancelled``).
        kind: The selected option's kind, e.g. ``allow_once`` or ``reject_once`` (None:
            declined).
    """

    tool: str | None
    answer: str | None
    kind: str | None = None


class RunReport(BaseModel):
    """The object ``--output json`` prints (see the module docstring)."""

    session_id: str | None
    stop_reason: str
    exit_status: int
    message: str
    steps: int | None
    wall_time_s: float
    usage: UsageReport
    files: list[FileReport]
    permissions: PermissionsReport
    permission_prompts: list[PermissionPrompt] = []
    error: str | None = None
    missing_info: str | None = None
    why_no_default: str | None = None


def permission_prompt(event: ClientEvent) -> PermissionPrompt | None:
    """The report's entry for a permission request's answer; None for any other event."""
    if not isinstance(event, PermissionAnswered):
        return None
    return PermissionPrompt(tool=event.tool, answer=event.answer, kind=event.kind)


def file_reports(changes: Iterable[FileChange]) -> list[FileReport]:
    """Each change with its stats and whole diff (lines joined by newlines, one at the end)."""
    reports = []
    for change in changes:
        stat = diff_stat(change)
        lines = unified_diff(change, max_lines=sys.maxsize)
        reports.append(
            FileReport(
                path=change.path,
                kind=change.kind,
                old_path=change.old_path,
                added=stat.added,
                removed=stat.removed,
                diff="".join(f"{line}\n" for line in lines),
            )
        )
    return reports


def usage_report(usage: Usage) -> UsageReport:
    """The JSON shape of :class:`~cadenza.client.outcome.Usage` (with the total)."""
    return UsageReport(
        requests=usage.requests,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        total_tokens=usage.prompt_tokens + usage.completion_tokens,
    )


def permissions_report(policy: PermissionPolicy) -> PermissionsReport:
    """The JSON shape of a :class:`~cadenza.client.permissions.PermissionPolicy`."""
    return PermissionsReport(
        allow=sorted(policy.allow), deny=sorted(policy.deny), allow_all=policy.allow_all
    )


def run_report(
    run: RunResult | None,
    *,
    exit_status: int,
    wall_time: float,
    policy: PermissionPolicy,
    changes: tuple[FileChange, ...] = (),
    session_id: str | None = None,
    error: str | None = None,
    prompts: Iterable[PermissionPrompt] = (),
    stopped: str = "interrupted",
) -> RunReport:
    """The report of a run that ended (``run``) or stopped before its end (None).

    Args:
        run: How the session's run ended, or None (interrupted, or the server failed).
        exit_status: The process exit status ``cadenza run`` returns.
        wall_time: Seconds the whole run took, server start and shutdown included.
        policy: The run's permission flags.
        changes: Files changed so far, for a run without a result.
        session_id: The session's id, for a run without a result.
        error: Why the run failed before its session ended.
        prompts: The run's permission prompts, in order, with their answers.
        stopped: The stop reason of a run without a result or ``error`` (``interrupted``
            after Ctrl-C, ``cancelled`` after SIGTERM).
    """
    if run is None:
        return RunReport(
            session_id=session_id,
            stop_reason="error" if error else stopped,
            exit_status=exit_status,
            message=error or "",
            steps=None,
            wall_time_s=round(wall_time, 3),
            usage=usage_report(Usage()),
            files=file_reports(changes),
            permissions=permissions_report(policy),
            permission_prompts=list(prompts),
            error=error,
        )
    end = run.outcome
    return RunReport(
        session_id=run.session_id,
        stop_reason=end.stop_reason,
        exit_status=exit_status,
        message=end.message,
        steps=end.steps,
        wall_time_s=round(wall_time, 3),
        usage=usage_report(run.usage),
        files=file_reports(run.changes),
        permissions=permissions_report(policy),
        permission_prompts=list(prompts),
        error=end.message if end.stop_reason in ERROR_STOP_REASONS else None,
        missing_info=end.missing_info,
        why_no_default=end.why_no_default,
    )
