"""Drive aider on one task: its tries, as aider's own benchmark harness does, or one message.

Run by the Python of aider's venv (it imports only the standard library and aider):

    AIDER_PYTHON benchmarks/aider_peer/driver.py SPEC.json RESULT.json

``SPEC.json``: ``{"files", "message", "aider_args", "tries"}`` and optionally ``"judge"``,
``"repo_root"`` and ``"notes"``; the current folder is the workspace. aider is set up from
``aider_args`` (its command-line flags) with ``main(..., return_coder=True)``; the chat is then
sent ``message`` with the files to edit in it. With ``judge`` (an argv run from ``repo_root``,
printing a judgement as JSON), after each try the judge runs the tests, which aider never sees;
when they fail, the next try gets the first 50 lines of the test output and the request to fix
the code, in the same chat. Without it the driver sends the message once and the harness judges
afterwards. ``notes`` (default true): the message and the retries get the notes of aider's
benchmark; false sends the message as a person typed it. ``RESULT.json`` gets each try's
outcome, seconds, tokens and aider's own reflections (its test or lint runs fed back to the
model).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

FIRST_NOTE = (
    "\n####\n\nChange only the files in the chat: {files}. Keep the names of the existing "
    "functions and classes: other code, like the unit tests, uses them. Use only Python's "
    "standard library; do not suggest installing packages.\n"
)
"""Added to the task text, as aider's benchmark adds its note to each exercise."""
RETRY_NOTE = (
    "\n####\n\nThose are the errors of the tests. The tests are right: do not change them. "
    "Fix the code in {files} so that they pass.\n"
)
"""After the test output, for the next try (aider's benchmark asks the same)."""
ERROR_LINES = 50
"""Lines of test output a retry shows (aider's benchmark cuts it there too)."""


def _judge(argv: list[str], cwd: str) -> dict[str, object]:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    try:
        verdict: dict[str, object] = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"passed": False, "reason": f"judge failed: {done.stderr[-500:]}", "output": ""}
    return verdict


def main(spec_path: str, result_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    from aider.main import main as aider_main

    files = ", ".join(spec["files"])
    started = time.monotonic()
    coder = aider_main([*spec["aider_args"], *spec["files"]], return_coder=True)
    setup_s = time.monotonic() - started
    notes = bool(spec.get("notes", True))
    judge: list[str] | None = spec.get("judge")
    message = spec["message"] + (FIRST_NOTE.format(files=files) if notes else "")
    tries: list[dict[str, object]] = []
    result = {"setup_s": round(setup_s, 2), "tries": tries}
    for n in range(int(spec["tries"])):
        began = time.monotonic()
        sent, received = coder.total_tokens_sent, coder.total_tokens_received
        coder.run(with_message=message)
        seconds = time.monotonic() - began
        verdict = _judge(judge, spec["repo_root"]) if judge else {}
        tries.append(
            {
                "try": n + 1,
                "seconds": round(seconds, 2),
                "passed": bool(verdict.get("passed")) if judge else None,
                "reason": verdict.get("reason"),
                "tests_passed": verdict.get("tests_passed"),
                "tests_total": verdict.get("tests_total"),
                "prompt_tokens": coder.total_tokens_sent - sent,
                "completion_tokens": coder.total_tokens_received - received,
                "reflections": coder.num_reflections,
                "test_outcome": coder.test_outcome,
                "edited": sorted(coder.aider_edited_files),
            }
        )
        Path(result_path).write_text(json.dumps(result, indent=2), encoding="utf-8")
        if not judge or verdict.get("passed"):
            break
        output = str(verdict.get("output") or verdict.get("reason"))
        errors = "\n".join(output.splitlines()[:ERROR_LINES])
        message = errors + RETRY_NOTE.format(files=files)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
