"""Which files the model knows whole, carried from one turn of a session to the next.

The text edit format lets a whole-file write replace only a file whose whole text the
conversation showed (``Runtime.shown``). A later turn goes on in the same conversation, so
those files are still known to the model, but only while their text is the one it knew: the
person may change a file between turns, or while the run goes on. So each file is recorded with
the digest of the text the model was shown, when it was shown (or wrote it whole, or changed a
text it knew: ``after_edit.record_edit``); each run's end publishes those (``FilesSeen``), and
the next turn, in this process or rebuilt from the transcript, keeps the files whose text still
has that digest.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from cadenza.tools.base import ToolError, text_digest
from cadenza.tools.documents import current_document
from cadenza.tools.host import ToolHost
from cadenza.tools.paths import relative_name, resolve_in_workspace


def _text(host: ToolHost, path: Path) -> str | None:
    """The file's text as the model would read it now (an open buffer first), or None."""
    try:
        return current_document(host, path).text
    except (ToolError, OSError, ValueError):
        return None


def seen_files(root: Path, shown: Mapping[Path, str]) -> dict[str, str]:
    """Workspace-relative name → digest of the text the model knew, for each known file."""
    return {
        relative_name(root, path): known
        for path, known in sorted(shown.items())
        if path.is_relative_to(root)
    }


def still_seen(root: Path, host: ToolHost, files: Mapping[str, str]) -> dict[Path, str]:
    """The files of ``files`` whose text still has its recorded digest (resolved paths)."""
    kept: dict[Path, str] = {}
    for name, recorded in files.items():
        try:
            path = resolve_in_workspace(root, name)
        except ToolError:
            continue
        text = _text(host, path)
        if text is not None and text_digest(text) == recorded:
            kept[path] = recorded
    return kept
