"""Small executable fake agent CLIs for the cli-json provider tests.

``install_fake_cli(folder)`` writes an executable Python script that behaves like one call of an
agent CLI: it reads its prompt (stdin, or the last argument), logs the invocation as one JSON
line (argv, stdin, pid, process group, and any child it started) to ``$FAKE_CLI_LOG``, then
plays the next entry of the JSON list in ``$FAKE_CLI_SCRIPT`` (the n-th call plays entry n, the
last entry repeats): ``stdout``, ``stderr``, ``exit`` status, ``sleep`` seconds, and ``child``
(start a sleeping child process in the same process group first).

The ``*_output`` helpers print an answer the way each real CLI does in its JSON mode.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCRIPT = """\
#!{python}
import json, os, subprocess, sys, time

entries = json.load(open(os.environ["FAKE_CLI_SCRIPT"]))
log_path = os.environ["FAKE_CLI_LOG"]
stdin = sys.stdin.read() if not sys.stdin.isatty() else ""
try:
    with open(log_path) as f:
        index = sum(1 for _ in f)
except FileNotFoundError:
    index = 0
entry = entries[min(index, len(entries) - 1)]
child = None
if entry.get("child"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]).pid
record = {{
    "argv": sys.argv[1:],
    "stdin": stdin,
    "pid": os.getpid(),
    "pgid": os.getpgid(0),
    "child": child,
    "cwd": os.getcwd(),
}}
with open(log_path, "a") as f:
    f.write(json.dumps(record) + "\\n")
time.sleep(entry.get("sleep", 0))
sys.stdout.write(entry.get("stdout", ""))
sys.stderr.write(entry.get("stderr", ""))
sys.exit(entry.get("exit", 0))
"""


@dataclass(frozen=True, kw_only=True)
class FakeCli:
    """An installed fake: its executable, its script file and its invocation log."""

    executable: Path
    script_path: Path
    log_path: Path

    def script(self, *entries: dict[str, Any]) -> None:
        self.script_path.write_text(json.dumps(list(entries)))

    def calls(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines()]

    def prompt(self, index: int) -> str:
        """The prompt of call ``index``: its stdin, or its last argument."""
        call = self.calls()[index]
        return str(call["stdin"] or call["argv"][-1])

    def env(self) -> dict[str, str]:
        return {"FAKE_CLI_SCRIPT": str(self.script_path), "FAKE_CLI_LOG": str(self.log_path)}


def install_fake_cli(folder: Path, name: str = "fake-cli") -> FakeCli:
    folder.mkdir(parents=True, exist_ok=True)
    executable = folder / name
    executable.write_text(SCRIPT.format(python=sys.executable))
    executable.chmod(0o755)
    fake = FakeCli(
        executable=executable, script_path=folder / "script.json", log_path=folder / "calls.jsonl"
    )
    fake.script({"stdout": ""})
    return fake


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie awaiting its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# --- each CLI's output format -----------------------------------------------------------


def claude_output(text: str, *, is_error: bool = False) -> str:
    return json.dumps(
        {
            "type": "result",
            "subtype": "success",
            "is_error": is_error,
            "result": text,
            "usage": {"input_tokens": 12, "output_tokens": 4},
        }
    )


def codex_output(text: str) -> str:
    return text + "\n"


def gemini_output(text: str) -> str:
    return json.dumps({"response": text, "stats": {"models": {}}})


def opencode_output(text: str) -> str:
    events = [
        {"type": "step_start", "part": {"type": "step-start"}},
        {"type": "text", "part": {"type": "text", "text": text}},
        {"type": "step_finish", "part": {"type": "step-finish"}},
    ]
    return "".join(json.dumps(e) + "\n" for e in events)


def grok_output(text: str) -> str:
    events = [
        {"type": "step_start", "stepNumber": 1},
        {"type": "text", "stepNumber": 1, "text": text},
        {"type": "step_finish", "stepNumber": 1, "finishReason": "stop"},
    ]
    return "".join(json.dumps(e) + "\n" for e in events)


OUTPUTS = {
    "claude": claude_output,
    "codex": codex_output,
    "gemini": gemini_output,
    "opencode": opencode_output,
    "grok": grok_output,
}
