"""``browse`` against a real local HTTP server: readable text, bounds and errors."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cadenza.messages import ToolCall
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.browse import MAX_CHARS_LIMIT, USER_AGENT, Browse
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.registry import ToolRegistry
from tests.doubles import MemoryEditor, call
from tests.support.web import ARTICLE_SENTENCES, PLAIN, SCRIPT_MARKER, TestSite


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    with TestSite() as running:
        yield running


async def allow_local(title: str, target: str) -> str | None:
    """The person allows the test site's address (127.0.0.1) when asked."""
    return None


async def browse(tmp_path: Path, tool: Browse | None = None, **arguments: Any) -> ToolResult:
    """One call through the dispatcher, as the agent makes it (the person allows 127.0.0.1)."""
    registry = ToolRegistry([tool or Browse()])
    prepared = prepare(call("browse", **arguments), registry)
    if isinstance(prepared, ToolResult):
        return prepared
    assert isinstance(prepared, PreparedCall)
    ctx = ToolContext(root=tmp_path, host=MemoryEditor(), session_id="s1", confirm=allow_local)
    return await run(prepared, ctx)


def test_kind_and_read_only() -> None:
    assert Browse.kind == "fetch"
    assert Browse.read_only
    assert Browse().spec().parameters["required"] == ["url"]


async def test_article_becomes_readable_text(tmp_path: Path, site: TestSite) -> None:
    result = await browse(tmp_path, url=site.url("/article"))
    assert not result.is_error, result.content
    text = result.content
    assert text.startswith(site.url("/article") + "\ntitle: How Cadenza reads pages\n")
    for sentence in ARTICLE_SENTENCES:
        assert sentence in text
    assert SCRIPT_MARKER not in text and "styleMarker" not in text
    assert "<p>" not in text and "<script" not in text
    assert f"[plain text notes]({site.url('/plain.txt')})" in text  # links kept, made absolute
    assert "| browse | fetch |" in text  # tables kept
    assert "Copyright footer" not in text  # boilerplate left out
    assert "truncated" not in text


async def test_plain_text_and_json_pass_through(tmp_path: Path, site: TestSite) -> None:
    plain = await browse(tmp_path, url=site.url("/plain.txt"))
    assert plain.content.endswith("content type: text/plain\n\n" + PLAIN)
    data = await browse(tmp_path, url=site.url("/data.json"))
    assert '{"name": "cadenza", "tools": ["browse", "browse_interactive"]}' in data.content
    assert "content type: application/json" in data.content


async def test_long_text_is_cut_with_a_note(tmp_path: Path, site: TestSite) -> None:
    result = await browse(tmp_path, url=site.url("/large?kb=40"), max_chars=1000)
    assert not result.is_error
    body, note = result.content.rsplit("\n", 1)
    assert note.startswith("[truncated: showing 1000 of ")
    assert f"larger max_chars (up to {MAX_CHARS_LIMIT})" in note
    assert "Paragraph 1 says" in body and "Paragraph 200 says" not in body
    assert len(body) < 1200
    too_big = await browse(tmp_path, url=site.url("/article"), max_chars=MAX_CHARS_LIMIT + 1)
    assert too_big.is_error and "max_chars" in too_big.content


async def test_body_is_capped_in_bytes(tmp_path: Path, site: TestSite) -> None:
    result = await browse(tmp_path, Browse(max_bytes=20_000), url=site.url("/large?kb=300"))
    assert not result.is_error
    assert "[only the first 20000 bytes of the page were read]" in result.content
    assert "Paragraph 1 says" in result.content
    assert "Paragraph 1000 says" not in result.content  # about 150 paragraphs fit in 20 kB
    whole = await browse(tmp_path, Browse(max_bytes=20_000), url=site.url("/plain.txt"))
    assert "only the first" not in whole.content


async def test_redirect_is_followed(tmp_path: Path, site: TestSite) -> None:
    result = await browse(tmp_path, url=site.url("/redirect"))
    first = result.content.splitlines()[0]
    assert first == f"{site.url('/article')} (redirected from {site.url('/redirect')})"
    assert ARTICLE_SENTENCES[0] in result.content


async def test_http_error_status_is_an_error_result(tmp_path: Path, site: TestSite) -> None:
    result = await browse(tmp_path, url=site.url("/missing"))
    assert result.is_error
    assert result.content == f"HTTP 404 Not Found from {site.url('/missing')}"


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "example.com/page"])
async def test_only_http_urls(tmp_path: Path, site: TestSite, url: str) -> None:
    before = len(site.requests)
    result = await browse(tmp_path, url=url)
    assert result.is_error and "only http:// and https:// URLs" in result.content
    assert len(site.requests) == before


async def test_binary_content_is_refused(tmp_path: Path, site: TestSite) -> None:
    result = await browse(tmp_path, url=site.url("/image.png"))
    assert result.is_error
    assert "is image/png, not text" in result.content


async def test_connection_refused_is_an_error_result(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nobody listens there
    result = await browse(tmp_path, url=f"http://127.0.0.1:{port}/")
    assert result.is_error and result.content.startswith("could not connect to 127.0.0.1")


async def test_slow_server_times_out(tmp_path: Path, site: TestSite) -> None:
    result = await browse(tmp_path, Browse(timeout_s=0.3), url=site.url("/slow?s=2"))
    assert result.is_error and "within 0.3 s" in result.content


async def test_user_agent_names_cadenza(tmp_path: Path, site: TestSite) -> None:
    await browse(tmp_path, url=site.url("/plain.txt?agent"))
    agents = [agent for path, agent in site.requests if path == "/plain.txt?agent"]
    assert agents == [USER_AGENT] and USER_AGENT.startswith("cadenza/")


def test_prepare_refuses_unknown_arguments() -> None:
    registry = ToolRegistry([Browse()])
    prepared = prepare(ToolCall(id="1", name="browse", arguments='{"href": "x"}'), registry)
    assert isinstance(prepared, ToolResult) and prepared.is_error
    assert "url: Field required" in prepared.content
