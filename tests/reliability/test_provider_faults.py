"""Suite 3, provider faults: a real server against a fault-injecting model server.

Each scenario scripts faults (429 storms with ``Retry-After``, 500s, silence past the read
timeout, a connection reset before or in the middle of an SSE stream, malformed JSON or SSE,
``finish_reason: "length"`` in the middle of a tool call's arguments) around well-formed
replies that write files. The session must recover (``end_turn``) or end with ``error``, and
the workspace must hold only whole files: each either absent or with its full content, no
temporary file left. The client has no ``applyEdit``, so the server writes the files itself.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.lsp.harness import (
    capabilities,
    file_uri,
    server_env,
    start_harness,
    stop_harness,
    write_user_config,
)
from tests.reliability.faulty_openai import Fault, FaultyOpenAI, call, call_events, text

CONTENT = "".join(f"line {i}: {'x' * 40}\n" for i in range(200))
ATTEMPTS = 3
USER = {"providers": {"openai": {"timeoutS": 1.0, "attempts": ATTEMPTS}}}
"""The person's own ``cadenza.toml``: a provider's bounds are theirs to set."""
INIT = {"maxSteps": 10}


def write(path: str, call_id: str) -> Fault:
    return call("write_file", {"path": path, "content": CONTENT}, call_id)


def status(code: int, retry_after: str | None = "0") -> Fault:
    return Fault(kind="status", status=code, retry_after=retry_after)


@dataclass(frozen=True)
class Scenario:
    name: str
    faults: tuple[Fault, ...]
    stop: frozenset[str]
    whole: tuple[str, ...] = ()
    """Files that must exist with the full content; every other file must be absent."""


ARGS = json.dumps({"path": "cut.txt", "content": CONTENT})
RECOVER = frozenset({"end_turn"})
ERROR = frozenset({"error"})
EITHER = frozenset({"end_turn", "error"})

SCENARIOS = [
    Scenario(
        "429 storm, then it passes",
        (status(429), status(429), write("a.txt", "c1"), text("done")),
        RECOVER,
        ("a.txt",),
    ),
    Scenario("429 storm past the retries", (status(429),) * ATTEMPTS, ERROR),
    Scenario(
        "429 with Retry-After 1 s",
        (status(429, "1"), write("a.txt", "c1"), text("done")),
        RECOVER,
        ("a.txt",),
    ),
    Scenario(
        "500 and 503, then it passes",
        (status(500), status(503), write("a.txt", "c1"), text("done")),
        RECOVER,
        ("a.txt",),
    ),
    Scenario(
        "a file written, then 500s past the retries",
        (write("a.txt", "c1"), *(status(500),) * ATTEMPTS),
        ERROR,
        ("a.txt",),
    ),
    # A read timeout is not retried, by design (retry.py: waiting the whole timeout again
    # only multiplies the wait): the session ends with error at once.
    Scenario(
        "silence past the read timeout",
        (Fault(kind="silence", seconds=5), write("a.txt", "c1"), text("done")),
        ERROR,
    ),
    Scenario(
        "silence after a file was written",
        (write("a.txt", "c1"), Fault(kind="silence", seconds=5)),
        ERROR,
        ("a.txt",),
    ),
    Scenario(
        "reset before the first byte, then it passes",
        (Fault(kind="reset", cut_after=0), write("a.txt", "c1"), text("done")),
        RECOVER,
        ("a.txt",),
    ),
    Scenario(
        "reset in the middle of streamed text",
        (Fault(kind="reset", events=text("a long answer, cut").events, cut_after=2),),
        EITHER,
    ),
    Scenario(
        "reset in the middle of a tool call's arguments",
        (
            write("a.txt", "c1"),
            Fault(kind="reset", events=call_events("write_file", ARGS, "c2"), cut_after=3),
        ),
        EITHER,
        ("a.txt",),
    ),
    Scenario("malformed JSON body", (Fault(kind="bad_json"),) * ATTEMPTS, EITHER),
    Scenario("malformed SSE event", (Fault(kind="bad_sse"),) * ATTEMPTS, EITHER),
    Scenario(
        "finish_reason length in the middle of the arguments",
        (
            Fault(
                kind="sse",
                events=call_events("write_file", ARGS[: len(ARGS) // 2], "c1", finish="length"),
            ),
            text("gave up"),
        ),
        # The cut write_file never applied: the done checks end the claim "failed".
        frozenset({"failed", "error"}),
    ),
]


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text(errors="replace")
        for p in root.rglob("*")
        if p.is_file()
    }


def _check(scenario: Scenario, root: Path, end: dict[str, Any], kinds: list[str]) -> None:
    assert end["stopReason"] in scenario.stop, end
    if end["stopReason"] == "error":
        assert end["message"], end
    files = _files(root)
    assert set(files) == set(scenario.whole), files.keys()
    for name in scenario.whole:
        assert files[name] == CONTENT, f"{name} is half-written"
    assert kinds[-1] == "session_end" and kinds.count("session_end") == 1, kinds


async def test_provider_faults(tmp_path: Path) -> None:
    """Every scenario, one after the other, in one server (one workspace each)."""
    failures = []
    with FaultyOpenAI() as model:
        env = server_env(model.base_url, tmp_path / "home")
        (tmp_path / "ws").mkdir()
        write_user_config(env, USER)
        harness, _ = await start_harness(
            root=tmp_path / "ws", env=env, caps=capabilities(apply_edit=False), init_options=INIT
        )
        try:
            for n, scenario in enumerate(SCENARIOS):
                started = time.monotonic()
                root = tmp_path / f"ws{n}"
                root.mkdir()
                model.clear()
                model.script(*scenario.faults)
                session_id, end = await harness.run("write the files", rootUri=file_uri(root))
                try:
                    _check(scenario, root, end, harness.kinds(session_id))
                except AssertionError as exc:
                    failures.append(f"{scenario.name}: {exc}")
                print(
                    f"\n{scenario.name}: {end['stopReason']} in {time.monotonic() - started:.1f} s"
                )
        finally:
            await stop_harness(harness)
    assert not failures, "\n".join(failures)
