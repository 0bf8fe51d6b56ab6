"""Cache routing: results of read-only tools, cached by their normalized arguments.

A read-only call (``Tool.read_only``: ``read_file``, ``list_files``, ``search``) made twice with
the same validated arguments gets the first result back without running the tool again, as
long as what it read is unchanged. Changes come from many places, most of which the session
never hears about: an edit by the agent, a command it ran (``touch b.txt``), the person typing
in an open buffer, another process writing a file. So every lookup checks the entry's stamp
(``tools.freshness``: the result's ``ToolResult.stamp``, taken by the tool before it read)
against the call's own stamp (``PreparedCall.stamp``, taken once per call; probed here when the
call has none): an entry whose files, buffers or folder tree changed since is dropped and the
lookup is a miss.
A result without a stamp (a tool that reads nothing it can probe) is trusted until dropped.

Dropping stays available, and the engine uses it to free entries early (a stale entry would be
a miss anyway):

- an edit, write, rename or delete of a path ``P`` drops every entry whose target (the call's
  ``path`` argument, resolved against the workspace root) is ``P``, contains ``P`` (a folder
  listed or searched) or lies inside ``P`` (a folder deleted or moved);
- ``invalidate_all`` drops everything.

The key is the tool name plus the validated argument model dumped canonically, so
``{"path": "a.py"}`` and ``{"path": "a.py", "offset": 1}`` (the default) share one entry. Paths
are not resolved in the key: ``./a.py`` and ``a.py`` are two entries, which only costs a miss.

This module returns the outcome of each lookup (``hit``, ``miss``, ``bypass``); the engine
publishes it as an event for the session log. It imports nothing from the engine.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cadenza.tools.base import ToolError, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall
from cadenza.tools.freshness import ReadStamp
from cadenza.tools.paths import resolve_in_workspace

CacheOutcome = Literal["hit", "miss", "bypass"]
"""``hit``: answered from the cache; ``miss``: run it, then ``store``; ``bypass``: not cacheable."""

DEFAULT_MAX_ENTRIES = 256
"""Entries kept before the oldest is evicted (each result is bounded by its tool, ~20 kB)."""


@dataclass(frozen=True, kw_only=True)
class CacheLookup:
    """The outcome of one lookup.

    Attributes:
        outcome: ``hit``, ``miss`` or ``bypass`` (the tool is not read-only).
        key: The canonical key of the call (computed for every outcome, for the session log).
        result: The cached result on a hit, else None.
    """

    outcome: CacheOutcome
    key: str
    result: ToolResult | None = None

    @property
    def hit(self) -> bool:
        """True when ``result`` holds the cached answer."""
        return self.outcome == "hit"


@dataclass(frozen=True, kw_only=True)
class _Entry:
    target: str | None  # the call's ``path`` argument, None when the tool has none
    result: ToolResult


def cache_key(prepared: PreparedCall) -> str:
    """The canonical key of a call: tool name and validated arguments as sorted, compact JSON.

    Args:
        prepared: A call whose arguments validated (defaults filled in by the argument model).

    Returns:
        For example ``{"args":{"limit":400,"offset":1,"path":"a.py"},"tool":"read_file"}``.
    """
    args = prepared.args.model_dump(mode="json")
    return json.dumps(
        {"tool": prepared.tool.name, "args": args}, sort_keys=True, separators=(",", ":")
    )


def _target(prepared: PreparedCall) -> str | None:
    path = getattr(prepared.args, "path", None)
    return path if isinstance(path, str) else None


def _overlaps(a: Path, b: Path) -> bool:
    """True when one path is the other or lies inside it."""
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


class ReadCache:
    """Results of read-only calls by canonical key, oldest evicted first.

    Args:
        max_entries: Entries kept (at least 1); storing one more evicts the oldest.
    """

    def __init__(self, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self._max = max_entries
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, prepared: PreparedCall) -> CacheLookup:
        """Find the cached result of a call, if what it read is unchanged.

        Args:
            prepared: A validated call.

        Returns:
            ``bypass`` for a tool that is not read-only, ``hit`` with the result, or ``miss``
            (nothing stored, or the stored result's stamp is no longer fresh).
        """
        key = cache_key(prepared)
        if not prepared.tool.read_only:
            return CacheLookup(outcome="bypass", key=key)
        entry = self._entries.get(key)
        if entry is None:
            return CacheLookup(outcome="miss", key=key)
        stamp = entry.result.stamp
        if stamp is not None and not self._fresh(stamp, prepared.stamp):
            del self._entries[key]  # what it read changed: the answer would be stale
            return CacheLookup(outcome="miss", key=key)
        self._entries.move_to_end(key)
        return CacheLookup(outcome="hit", key=key, result=entry.result)

    @staticmethod
    def _fresh(stored: ReadStamp, now: ReadStamp | None) -> bool:
        """Whether the stored answer's inputs are unchanged (the call's stamp, else a probe)."""
        return stored.fresh() if now is None else stored.matches(now)

    def store(self, prepared: PreparedCall, result: ToolResult) -> bool:
        """Remember the result of a read-only call.

        Error results are never stored (the model may fix the cause, e.g. create the missing
        file, and must then see the new answer); neither are results that carry edits.

        Args:
            prepared: The call that produced ``result``.
            result: What the tool returned.

        Returns:
            True when the result was stored.
        """
        if not prepared.tool.read_only or result.is_error or result.edits:
            return False
        key = cache_key(prepared)
        self._entries[key] = _Entry(target=_target(prepared), result=result)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
        return True

    def invalidate_paths(self, paths: Iterable[Path], root: Path) -> int:
        """Drop the entries an edit, write, rename or delete of ``paths`` may have changed.

        An entry goes when its target (resolved against ``root`` with ``resolve_in_workspace``)
        is one of ``paths``, contains one (a folder listed or searched) or lies inside one (a
        folder deleted or moved). Entries whose target cannot be resolved, or whose tool has no
        ``path`` argument, go too: their scope is unknown.

        Args:
            paths: Changed paths, absolute or relative to ``root``.
            root: The workspace root.

        Returns:
            The number of entries dropped.
        """
        changed = [p if p.is_absolute() else root / p for p in paths]
        changed = [p.resolve(strict=False) for p in changed]
        if not changed:
            return 0
        stale = [key for key, entry in self._entries.items() if self._stale(entry, changed, root)]
        for key in stale:
            del self._entries[key]
        return len(stale)

    @staticmethod
    def _stale(entry: _Entry, changed: list[Path], root: Path) -> bool:
        if entry.target is None:
            return True
        try:
            target = resolve_in_workspace(root, entry.target)
        except ToolError:
            return True
        return any(_overlaps(target, path) for path in changed)

    def invalidate_all(self) -> int:
        """Drop every entry (e.g. to free them: stale entries would miss anyway).

        Returns:
            The number of entries dropped.
        """
        count = len(self._entries)
        self._entries.clear()
        return count
