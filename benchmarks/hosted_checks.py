"""The done checks for hosted models, before and after: scripted models through ``cadenza run``.

Each scenario is a small workspace, a task and a scripted OpenAI-compatible model that reads
the conversation it is sent and answers as a model of that kind would: it reacts to what the
session tells it (a failing test, a name left, "nothing was changed"), and never sees its own
script's state otherwise. The same scenario runs twice through a real ``cadenza run`` process
(which starts ``cadenza serve``): ``before`` with the person's ``[loop]`` setting the hosted
loop as it was (``checks = "off"``, ``stuckLimit = 0``), ``after`` with the hosted default
(``API_LOOP``). Recorded per run: the stop reason, whether the workspace's tests pass at the
end (run here, after the session), the model requests (counted by the model server), the test
runs (each run of the test command appends a line to a file outside the workspace), the
permission requests the person declined, and the done checks the session published.

Scenarios:

- ``fail-then-fix``: a wrong edit, then "done"; told the failing test, it fixes the code.
- ``rename-leftover``: renames a function and its import, leaves a call; told, it changes it.
- ``nothing-changed``: an implement task answered "done" after a read; told nothing changed, it
  makes the change.
- ``nothing-changed-stubborn``: the same, but it claims done each time it is told.
- ``good-edit``: the right edit, then "done" (the cost of the checks on a normal session).
- ``question``: a question answered after a read (no change is asked for).
- ``person-declined``: the change is to a protected file (the editor's settings); the person
  declines it (``--yes`` declines protected paths); told "nothing was changed", the model makes
  it again, which asks the person again.

Run: ``python -m benchmarks.hosted_checks`` (writes ``results/hosted-checks-<UTC>.json``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, save, server_env, table

Message = dict[str, Any]
Policy = Callable[[list[Message]], Message]
"""The scripted model: the request's messages → the assistant message it answers with."""

TEST_SCRIPT = """\
import sys
from pathlib import Path

with open({count!r}, "a") as runs:
    runs.write("run\\n")
{body}
print("all passed")
"""


def _last_text(messages: list[Message]) -> str:
    """What the model read last: the last user or tool message's text."""
    for message in reversed(messages):
        if message.get("role") in ("user", "tool"):
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def _calls(messages: list[Message]) -> list[str]:
    """The tool calls the model made so far, as ``name args`` strings."""
    return [
        f"{c['function']['name']} {c['function']['arguments']}"
        for m in messages
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
    ]


def _call(name: str, **arguments: Any) -> Message:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{name}_{time.monotonic_ns()}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def _say(text: str) -> Message:
    return {"role": "assistant", "content": text}


def _edit(path: str, old: str, new: str) -> Message:
    return _call("edit_file", path=path, old_string=old, new_string=new)


def fail_then_fix(messages: list[Message]) -> Message:
    made, told = _calls(messages), _last_text(messages)
    if not made:
        return _edit("calc.py", "return x", "return x + 1")
    if "tests fail" in told and not any("2 * x" in c for c in made):
        return _edit("calc.py", "return x + 1", "return 2 * x")
    return _say("double() now returns twice its argument.")


def rename_leftover(messages: list[Message]) -> Message:
    made, told = _calls(messages), _last_text(messages)
    if not made:
        return _edit("inventory.py", "def calc_total(", "def compute_total(")
    if len(made) == 1:
        return _edit("report.py", "import calc_total", "import compute_total")
    if "still used" in told and not any("compute_total(items)" in c for c in made):
        return _edit("report.py", "calc_total(items)", "compute_total(items)")
    return _say("calc_total is renamed to compute_total.")


def nothing_changed(messages: list[Message]) -> Message:
    made, told = _calls(messages), _last_text(messages)
    if not made:
        return _call("read_file", path="calc.py")
    if "nothing was changed" in told and not any("edit_file" in c for c in made):
        return _edit("calc.py", "raise NotImplementedError", "return 3 * x")
    return _say("triple() is implemented.")


def stubborn(messages: list[Message]) -> Message:
    if not _calls(messages):
        return _call("read_file", path="calc.py")
    return _say("triple() is implemented.")


def good_edit(messages: list[Message]) -> Message:
    if not _calls(messages):
        return _edit("calc.py", "return x", "return 2 * x")
    return _say("double() now returns twice its argument.")


def question(messages: list[Message]) -> Message:
    if not _calls(messages):
        return _call("read_file", path="calc.py")
    return _say("double(x) returns 2 * x.")


SETTINGS = '{"editor.formatOnSave": true}\n'


def person_declined(messages: list[Message]) -> Message:
    made, told = _calls(messages), _last_text(messages)
    if not made or ("nothing was changed" in told and len(made) < 3):
        return _call("create_file", path=".vscode/settings.json", content=SETTINGS)
    return _say(
        "I could not turn on format on save: the change to .vscode/settings.json was declined."
    )


DOUBLE = {
    "calc.py": "def double(x):\n    return x\n",
    "test_calc.py": "from calc import double\n\nassert double(3) == 6, double(3)\n",
}
TRIPLE = {
    "calc.py": "def triple(x):\n    raise NotImplementedError\n",
    "test_calc.py": "from calc import triple\n\nassert triple(3) == 9, triple(3)\n",
}
RENAME = {
    "inventory.py": "def calc_total(items):\n    return sum(items)\n",
    "report.py": (
        "from inventory import calc_total\n\n\ndef report(items):\n"
        "    return f'total: {calc_total(items)}'\n"
    ),
    "test_calc.py": "from report import report\n\nassert report([1, 2]) == 'total: 3'\n",
}
PASSING = {**DOUBLE, "calc.py": "def double(x):\n    return 2 * x\n"}


@dataclass(frozen=True)
class Scenario:
    name: str
    task: str
    files: dict[str, str]
    policy: Policy


SCENARIOS = (
    Scenario(
        "fail-then-fix",
        "Make double() in calc.py return twice its argument.",
        DOUBLE,
        fail_then_fix,
    ),
    Scenario(
        "rename-leftover",
        "Rename the function calc_total to compute_total everywhere.",
        RENAME,
        rename_leftover,
    ),
    Scenario("nothing-changed", "Implement triple() in calc.py.", TRIPLE, nothing_changed),
    Scenario("nothing-changed-stubborn", "Implement triple() in calc.py.", TRIPLE, stubborn),
    Scenario("good-edit", "Make double() in calc.py return twice its argument.", DOUBLE, good_edit),
    Scenario("question", "What does double() in calc.py return?", PASSING, question),
    Scenario(
        "person-declined",
        "Turn on format on save for this project in .vscode/settings.json.",
        PASSING,
        person_declined,
    ),
)

BEFORE = '[loop]\nchecks = "off"\nstuckLimit = 0\n'
"""The person's ``[loop]`` that gives the hosted loop as it was before the checks were on."""


class ScriptedModel:
    """An OpenAI Chat Completions server on 127.0.0.1 whose replies come from ``policy``."""

    def __init__(self) -> None:
        self.policy: Policy = question
        self.requests = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model.requests += 1
                message = model.policy(body.get("messages", []))
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                choice = {"index": 0, "message": message, "finish_reason": finish}
                data = json.dumps(
                    {"id": "x", "object": "chat.completion", "choices": [choice], "usage": usage}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


def run_one(model: ScriptedModel, scenario: Scenario, variant: str, home: Path) -> dict[str, Any]:
    """One ``cadenza run`` of ``scenario`` under ``variant`` (``before`` or ``after``)."""
    work = home / f"{scenario.name}-{variant}"
    workspace, count = work / "ws", work / "test-runs.txt"
    workspace.mkdir(parents=True)
    for name, text in scenario.files.items():
        (workspace / name).write_text(text)
    env = server_env(model.base_url, work / "home")
    env["PYTHONPATH"] = str(REPO / "server")
    test = f"{sys.executable} -S check.py"
    (workspace / "check.py").write_text(
        TEST_SCRIPT.format(count=str(count), body="import test_calc  # noqa: F401")
    )
    config = Path(env["XDG_CONFIG_HOME"]) / "cadenza" / "cadenza.toml"
    config.parent.mkdir(parents=True)
    loop = BEFORE if variant == "before" else ""
    config.write_text(f"[checks]\ntest = {json.dumps(test)}\n{loop}")
    model.policy, model.requests = scenario.policy, 0
    events = work / "events.jsonl"
    started = time.monotonic()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "cadenza", "run", scenario.task),
            *("--workspace", str(workspace), "--model", "openai/scripted"),
            *("--allow", "run_command", "--yes", "--output", "json", "--max-steps", "12"),
            *("--events", str(events)),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    wall = time.monotonic() - started
    report = json.loads(done.stdout) if done.stdout.strip() else {"error": done.stderr[-2000:]}
    runs = len(count.read_text().splitlines()) if count.exists() else 0
    after = subprocess.run(
        [sys.executable, "-S", "-c", "import test_calc"],
        cwd=workspace,
        capture_output=True,
        check=False,
    )
    return {
        "scenario": scenario.name,
        "variant": variant,
        "stop_reason": report.get("stop_reason"),
        "message": report.get("message"),
        "tests_pass_at_end": after.returncode == 0,
        "model_requests": model.requests,
        "test_runs": runs,
        "declined": sum(
            not str(p.get("kind") or "").startswith("allow")
            for p in report.get("permission_prompts") or []
        ),
        "checks": _checks(events),
        "wall_s": round(wall, 2),
    }


def _checks(events: Path) -> list[str]:
    """The done checks the session published, as ``name:status`` (``!`` when refused)."""
    found: list[str] = []
    if not events.exists():
        return found
    for line in events.read_text().splitlines():
        record = json.loads(line)
        update = (record.get("params") or {}).get("update") or {}
        if update.get("sessionUpdate") == "check":
            mark = "!" if update.get("refused") else ""
            found.append(f"{update.get('name')}:{update.get('status')}{mark}")
    return found


def main() -> None:
    started = time.monotonic()
    model = ScriptedModel()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="hosted-checks-") as folder:
        for scenario in SCENARIOS:
            for variant in ("before", "after"):
                row = run_one(model, scenario, variant, Path(folder))
                rows.append(row)
                print(json.dumps(row), flush=True)
    model.httpd.shutdown()
    heads = ("scenario", "loop", "end", "tests pass", "requests", "test runs", "declined", "checks")
    cells = [
        (
            r["scenario"],
            r["variant"],
            r["stop_reason"],
            "yes" if r["tests_pass_at_end"] else "no",
            r["model_requests"],
            r["test_runs"],
            r["declined"],
            ", ".join(r["checks"]) or "-",
        )
        for r in rows
    ]
    print(table(heads, cells))
    print(save("hosted-checks", {"runs": rows}, started))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
