"""Inline completions against hostile input: what reaches ``/infill`` and ``cadenza complete``.

Found by probing a real ``cadenza serve`` (the request bodies reaching a stand-in llama-server);
each test states the behaviour the threat model asks for.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from cadenza.host.completion_context import (
    CHARS_PER_TOKEN,
    CompletionBudget,
    Cursor,
    RecentChunks,
    infill_request,
)
from cadenza.host.completions import CompletionQuery, CompletionService
from cadenza.host.trust import TrustStore
from cadenza.lsp.completions import _inside_workspace
from cadenza.lsp.options import load_server_config
from cadenza.providers.infill import InfillReply, InfillRequest
from cadenza.secrets import redact, register_secret


class CapturingInfill:
    """An ``/infill`` client that keeps each request and answers nothing."""

    def __init__(self) -> None:
        self.requests: list[InfillRequest] = []

    async def infill(self, request: InfillRequest) -> InfillReply:
        self.requests.append(request)
        return InfillReply(text="")


def _sent_text(request: InfillRequest) -> str:
    extra = "".join(chunk.text for chunk in request.extra)
    return request.prefix + request.prompt + request.suffix + extra


def test_a_minified_line_is_cut_to_the_context_budget() -> None:
    budget = CompletionBudget()
    line = "var a=function(){return 1};" * 40_000  # a 1 MB bundle line
    request = infill_request(Cursor(text=line + "\n", line=0, column=len(line) // 2), (), budget)
    limit = (budget.prefix_tokens + budget.suffix_tokens) * CHARS_PER_TOKEN
    assert len(request.prefix) + len(request.prompt) + len(request.suffix) <= limit


def test_secrets_in_open_buffers_are_redacted_before_the_model_sees_them() -> None:
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    fake = CapturingInfill()

    async def source() -> CapturingInfill:
        return fake

    service = CompletionService(source)  # type: ignore[arg-type]
    service.seen("file:///w/.env", ".env", f"GITHUB_TOKEN={token}\n")
    code = "import os\ntoken = os.environ['GITHUB_TOKEN']\n\n"
    query = CompletionQuery(
        uri="file:///w/a.py", filename="a.py", cursor=Cursor(text=code, line=2, column=0)
    )
    asyncio.run(service.complete(query))
    [request] = fake.requests
    assert ".env" in [chunk.filename for chunk in request.extra]  # chosen: the code names it
    assert token not in _sent_text(request)
    assert redact(f"GITHUB_TOKEN={token}") != f"GITHUB_TOKEN={token}"  # the shape is known


def test_editor_options_cannot_pick_a_model_file_in_an_untrusted_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user"))
    monkeypatch.delenv("CADENZA_MODEL", raising=False)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "evil.gguf").write_bytes(b"GGUF")  # the repository's own model file
    store = TrustStore(tmp_path / "trust.json")
    for model in ("local/evil.gguf", f"local/{workspace / 'evil.gguf'}"):
        loaded = load_server_config(workspace, {"model": model}, store=store)
        assert loaded.config.model != model


TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
REGISTERED = "Zq8vXk2mPw9rLs4tNc7yHb"
"""A key of the environment, registered as ``register_known_keys`` does."""


def _leaks(sent: str, secret: str) -> list[str]:
    """Pieces of six characters of ``secret`` found in ``sent``."""
    return [secret[i : i + 6] for i in range(len(secret) - 5) if secret[i : i + 6] in sent]


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        (f"GITHUB_TOKEN={TOKEN} # the CI's", TOKEN),
        (f"url = 'https://app:{TOKEN}@example.com/x'", TOKEN),
        (f"key = '{REGISTERED}'", REGISTERED),
    ],
)
def test_a_secret_the_cursor_stands_in_reaches_neither_side(line: str, secret: str) -> None:
    register_secret(REGISTERED)
    text = f"a = 1\n{line}\nb = 2\n"
    for column in range(len(line) + 1):
        request = infill_request(Cursor(text=text, line=1, column=column), (), CompletionBudget())
        assert _leaks(_sent_text(request), secret) == [], column
        assert request.prefix == "a = 1\n" and request.suffix.endswith("\nb = 2\n")


@pytest.mark.parametrize("secret", [TOKEN, REGISTERED])
def test_a_secret_cut_by_the_line_budgets_is_hidden_whole(secret: str) -> None:
    register_secret(REGISTERED)
    budget = CompletionBudget(prefix_tokens=10, suffix_tokens=10)  # 30 characters each side
    line = "x" * 100 + f" API_KEY={secret} " + "y" * 100
    for column in range(0, len(line) + 1, 3):
        request = infill_request(Cursor(text=line, line=0, column=column), (), budget)
        assert len(request.prompt) <= 30 and len(request.suffix) <= 30
        assert _leaks(_sent_text(request), secret) == [], column


def test_the_line_budgets_keep_the_text_nearest_the_cursor() -> None:
    budget = CompletionBudget(prefix_tokens=10, suffix_tokens=10)
    line = "".join(f"{n:04d}," for n in range(2000))
    request = infill_request(Cursor(text=line, line=0, column=5000), (), budget)
    assert request.prompt == line[5000 - 30 : 5000] and request.suffix == line[5000 : 5000 + 30]


def test_lines_around_the_cursor_and_extra_chunks_are_redacted() -> None:
    register_secret(REGISTERED)
    fake = CapturingInfill()

    async def source() -> CapturingInfill:
        return fake

    service = CompletionService(source)  # type: ignore[arg-type]
    service.seen("file:///w/conf.py", "conf.py", f"def settings():\n    return '{REGISTERED}'\n")
    code = f"from conf import settings\nold = '{REGISTERED}'\n\nnew = '{REGISTERED}'\n"
    query = CompletionQuery(
        uri="file:///w/a.py", filename="a.py", cursor=Cursor(text=code, line=2, column=0)
    )
    asyncio.run(service.complete(query))
    [request] = fake.requests
    assert [chunk.filename for chunk in request.extra] == ["conf.py"]
    assert REGISTERED not in _sent_text(request)
    assert "old = '[redacted]'" in request.prefix and "new = '[redacted]'" in request.suffix


def test_documents_outside_the_workspace_lend_no_extra_chunks() -> None:
    fake = CapturingInfill()

    async def source() -> CapturingInfill:
        return fake

    service = CompletionService(source)  # type: ignore[arg-type]
    service.seen(
        "file:///tmp/outside.py", "outside.py", "def helper(): pass\n", lends_context=False
    )
    outside = CompletionQuery(
        uri="file:///tmp/notes.py",
        filename="notes.py",
        cursor=Cursor(text="def notes_helper(): pass\nhelper()\n", line=1, column=8),
        lends_context=False,
    )
    asyncio.run(service.complete(outside))  # completed, with its own text, but not noted
    inside = CompletionQuery(
        uri="file:///w/a.py",
        filename="a.py",
        cursor=Cursor(text="helper()\nnotes_helper()\n", line=1, column=0),
    )
    asyncio.run(service.complete(inside))
    assert [request.extra for request in fake.requests] == [(), ()]
    assert "def notes_helper" in fake.requests[0].prefix  # its own completion sees its text


def test_a_chunk_over_the_extra_budget_is_not_kept() -> None:
    ring = RecentChunks(max_chars=1000)
    ring.note("file:///w/bundle.js", "bundle.js", ["function helper(){}" + ";" * 5000], 0)
    ring.note("file:///w/small.js", "small.js", ["function helper(){}"], 0)
    chunks, _ = ring.related("file:///w/a.js", "helper()", 10_000)
    assert [chunk.filename for chunk in chunks] == ["small.js"]


def test_only_documents_inside_a_workspace_folder_lend_context(tmp_path: Path) -> None:
    workspace, other = tmp_path / "ws", tmp_path / "other"
    (workspace / "src").mkdir(parents=True)
    other.mkdir()
    (other / "secret.txt").write_text("x\n")
    (workspace / "out").symlink_to(other)
    ls = SimpleNamespace(
        workspace=SimpleNamespace(
            folders={"ws": SimpleNamespace(uri=(workspace).as_uri())}, root_path=str(workspace)
        )
    )
    assert _inside_workspace(ls, (workspace / "src" / "a.py").as_uri())  # type: ignore[arg-type]
    for uri in (
        (other / "secret.txt").as_uri(),
        (workspace / "out" / "secret.txt").as_uri(),  # a link inside leading out
        (workspace / ".." / "other" / "secret.txt").as_uri(),
        "untitled:Untitled-1",
    ):
        assert not _inside_workspace(ls, uri), uri  # type: ignore[arg-type]
