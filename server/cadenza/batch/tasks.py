"""The task file of ``cadenza batch``: one JSON object per line, checked line by line.

Each line is ``{"id"?: str, "repo": PATH_OR_GIT_URL, "ref"?: str, "task": str, "model"?: str,
"workflow"?: str, "allow"?: [str], "max_steps"?: int}``. A line that is not such an object is
reported with its line number and skipped, so one typo does not cost the rest of the batch.
A missing ``id`` is derived from a hash of (repo, ref, task): a rerun of the same file finds
the same ids, which is what ``--resume`` relies on.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from cadenza.client.permissions import PolicyError, check_rule

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""A task id is a folder name under ``--out``: no separators, no ``..``, no leading dot."""


class TaskSpec(BaseModel):
    """One line of the task file (unknown keys are refused: a typo must not pass silently)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = ""
    repo: str = Field(min_length=1)
    ref: str | None = None
    task: str = Field(min_length=1)
    model: str | None = None
    workflow: str | None = None
    allow: tuple[str, ...] = ()
    max_steps: int | None = Field(default=None, ge=1, le=1000)

    @field_validator("id")
    @classmethod
    def _id_is_a_folder_name(cls, value: str) -> str:
        if value and not _ID.fullmatch(value):
            raise ValueError(
                "must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        return value

    @field_validator("repo", "ref")
    @classmethod
    def _not_an_option(cls, value: str | None) -> str | None:
        # git would read a value starting with "-" as an option (--upload-pack=CMD runs CMD).
        if value and value.startswith("-"):
            raise ValueError("must not start with '-'")
        return value

    @field_validator("allow")
    @classmethod
    def _known_tools(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        try:
            return tuple(check_rule(text) for text in value)
        except PolicyError as exc:
            raise ValueError(str(exc)) from None

    def with_id(self) -> TaskSpec:
        """This task with its id filled in (``derived_id`` when the line had none)."""
        return self if self.id else self.model_copy(update={"id": derived_id(self)})


def derived_id(spec: TaskSpec) -> str:
    """``t-`` and 12 hex digits of SHA-256 over (repo, ref, task): stable across reruns."""
    key = json.dumps([spec.repo, spec.ref or "", spec.task], ensure_ascii=False)
    return "t-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True, kw_only=True)
class BadLine:
    """A line that was skipped: its number (from 1) and why."""

    line: int
    reason: str


@dataclass(frozen=True, kw_only=True)
class TaskFile:
    """The tasks of a file, in order, and the lines that were skipped."""

    tasks: tuple[TaskSpec, ...]
    skipped: tuple[BadLine, ...]


def read_tasks(path: Path) -> TaskFile:
    """Read and check ``path``; blank lines and lines starting with ``#`` are ignored.

    A repeated id skips the later line (its results would overwrite the earlier one's).

    Raises:
        OSError: The file cannot be read.
    """
    tasks: list[TaskSpec] = []
    skipped: list[BadLine] = []
    seen: set[str] = set()
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parsed = parse_line(line)
        if isinstance(parsed, str):
            skipped.append(BadLine(line=number, reason=parsed))
        elif parsed.id in seen:
            skipped.append(BadLine(line=number, reason=f"id {parsed.id!r} is repeated"))
        else:
            seen.add(parsed.id)
            tasks.append(parsed)
    return TaskFile(tasks=tuple(tasks), skipped=tuple(skipped))


def parse_line(line: str) -> TaskSpec | str:
    """One line as a task (with its id), or the reason it is not one."""
    try:
        raw = json.loads(line)
    except ValueError as exc:
        return f"not JSON: {exc}"
    if not isinstance(raw, dict):
        return f"not a JSON object but {type(raw).__name__}"
    try:
        return TaskSpec.model_validate(raw).with_id()
    except ValidationError as exc:
        return "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'line'}: {err['msg']}"
            for err in exc.errors()
        )
