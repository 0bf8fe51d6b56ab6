"""Putting one file back on disk, as an undo step says (``host.undo_plan``).

For a client that cannot take the step as an edit (no ``workspace/applyEdit``, no resource
operations, no ``fs/write_text_file``): the checkpoint's exact bytes when it has them (so the
file's encoding, BOM and line endings come back as they were), else the text encoded as the
file is now.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from cadenza.host.checkpoints import disk_state
from cadenza.host.undo_plan import UndoStep
from cadenza.textio import PLAIN_UTF8, UndecodableError, decode_bytes, encode_text, write_atomic


def write_step(root: Path, step: UndoStep) -> None:
    """Do ``step`` on disk, in the workspace at ``root``.

    Raises:
        OSError: A write, rename or removal failed.
        UnencodableError: The text cannot be encoded as the file is now.
    """
    path = root / step.path
    if step.action == "unchanged":
        return
    if step.action == "remove":
        path.unlink()
        return
    if step.action == "move_back":
        path.parent.mkdir(parents=True, exist_ok=True)
        os.rename(root / step.current_path, path)
        if step.current.text == step.target.text:
            return
    data = step.target.data
    write_atomic(path, data if data is not None else encoded_as_on_disk(path, step.target.text))


def encoded_as_on_disk(path: Path, text: str | None) -> bytes:
    """``text`` encoded as the file at ``path`` is now (UTF-8 when it is gone or undecodable)."""
    fmt = PLAIN_UTF8
    current = disk_state(path).data
    if current is not None:
        with contextlib.suppress(UndecodableError):
            fmt = decode_bytes(current).format
    return encode_text(text or "", fmt)
