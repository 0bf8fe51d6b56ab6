"""The scripted OpenAI-compatible model server (``tests.support.fake_openai``) in its own process.

Third-party clients start Cadenza themselves (acpx spawns ``cadenza acp``, Emacs spawns
``cadenza serve``), so the model must be reachable by a URL, from any process, for the whole
run: a child process serves the script and appends every request body it gets to a JSONL file,
which the test reads to check the conversation Cadenza sent.

Run: ``python -m tests.thirdparty.scripted_model SCRIPT.json REQUESTS.jsonl`` prints
``PORT <n>`` once it serves, and serves until stdin closes or it is killed.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.support.fake_openai import FakeOpenAI, Reply

STARTUP_S = 20.0


class _LoggingFake(FakeOpenAI):
    """``FakeOpenAI`` that also appends each request body to a file (flushed per request)."""

    def __init__(self, script: list[Reply], log: Path) -> None:
        super().__init__(script)
        self._log = log

    def _record(self, body: dict[str, Any]) -> None:
        super()._record(body)
        with self._log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(body) + "\n")


def main(argv: list[str]) -> None:
    """Serve the script of ``argv[0]`` and log requests to ``argv[1]`` until stdin closes."""
    script = [Reply(**r) for r in json.loads(Path(argv[0]).read_text(encoding="utf-8"))]
    fake = _LoggingFake(script, Path(argv[1]))
    fake.start()
    print(f"PORT {fake.port}", flush=True)
    sys.stdin.read()  # the parent closes stdin (or dies): stop
    fake.stop()


class ScriptedModel:
    """The model server process, as a context manager.

    Args:
        folder: Where the script and the request log go.
        replies: The script, answered in order (then the fake's "exhausted" text).
    """

    def __init__(self, folder: Path, replies: list[Reply]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._script = folder / "model-script.json"
        self._log = folder / "model-requests.jsonl"
        self._script.write_text(json.dumps([dataclasses.asdict(r) for r in replies]))
        self._process: subprocess.Popen[str] | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        """The value for ``OPENAI_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def requests(self) -> list[dict[str, Any]]:
        """Every request body the model got so far, in order."""
        if not self._log.exists():
            return []
        lines = self._log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line]

    def __enter__(self) -> ScriptedModel:
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.thirdparty.scripted_model",
                str(self._script),
                str(self._log),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self._process.stdout.readline()))  # type: ignore[union-attr]
        reader.start()
        reader.join(STARTUP_S)
        if not line or not line[0].startswith("PORT "):
            self._stop()
            raise RuntimeError(f"the scripted model did not start: {line!r}")
        self.port = int(line[0].split()[1])
        return self

    def _stop(self) -> None:
        if self._process is None:
            return
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(5)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop()


if __name__ == "__main__":
    main(sys.argv[1:])
