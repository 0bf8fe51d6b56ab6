from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.nvim.harness import isolated_env
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace root the plugin finds by its ``.git`` marker."""
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def env(fake: FakeOpenAI, tmp_path: Path) -> dict[str, str]:
    """Neovim's (and so the server's) environment: the fake model, nothing of the user's."""
    return isolated_env(
        tmp_path / "home",
        OPENAI_BASE_URL=fake.base_url,
        OPENAI_API_KEY="test-key",
        CADENZA_TEST_MODEL="openai/test",
    )
