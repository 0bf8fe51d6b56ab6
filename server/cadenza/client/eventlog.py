"""``cadenza run --events FILE``: every message the server sends the client, as JSONL.

One line per request or notification, in arrival order, appended and flushed as it arrives
(a script can follow the file while the run goes on): ``{"method": ..., "params": ...}``, plus
``"id"`` for a request. Responses to the client's own requests are not included. The params are
the JSON the server sent, untouched but for secrets: like a transcript, the file is a record
that outlives the run, so registered keys (``secrets.redact``) show as ``[redacted]``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, TextIO

from cadenza.secrets import redact_json, register_known_keys

log = logging.getLogger(__name__)


class EventLog:
    """An open ``--events`` file; call it with each raw JSON-RPC message.

    Args:
        path: The file; created if missing, appended to otherwise.

    Raises:
        OSError: The file cannot be opened for appending.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: TextIO | None = path.open("a", encoding="utf-8")
        register_known_keys()

    def __call__(self, message: dict[str, Any]) -> None:
        """Append one request or notification; a write error stops the log, not the run."""
        if self._file is None:
            return
        record: dict[str, Any] = {"method": message.get("method"), "params": message.get("params")}
        if "id" in message:
            record["id"] = message["id"]
        try:
            self._file.write(json.dumps(redact_json(record), ensure_ascii=False) + "\n")
            self._file.flush()
        except (OSError, TypeError, ValueError) as exc:
            log.warning("stopped writing %s: %s", self.path, exc)
            self.close()

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None
