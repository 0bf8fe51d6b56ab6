from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from tests.lsp.harness import (
    Harness,
    capabilities,
    server_env,
    start_harness,
    stop_harness,
    write_user_config,
)
from tests.support.fake_openai import FakeOpenAI

Connect = Callable[..., Awaitable[Harness]]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest_asyncio.fixture
async def connect(fake: FakeOpenAI, workspace: Path, tmp_path: Path) -> AsyncIterator[Connect]:
    """Start a server and initialize a client; every one started is shut down afterwards."""
    started: list[Harness] = []
    env = server_env(fake.base_url, tmp_path / "home")

    async def _connect(
        *,
        caps: types.ClientCapabilities | None = None,
        init_options: Any = None,
        user_config: dict[str, Any] | None = None,
        serve_args: Sequence[str] = (),
    ) -> Harness:
        """``user_config``: the person's own ``cadenza.toml`` (providers, MCP servers...);
        ``serve_args``: more of ``cadenza serve``'s options."""
        if user_config is not None:
            write_user_config(env, user_config)
        harness, _ = await start_harness(
            root=workspace,
            env=env,
            caps=caps or capabilities(),
            init_options=init_options,
            serve_args=serve_args,
        )
        started.append(harness)
        return harness

    yield _connect
    for harness in started:
        await stop_harness(harness)


@pytest_asyncio.fixture
async def editor(connect: Connect) -> Harness:
    """A client with the default capabilities (UTF-16, applyEdit, progress)."""
    return await connect()
