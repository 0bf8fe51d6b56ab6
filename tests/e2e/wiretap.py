"""A transparent stdio relay that records every LSP message between a client and a server.

Usage: ``python wiretap.py LOG COMMAND...``. It starts ``COMMAND`` (e.g. ``cadenza serve``),
copies its own stdin to the command's stdin and the command's stdout to its own stdout byte
for byte, and appends each framed JSON-RPC message it sees to ``LOG`` as one JSON line
``{"dir": "c2s" | "s2c", "msg": {...}}``; the first line is ``{"dir": "meta", "msg": {"pid":
N}}``, the server's pid. stderr is inherited. It exits with the command's status once the
command has closed its stdout and exited, so the client sees the server's own exit.

The end-to-end tests put it in front of the real server to read the real wire (every
``workspace/applyEdit`` the server sent, every ``$/progress``), not what the client library
made of it.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from typing import BinaryIO

HEADER_END = b"\r\n\r\n"


class FrameLog:
    """Parses one direction's byte stream into LSP frames and logs each body."""

    def __init__(self, direction: str, sink: BinaryIO, lock: threading.Lock) -> None:
        self.direction = direction
        self.sink = sink
        self.lock = lock
        self.buffer = b""

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(HEADER_END)) >= 0:
            length = None
            for line in self.buffer[:end].split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            if length is None:
                self.record({"unframed": self.buffer[:end].decode("latin-1")})
                self.buffer = self.buffer[end + len(HEADER_END) :]
                continue
            start = end + len(HEADER_END)
            if len(self.buffer) < start + length:
                return
            body = self.buffer[start : start + length]
            self.buffer = self.buffer[start + length :]
            try:
                self.record(json.loads(body))
            except ValueError:
                self.record({"unparsable": body.decode("utf-8", "replace")})

    def record(self, message: object) -> None:
        line = json.dumps({"dir": self.direction, "msg": message}) + "\n"
        with self.lock:
            self.sink.write(line.encode())
            self.sink.flush()


def pump(source: BinaryIO, target: BinaryIO, frames: FrameLog) -> None:
    """Copy ``source`` to ``target`` until EOF, logging frames; then close ``target``."""
    read = getattr(source, "read1", source.read)
    try:
        while data := read(65536):
            frames.feed(data)
            target.write(data)
            target.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError):
            target.close()


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: wiretap.py LOG COMMAND...", file=sys.stderr)
        return 2
    log_path, command = argv[1], argv[2:]
    lock = threading.Lock()
    with open(log_path, "ab") as sink:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert child.stdin is not None and child.stdout is not None
        FrameLog("meta", sink, lock).record({"pid": child.pid})
        stdin = os.fdopen(sys.stdin.fileno(), "rb", buffering=0, closefd=False)
        stdout = os.fdopen(sys.stdout.fileno(), "wb", buffering=0, closefd=False)
        to_server = threading.Thread(
            target=pump, args=(stdin, child.stdin, FrameLog("c2s", sink, lock)), daemon=True
        )
        to_server.start()
        pump(child.stdout, stdout, FrameLog("s2c", sink, lock))
        return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
