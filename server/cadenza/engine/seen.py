"""Which files the model knows whole, carried from one turn of a session to the next.

The text edit format lets a whole-file write replace only a file whose whole text the
conversation showed (``Runtime.shown``). A later turn goes on in the same conversation, so
those files are still known to the model, but only while their text is the one it knew: the
person may change a file between turns. Each run's end records the known files with a digest
of their text (``FilesSeen``); the next turn, in this process or rebuilt from the transcript,
keeps the files whose text still has that digest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from cadenza.tools.base import ToolError
from cadenza.tools.documents import current_document
from cadenza.tools.host import ToolHost
from cadenza.tools.paths import relative_name, resolve_in_workspace


def digest(text: str) -> str:
    """SHA-256 of ``text`` (UTF-8), hex."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _text(host: ToolHost, path: Path) -> str | None:
    """The file's text as the model would read it now (an open buffer first), or None."""
    try:
        return current_document(host, path).text
    except (ToolError, OSError, ValueError):
        return None


def seen_files(root: Path, host: ToolHost, shown: Iterable[Path]) -> dict[str, str]:
    """Workspace-relative name → digest of the text now, for each known file still readable."""
    files: dict[str, str] = {}
    for path in sorted(shown):
        text = _text(host, path)
        if text is not None and path.is_relative_to(root):
            files[relative_name(root, path)] = digest(text)
    return files


def still_seen(root: Path, host: ToolHost, files: Mapping[str, str]) -> set[Path]:
    """The files of ``files`` whose text still has its recorded digest (resolved paths)."""
    kept: set[Path] = set()
    for name, recorded in files.items():
        try:
            path = resolve_in_workspace(root, name)
        except ToolError:
            continue
        text = _text(host, path)
        if text is not None and digest(text) == recorded:
            kept.add(path)
    return kept
