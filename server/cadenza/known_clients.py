"""Clients whose ``initialize`` a face accepted before: the early answers' safety net.

Both faces answer ``initialize`` before their protocol library is loaded (``lsp.early``,
``acp.early``). The answer itself does not depend on the library, but whether the library
*accepts* the request does: it validates every field of the client's capabilities, and a
malformed one must still get the error it always got. Checking that without the library
would mean writing its schema again; instead, a request is answered early only when the very
same parameters (the process id aside) were accepted by the library in an earlier start.
Editors send the same ``initialize`` on every start of a workspace, so from the second start on
they get the early answer, and a hostile or new request takes the usual path. The record is a
folder of empty files named by a hash, in the user cache folder (a lost record only costs
one slow start), bounded in number.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

_KEEP = 64
_VOLATILE = ("processId", "workDoneToken")
"""Fields that change on every start and that the libraries check by type alone."""


def _folder() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("cadenza")) / "known-clients"


def client_key(face: str, params: dict[str, Any]) -> str:
    """A name for these ``initialize`` params on ``face`` (stable across starts)."""
    stable = {key: value for key, value in params.items() if key not in _VOLATILE}
    text = json.dumps([face, stable], sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:32]


def is_known(key: str) -> bool:
    """Whether ``key``'s params were accepted before."""
    return (_folder() / key).exists()


def remember(key: str) -> None:
    """Note that ``key``'s params were accepted; keep the newest ``_KEEP`` records."""
    folder = _folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / key).touch()
        records = sorted(folder.iterdir(), key=lambda path: path.stat().st_mtime)
        for old in records[:-_KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only state folder: every start takes the usual path


def env_allows() -> bool:
    """``CADENZA_EARLY_INITIALIZE=0`` turns the early answers off."""
    return os.environ.get("CADENZA_EARLY_INITIALIZE") != "0"
