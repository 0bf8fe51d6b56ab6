"""Fixtures of the client tests that drive the real server against a scripted model."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cadenza.client import ClientOptions
from tests.lsp.harness import server_env
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def opts(fake: FakeOpenAI, ws: Path, tmp_path: Path) -> ClientOptions:
    return ClientOptions(
        workspace=ws,
        model="openai/test",
        server_command=(sys.executable, "-m", "cadenza", "serve", "--log-level", "WARNING"),
        env=server_env(fake.base_url, tmp_path / "home"),
        start_timeout=30,
        shutdown_timeout=5,
        events_path=tmp_path / "events.jsonl",
    )
