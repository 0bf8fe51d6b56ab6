"""Retry timing, Retry-After parsing, secret redaction, and the documented config examples."""

from __future__ import annotations

import email.utils
import re
import time
import tomllib
from pathlib import Path

import httpx
import pytest

from cadenza.config import CadenzaConfig
from cadenza.providers.base import ProviderError
from cadenza.providers.retry import Retryable, RetryPolicy, parse_retry_after, with_retries
from cadenza.secrets import REDACTED, redact, register_secret

DOCS = Path(__file__).resolve().parents[2] / "docs" / "providers.md"


def test_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    wait = parse_retry_after(later)
    assert wait is not None and 25 <= wait <= 31


def test_delay_backoff_with_jitter_and_cap() -> None:
    policy = RetryPolicy(attempts=5, base_delay_s=1.0, max_delay_s=3.0)
    for attempt, full in [(1, 1.0), (2, 2.0), (3, 3.0), (4, 3.0)]:
        delay = policy.delay(attempt, None)
        assert full / 2 <= delay <= full
    assert policy.delay(1, "100") == 3.0  # Retry-After is capped too
    assert policy.delay(1, "0") == 0.0


async def test_with_retries_stops_at_the_budget_and_names_the_failure() -> None:
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        raise httpx.ConnectError("connection refused")

    policy = RetryPolicy(attempts=3, base_delay_s=0.001)
    with pytest.raises(ProviderError, match=r"x: cannot connect to .* after 3 attempts; start"):
        await with_retries(flaky, policy, "x")
    assert calls == 3


async def test_provider_errors_are_not_retried() -> None:
    calls = 0

    async def broken() -> str:
        nonlocal calls
        calls += 1
        raise ProviderError("HTTP 400")

    with pytest.raises(ProviderError, match="HTTP 400"):
        await with_retries(broken, RetryPolicy(attempts=3, base_delay_s=0.001), "x")
    assert calls == 1


async def test_retry_then_success() -> None:
    results: list[Exception | str] = [Retryable("HTTP 503", retry_after="0"), "ok"]

    async def call() -> str:
        item = results.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    assert await with_retries(call, RetryPolicy(attempts=2), "x") == "ok"


def test_redact_hides_registered_secrets_only() -> None:
    register_secret("abc")  # too short to be treated as a secret
    register_secret("tok-9f8e7d6c5b")
    assert redact("key tok-9f8e7d6c5b and abc") == f"key {REDACTED} and abc"


def test_documented_toml_examples_are_valid_config() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", DOCS.read_text(), flags=re.S)
    assert len(blocks) >= 4
    for block in blocks:
        text = "\n".join(line.strip() for line in block.splitlines())
        if "[[model]]" in text:  # a CADENZA_MODEL_CATALOG file, not cadenza.toml
            models = tomllib.loads(text)["model"]
            assert all({"name", "url", "size", "sha256"} <= set(m) for m in models), models
            continue
        CadenzaConfig.model_validate(tomllib.loads(text))
