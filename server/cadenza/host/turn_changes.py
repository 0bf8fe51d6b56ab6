"""The review of a session's latest turn: its changes as hunks, kept or undone one by one.

The checkpoint (``host.checkpoints``) holds each file's state before the turn's first change
to it (``turn_before``) and after its last (``turn_after``). Their line diff
(``tools.linediff.changed_line_spans``) is the turn's hunks; a hunk's id is stable for the
turn. The person keeps or undoes hunks (``review``); what the turn and the review left is the
*expected* text. The file now may differ from it (the person typed since): hunks away from
those edits are found by shifting, a hunk the person changed is refused by name.

Undoing hunks updates the checkpoint's ``after`` to the file's new state, so a later undo of
the whole session (``undo_plan``) still finds every file as recorded; ``undone_note`` tells
the model, at its next turn, which of its changes were undone.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal

from cadenza.host.checkpoints import (
    ABSENT,
    CheckpointEntry,
    CheckpointError,
    FileState,
    SessionCheckpoint,
)
from cadenza.secrets import redact_then_cut
from cadenza.tools.linediff import changed_line_spans
from cadenza.tools.paths import leads_outside

log = logging.getLogger(__name__)

HunkState = Literal["pending", "kept", "undone"]
MAX_NOTE_CHARS = 400
"""Each side of an undone change is cut after this many characters in the note to the model."""


class ReviewRefused(Exception):
    """A hunk cannot be undone (the person changed the file there since); nothing was undone."""


@dataclass(frozen=True, kw_only=True)
class TurnHunk:
    """One hunk of the turn's change to a file.

    Attributes:
        id: Stable for the turn.
        old_text: The lines before the turn (empty: the turn inserted them).
        new_text: The lines the turn left (empty: the turn deleted them).
        state: ``pending``, ``kept`` or ``undone``.
        line: Its first line (1-based) in the file as it was before the turn.
        start: Code-point offset in the file's current text where the hunk's lines now sit
            (``new_text``; ``old_text`` once undone); None when the file changed there since.
        end: The end of that span (None as ``start``).
    """

    id: str
    old_text: str
    new_text: str
    state: HunkState
    line: int
    start: int | None
    end: int | None

    @property
    def current_text(self) -> str:
        """What the file holds at this hunk when nobody changed it since."""
        return self.old_text if self.state == "undone" else self.new_text


@dataclass(frozen=True, kw_only=True)
class TurnFile:
    """One file the latest turn changed.

    Attributes:
        path: Workspace-relative, ``/``-separated.
        entry: Its checkpoint record.
        now: Its state now, as the editor sees it.
        hunks: The turn's hunks, in file order.
    """

    path: str
    entry: CheckpointEntry
    now: FileState
    hunks: list[TurnHunk]


def _text(state: FileState) -> str | None:
    return (state.text if state.exists else "") if state is not None else None


def _hunk_id(turn: int, path: str, index: int) -> str:
    return f"t{turn}-{hashlib.sha1(path.encode()).hexdigest()[:8]}-{index}"


def _expected(
    after: str, spans: list[tuple[int, int, str, str, HunkState]]
) -> tuple[str, list[tuple[int, int]]]:
    """The text the turn and the review left, and each hunk's span in it."""
    parts: list[str] = []
    places: list[tuple[int, int]] = []
    at = 0  # offset in ``after``
    size = 0  # length of the text built so far
    for b0, b1, old, _new, state in spans:
        parts.append(after[at:b0])
        size += b0 - at
        body = old if state == "undone" else after[b0:b1]
        parts.append(body)
        places.append((size, size + len(body)))
        size += len(body)
        at = b1
    parts.append(after[at:])
    return "".join(parts), places


def _moved(places: list[tuple[int, int]], expected: str, now: str) -> list[tuple[int, int] | None]:
    """Each span of ``expected`` in ``now``; None where ``now`` differs at that span."""
    if now == expected:
        return list(places)
    edits = changed_line_spans(expected, now)
    out: list[tuple[int, int] | None] = []
    for start, end in places:
        if any((a0 < end and a1 > start) or a0 == a1 == start == end for a0, a1, *_ in edits):
            out.append(None)
            continue
        shift = sum((b1 - b0) - (a1 - a0) for a0, a1, b0, b1 in edits if a1 <= start)
        out.append((start + shift, end + shift))
    return out


def turn_file(
    checkpoint: SessionCheckpoint, entry: CheckpointEntry, now: FileState
) -> TurnFile | None:
    """The turn's hunks of one file; None when the turn left it as it was (or it is not text)."""
    if entry.turn_before is None or entry.turn_after is None:
        return None
    before, after = _text(entry.turn_before), _text(entry.turn_after)
    if before is None or after is None:
        return None
    if entry.turn_before.exists == entry.turn_after.exists and before == after:
        return None
    # An empty file created or deleted has no changed line: one empty hunk stands for it.
    diff = changed_line_spans(before, after) or [(0, 0, 0, 0)]
    spans = [
        (
            b0,
            b1,
            before[a0:a1],
            after[b0:b1],
            _state(checkpoint, _hunk_id(checkpoint.turn, entry.path, i)),
        )
        for i, (a0, a1, b0, b1) in enumerate(diff)
    ]
    expected, places = _expected(after, spans)
    exists = _expected_exists(entry, [state for *_, state in spans])
    current = _text(now) if now.exists else None
    if now.exists != exists or current is None:
        found: list[tuple[int, int] | None] = [None] * len(places)
    else:
        found = _moved(places, expected, current)
    hunks = [
        TurnHunk(
            id=_hunk_id(checkpoint.turn, entry.path, i),
            old_text=old,
            new_text=new,
            state=state,
            line=before.count("\n", 0, diff[i][0]) + 1,
            start=None if where is None else where[0],
            end=None if where is None else where[1],
        )
        for i, ((_b0, _b1, old, new, state), where) in enumerate(zip(spans, found, strict=True))
    ]
    return TurnFile(path=entry.path, entry=entry, now=now, hunks=hunks)


def _state(checkpoint: SessionCheckpoint, hunk_id: str) -> HunkState:
    state = checkpoint.review.get(hunk_id)
    return state if state in ("kept", "undone") else "pending"  # type: ignore[return-value]


def _expected_exists(entry: CheckpointEntry, states: list[HunkState]) -> bool:
    """Whether the file should exist: a created (deleted) file stops (starts) when undone."""
    assert entry.turn_before is not None and entry.turn_after is not None
    if entry.turn_before.exists != entry.turn_after.exists and all(s == "undone" for s in states):
        return entry.turn_before.exists
    return entry.turn_after.exists


def turn_files(
    checkpoint: SessionCheckpoint, current: Callable[[str], FileState]
) -> list[TurnFile]:
    """Every file the latest turn changed, with its hunks (none after a whole-session undo)."""
    if checkpoint.undone:
        return []
    files = []
    for entry in checkpoint.entries.values():
        if entry.turn_before is None or entry.turn_after is None:
            continue
        # A path that now leads outside (a link) is not read: its hunks cannot be undone.
        outside = leads_outside(checkpoint.root, entry.path)
        now = FileState(exists=True) if outside else current(entry.path)
        found = turn_file(checkpoint, entry, now)
        if found is not None:
            files.append(found)
    return files


def undo_hunks(file: TurnFile, ids: Iterable[str]) -> FileState | None:
    """The file's state once the hunks ``ids`` (pending or kept ones) are undone.

    Returns:
        The new state, or None when there is nothing to undo in this file.

    Raises:
        ReviewRefused: The file changed at one of the hunks since the turn (nothing undone).
    """
    wanted = set(ids)
    chosen = [h for h in file.hunks if h.id in wanted and h.state != "undone"]
    if not chosen:
        return None
    broken = [h for h in chosen if h.start is None]
    if broken:
        raise ReviewRefused(f"{file.path} changed at that change since the turn")
    entry = file.entry
    assert entry.turn_before is not None and entry.turn_after is not None
    left = [h for h in file.hunks if h.state != "undone" and h not in chosen]
    if entry.turn_before.exists != entry.turn_after.exists and not left:
        if not entry.turn_before.exists:
            return ABSENT
        return FileState(exists=True, text=entry.turn_before.text, data=entry.turn_before.data)
    text = file.now.text or ""
    for hunk in sorted(chosen, key=lambda h: h.start or 0, reverse=True):
        assert hunk.start is not None and hunk.end is not None
        text = text[: hunk.start] + hunk.old_text + text[hunk.end :]
    return FileState(exists=True, text=text)


def record_review(
    checkpoint: SessionCheckpoint,
    decided: dict[str, HunkState],
    changed: dict[str, FileState],
) -> None:
    """Record hunks kept or undone, and the states undo left files in (``after``).

    Raises:
        CheckpointError: The checkpoint cannot be written.
    """
    checkpoint.review.update(decided)
    for path, state in changed.items():
        entry = checkpoint.entries[path]
        after = entry.after
        origin = after.origin if after is not None and state.exists else None
        entry.after = replace(state, origin=origin)
    checkpoint.save()


def undone_note(checkpoint: SessionCheckpoint) -> str | None:
    """What the model is told at its next turn about the changes the person undid, if any."""
    lines: list[str] = []
    for entry in checkpoint.entries.values():
        found = turn_file(checkpoint, entry, entry.after or ABSENT)
        for hunk in found.hunks if found is not None else []:
            if hunk.state == "undone":
                lines.append(
                    f"- {entry.path}, line {hunk.line}: your change from "
                    f"{_quoted(hunk.old_text)} to {_quoted(hunk.new_text)}"
                )
    if not lines:
        return None
    head = (
        "The person undid these changes you made in the previous turn (the file is as it "
        "was before each of them; do not make them again unless asked):"
    )
    return "\n".join([head, *lines])


def begin_turn(checkpoint: SessionCheckpoint | None) -> str | None:
    """Start the session's next turn in its checkpoint (``host.service`` ``next_turn``).

    The review then lists only the changes made from here on. Returns ``undone_note`` of the
    turn that ends here (None: nothing undone, no checkpoint, or it cannot be written).
    """
    if checkpoint is None:
        return None
    try:
        note = undone_note(checkpoint)
        checkpoint.begin_turn()
    except CheckpointError as exc:
        log.warning("session %s: its checkpoint is unwritable: %s", checkpoint.session_id, exc)
        return None
    return note


def _quoted(text: str) -> str:
    if not text:
        return "nothing"
    cut = redact_then_cut(text, MAX_NOTE_CHARS)
    fence = "```"
    while fence in cut:
        fence += "`"
    return f"{fence}\n{cut}{'' if cut.endswith(chr(10)) else chr(10)}{fence}"
