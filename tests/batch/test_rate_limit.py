"""Hosted providers in a batch: one rate limiter per provider, so a 429 slows every session.

The limiter's arithmetic alone (a fake clock), then the whole path on a local Ray cluster:
three sessions against the scripted model server process, whose first request of one task is
answered 429 with ``Retry-After``. The server's own log of arrivals shows that no session's
request arrived during the pause and that the first requests after it were spaced; the 429
never reached a session (each still made its two model requests and finished).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cadenza.batch import rate_limit
from cadenza.batch.rate_limit import BASE_DELAY_S, RateLimiter
from tests.batch.conftest import ModelServer, cadenza_batch, make_repo

PAUSE_S = 8.0
"""Long enough that the other sessions, started with the first, ask during the pause."""
TOLERANCE_S = 0.15
"""Clock and scheduling slack between the limiter's grant and the server's arrival stamp."""
IN_FLIGHT_S = 1.0
"""Requests arriving this soon after the 429 were sent before anyone could have seen it."""


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_429_pauses_everyone_then_spaces_them(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(rate_limit.time, "monotonic", clock)
    limiter = RateLimiter()
    assert [limiter.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]  # no 429 yet: no wait
    assert limiter.throttled(2.0) == 2.0
    waits = [limiter.acquire() for _ in range(3)]
    # Everyone waits for the pause, then one interval apart.
    assert waits == [2.0, 2.0 + BASE_DELAY_S, 2.0 + 2 * BASE_DELAY_S]
    # Without Retry-After the pause doubles with each 429.
    clock.now += 10
    assert limiter.throttled(None) == 2 * BASE_DELAY_S
    for _ in range(6):
        limiter.succeeded()
    assert limiter.interval == 0.0  # successes relax it away
    clock.now += 10
    assert limiter.acquire() == 0.0


@pytest.mark.batch
def test_a_429_backs_off_the_whole_batch(
    tmp_path: Path, batch_env: dict[str, str], model: ModelServer
) -> None:
    pytest.importorskip("ray", reason="the batch extra is not installed")
    repo = make_repo(tmp_path / "repos", "paced")
    # Every task carries the key: whichever session asks first gets the one 429.
    lines = [
        {"id": f"p{n}", "repo": str(repo), "task": f"batch-write: p{n}.txt tok{n} "
         f"batch-429: once {PAUSE_S:g}"}
        for n in range(3)
    ]  # fmt: skip
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    done = subprocess.run(
        cadenza_batch(str(tasks), "--out", str(out), "--max-concurrency", "3"),
        env=batch_env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for n in range(3):
        result = json.loads((out / f"p{n}" / "result.json").read_text())
        assert result["status"] == "done", result
        assert result["usage"]["requests"] == 2  # the 429 was retried by the batch, unseen
    log: list[dict[str, Any]] = model.stats()["log"]
    assert len(log) == 7  # three sessions of two requests, and the 429
    assert log[0]["status"] == 429 and all(entry["status"] == 200 for entry in log[1:])
    pause_ends = log[0]["t"] + PAUSE_S
    # The sessions start together: another session's first request may already be on the wire
    # when the 429 is answered (a limiter cannot recall it). Those arrive within moments of the
    # 429; every request sent after the limiter learnt of it waits for the pause.
    first = log[0]
    in_flight = [
        e
        for e in log[1:]
        if e["task"] != first["task"] and e["step"] == 0 and e["t"] - first["t"] < IN_FLIGHT_S
    ]
    after = [e for e in log[1:] if e not in in_flight]
    assert len(in_flight) <= 2, log
    # No request sent after the 429 arrived during the pause: the backoff was batch-wide.
    assert all(entry["t"] >= pause_ends - TOLERANCE_S for entry in after), log
    assert len({entry["task"] for entry in after}) == 3  # every session's next request waited
    # The first requests after the pause were spaced by the limiter's interval.
    if len(after) >= 2:
        assert after[1]["t"] - after[0]["t"] >= BASE_DELAY_S - TOLERANCE_S, after
