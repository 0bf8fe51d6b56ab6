"""The model alone: one chat request per problem, as model cards measure HumanEval.

The request is EvalPlus's instruct prompt (the harness model cards for Qwen2.5-Coder quote):
the problem's stub, asked for as "a self-contained Python script" in a fenced block, greedy
(temperature 0), with the reply bound Cadenza's local provider uses. The first fenced block of
the reply (the whole reply when there is none) becomes the module, and the same judge as for the
agents runs the task's tests on it. No tools, no test output, no second try: what the loop adds
is measured against this.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.humaneval.judge import HumanEvalTask

INSTRUCTION = (
    "Please provide a self-contained Python script that solves the following problem "
    "in a markdown code block:\n```\n{prompt}\n```\n"
)
"""EvalPlus's instruct prompt."""
_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)


def stub_prompt(task: HumanEvalTask) -> tuple[str, str]:
    """The module's name and the stub's text without its ``raise NotImplementedError``."""
    meta = json.loads((task.folder / "meta.json").read_text(encoding="utf-8"))
    stub = (task.folder / "workspace" / meta["module"]).read_text(encoding="utf-8")
    lines = [line for line in stub.splitlines() if line.strip() != "raise NotImplementedError"]
    return meta["module"], "\n".join(lines).strip()


def extract_code(reply: str) -> str:
    """The first fenced block of ``reply``, or the whole reply when it has none."""
    found = _FENCE.search(reply)
    return (found.group(1) if found else reply).strip() + "\n"


def run_model_alone(
    task: HumanEvalTask, *, base_url: str, model: str, max_tokens: int, timeout: float, folder: Path
) -> dict[str, Any]:
    """One request for ``task``; the judgement of the module its reply holds."""
    folder.mkdir(parents=True)
    module, prompt = stub_prompt(task)
    body = {
        "model": model,
        "messages": [{"role": "user", "content": INSTRUCTION.format(prompt=prompt)}],
        "temperature": 0,
        "max_tokens": max_tokens,
    }
    started = time.monotonic()
    error: str | None = None
    reply = ""
    usage: dict[str, Any] = {}
    try:
        response = httpx.post(f"{base_url}/v1/chat/completions", json=body, timeout=timeout)
        response.raise_for_status()
        data = response.json()
        reply = data["choices"][0]["message"]["content"] or ""
        usage = data.get("usage") or {}
    except (httpx.HTTPError, KeyError, ValueError) as exc:
        error = f"{type(exc).__name__}: {exc}"
    wall = time.monotonic() - started
    workspace = folder / "workspace"
    workspace.mkdir()
    (workspace / module).write_text(extract_code(reply), encoding="utf-8")
    (folder / "reply.md").write_text(reply, encoding="utf-8")
    judgement = task.judge(workspace)
    return {
        "passed": judgement.passed,
        "tests_passed": judgement.tests_passed,
        "tests_total": judgement.tests_total,
        "reason": judgement.reason if error is None else error,
        "wall_s": round(wall, 2),
        "total_s": round(time.monotonic() - started, 2),
        "stop_reason": "error" if error else "done",
        "tokens": {
            "requests": 1,
            "prompt_tokens_evaluated": usage.get("prompt_tokens"),
            "completion_tokens": usage.get("completion_tokens"),
        },
        "error": error,
    }
