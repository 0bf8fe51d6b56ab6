import random

import pytest

from backoff import delay, retry, schedule, with_jitter


def test_first_delays():
    assert delay(0) == 0.5
    assert delay(1) == 1.0
    assert delay(3) == 4.0


def test_delay_is_capped():
    assert delay(10) == 30.0
    assert delay(4, base=1.0, cap=5.0) == 5.0


def test_negative_attempt_is_refused():
    with pytest.raises(ValueError):
        delay(-1)


def test_schedule_doubles_each_time():
    assert schedule(4) == [0.5, 1.0, 2.0, 4.0]


def test_jitter_stays_within_the_spread():
    jittered = with_jitter([1.0, 2.0, 4.0], random.Random(7), spread=0.1)
    assert all(0.9 * d <= j <= 1.1 * d for d, j in zip([1.0, 2.0, 4.0], jittered, strict=True))


def test_retry_gives_up_after_the_last_retry():
    calls = []

    def always_down():
        calls.append(1)
        raise ConnectionError("refused")

    with pytest.raises(ConnectionError):
        retry(always_down, retries=2, sleep=lambda s: None)
    assert len(calls) == 3


def test_retry_sleeps_between_attempts():
    answers = iter([TimeoutError(), TimeoutError(), "ok"])
    slept = []

    def flaky():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert retry(flaky, sleep=slept.append) == "ok"
    assert slept == [0.5, 1.0]
