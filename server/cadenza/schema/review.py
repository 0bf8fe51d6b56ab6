"""``cadenza.listChanges`` and ``cadenza.reviewChanges``: the latest turn's hunks, kept or undone.

A hunk is one run of changed lines of a file between the state before the turn's first change
to it and after its last. Its ``id`` is stable for the turn; ``range`` is where its text now
sits in the file (``newText``, or ``oldText`` once undone), in the negotiated position
encoding; it is absent when the person changed the file at that hunk since (then it cannot
be undone).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from cadenza.schema.base import OPEN, SparseWireModel, WireModel
from cadenza.schema.commands import LspRange

HunkState = Literal["pending", "kept", "undone"]
"""A hunk's review: not reviewed yet, kept, or undone (a newer server may send others)."""


class ListChangesArgs(WireModel):
    """The one argument of ``cadenza.listChanges``: ``{sessionId}``."""

    session_id: str = Field(min_length=1)


class ReviewChangesArgs(SparseWireModel):
    """The one argument of ``cadenza.reviewChanges``.

    Attributes:
        session_id: The session.
        action: ``keep`` (only marks the hunks kept) or ``undo`` (puts their old text back).
        hunks: The hunks' ids; with ``uris``, both sets count.
        uris: Every hunk of these files. Neither ``hunks`` nor ``uris``: every pending hunk.
    """

    session_id: str = Field(min_length=1)
    action: Literal["keep", "undo"]
    hunks: list[Annotated[str, Field(min_length=1)]] | None = Field(default=None, max_length=10_000)
    uris: list[Annotated[str, Field(min_length=1, max_length=8192)]] | None = Field(
        default=None, max_length=10_000
    )


class ChangeHunk(SparseWireModel):
    """One hunk: ``{id, range?, oldText, newText, state}``."""

    id: str
    range: LspRange | None = None
    old_text: str
    new_text: str
    state: Annotated[HunkState, OPEN]


class ChangedFile(WireModel):
    """One file the turn changed: ``{uri, path, hunks}`` (``path`` workspace-relative)."""

    uri: str
    path: str
    hunks: list[ChangeHunk] = Field(default_factory=list)


class ChangesResult(WireModel):
    """The result of both commands: ``{sessionId, files, unlisted}`` (after a review: its state)."""

    session_id: str
    files: list[ChangedFile] = Field(default_factory=list)
    unlisted: list[str] = Field(default_factory=list)
    """Sentences for the person on changes the turn's commands made that are not listed (a
    workspace too large to compare, files that are not text): shown under the review."""
