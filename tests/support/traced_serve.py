"""``cadenza`` under a tracer that records the Cadenza modules whose functions run.

Usage: ``python traced_serve.py OUT_DIR serve ...`` (the arguments after ``OUT_DIR`` are
``cadenza``'s). The tracer (``sys.settrace``, every thread) notes each Cadenza function that
starts or resumes; module and class bodies, which run at import, are left out, so an imported
module counts only once code in it is called. ``SIGUSR1`` writes what ran since the previous
signal to ``OUT_DIR/<n>.json`` (n = 1, 2...: a sorted list of paths relative to the package,
such as ``lsp/server.py``) and starts a new record, so a test marks where a phase begins; the
last record is written as ``cadenza`` returns. The process writes its id to ``OUT_DIR/pid``
before Cadenza starts.
"""

from __future__ import annotations

import inspect
import json
import os
import signal
import sys
import threading
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

del sys.path[0]  # this folder's modules are the tests', not the server's

import cadenza  # noqa: E402  (after the path fix)
from cadenza.cli import main  # noqa: E402

PACKAGE = os.path.dirname(cadenza.__file__) + os.sep
"""The package folder as its code objects name it (not resolved: their file names are not)."""


class Record:
    """The code objects seen since the last mark (shared by every thread)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.seen: set[CodeType] = set()
        self.marks = 0

    def trace(self, frame: FrameType, event: str, arg: Any) -> None:
        """The global trace function: note the code, trace no lines (returns None)."""
        if event == "call":
            self.seen.add(frame.f_code)

    def mark(self, signum: int, frame: FrameType | None) -> None:
        """Write the modules that ran since the previous mark, then start over."""
        seen, self.seen = self.seen, set()
        self.marks += 1
        modules = sorted(
            {
                code.co_filename[len(PACKAGE) :].replace(os.sep, "/")
                for code in seen
                if code.co_filename.startswith(PACKAGE) and code.co_flags & inspect.CO_OPTIMIZED
            }
        )
        staging = self.out / f"{self.marks}.json.part"
        staging.write_text(json.dumps(modules), encoding="utf-8")
        staging.replace(self.out / f"{self.marks}.json")


def run(argv: list[str]) -> int:
    """Trace ``cadenza`` run with ``argv[1:]``, marks written to ``argv[0]``."""
    out = Path(argv[0])
    record = Record(out)
    signal.signal(signal.SIGUSR1, record.mark)
    (out / "pid").write_text(str(os.getpid()), encoding="utf-8")
    threading.settrace(record.trace)
    sys.settrace(record.trace)
    try:
        return main(argv[1:])
    finally:
        sys.settrace(None)
        record.mark(signal.SIGUSR1, None)  # the last phase ends with the process


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
