"""Hosted providers in a batch: one rate limiter per provider, so a 429 slows every session.

The limiter's arithmetic alone (a fake clock), then the whole path on a local Ray cluster:
three sessions against the scripted model server process, whose first request of one task is
answered 429 with ``Retry-After``. The server's own log of arrivals shows that no request sent
after the 429 arrived during the pause and that the requests after it were spaced; the 429
never reached a session (each still made its two model requests and finished).

The Ray path's timing checks assert only what causality guarantees, so load cannot fail them: the
limiter learns of the 429 after the server stamped it, and a slot is never used before it is
due, so a late process only makes arrivals later. Bounds are lower bounds on the server's
receive timestamps (one monotonic clock for every process of the machine), never upper ones.
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
ROUNDING_S = 0.01
"""Float rounding between the limiter's relative waits and the server's absolute stamps."""
HANG_S = 900
"""Bounds a hang, not the speed: under load Ray alone took 100 s to start here."""


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
        timeout=HANG_S,
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
    first = log[0]
    # The limiter heard of the 429 after the server stamped it: its pause ends no earlier.
    pause_ends = first["t"] + PAUSE_S
    # The sessions start together: another session's first request may already have its slot
    # when the 429 is answered (a limiter cannot recall it), and arrives during the pause. The
    # 429's own retry is asked for by the proxy that reported the 429, after the report; every
    # session's second request comes after a whole step of its session, begun by a reply the
    # server sent after the 429 (the report is one local round trip, a step is several). So
    # they are asked for once the limiter knew, and wait for the pause.
    may_be_in_flight = [e for e in log[1:] if e["task"] != first["task"] and e["step"] == 0]
    must_wait = [e for e in log[1:] if e not in may_be_in_flight]
    assert len(may_be_in_flight) == 2 and len(must_wait) == 4, log
    assert len({e["task"] for e in must_wait}) == 3  # every session's next request waited
    # No request asked for after the 429 arrived during the pause: the backoff was batch-wide.
    assert all(e["t"] >= pause_ends - ROUNDING_S for e in must_wait), log
    # After the pause the slots were spaced: the 429 set the interval to BASE_DELAY_S, and only
    # the (at most two) requests already in flight can have halved it before the first slot
    # after the pause, so the second slot came at least a quarter of it later. Arrivals are
    # never earlier than their slots, so the second arrival after the pause is no earlier.
    waited = sorted(e["t"] for e in must_wait)
    assert waited[1] >= pause_ends + BASE_DELAY_S / 4 - ROUNDING_S, (pause_ends, must_wait)
