"""``browse`` asks the person before it reaches this machine or the local network.

No network: addresses are classified by ``ipaddress``, names resolve through a stand-in for
the resolver, and pages come from an ``httpx.MockTransport`` (or the local test site).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cadenza.engine.events import PermissionDecided
from cadenza.engine.permissions import PermissionAnswer, PermissionGate
from cadenza.engine.session import Session, SessionSettings
from cadenza.messages import ToolMessage
from cadenza.permission_rules import RuleSet, parse_rule
from cadenza.tools import local_address as local_module
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.browse import Browse
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.local_address import LOCAL_REASON, local_address
from cadenza.tools.registry import ToolRegistry
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply
from tests.support.web import TestSite

NAMES = {
    "docs.example": "93.184.215.14",
    "intranet.example": "10.0.0.5",
    "rebind.example": "169.254.169.254",
}


@pytest.fixture(autouse=True)
def resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names resolve from ``NAMES`` (no DNS); addresses and ``localhost`` as the system does."""
    real = local_module.resolve

    async def resolve(host: str, port: int) -> list[Any]:
        if host in NAMES:
            return [ipaddress.ip_address(NAMES[host])]
        if host.endswith(".example"):
            return []
        return await real(host, port)

    monkeypatch.setattr(local_module, "resolve", resolve)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.1",
        "2130706433",  # 127.0.0.1 as one number
        "localhost",
        "0.0.0.0",
        "::1",
        "[::1]",
        "::",
        "::ffff:127.0.0.1",
        "169.254.169.254",  # the cloud's metadata service
        "fe80::1",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.254",
        "192.168.1.1",
        "fc00::1",
        "fd12:3456::1",
        "100.64.0.1",  # carrier-grade NAT
        "intranet.example",
        "rebind.example",
    ],
)
async def test_local_addresses(host: str) -> None:
    assert await local_address(host, 80) is not None, host


@pytest.mark.parametrize(
    "host", ["8.8.8.8", "172.32.0.1", "2606:4700::1", "docs.example", "unknown.example"]
)
async def test_public_addresses(host: str) -> None:
    assert await local_address(host, 80) is None, host


class Pages:
    """A mock web: ``docs.example`` pages, one redirecting to the metadata service."""

    def __init__(self) -> None:
        self.requested: list[str] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requested.append(str(request.url))
        path = request.url.path
        if request.url.host == "docs.example" and path == "/to-metadata":
            location = "http://169.254.169.254/latest/meta-data/iam/"
            return httpx.Response(302, headers={"Location": location})
        if request.url.host == "docs.example" and path == "/to-intranet":
            return httpx.Response(302, headers={"Location": "http://intranet.example/wiki"})
        if request.url.host == "intranet.example" and path == "/wiki":
            return httpx.Response(302, headers={"Location": "/wiki/home"})
        return httpx.Response(
            200, text=f"page {request.url}", headers={"Content-Type": "text/plain"}
        )


class Person:
    """Answers ``ToolContext.confirm``: allows or refuses, and remembers what it was asked."""

    def __init__(self, allow: bool) -> None:
        self.allow = allow
        self.asked: list[tuple[str, str]] = []

    async def confirm(self, title: str, target: str) -> str | None:
        self.asked.append((title, target))
        return None if self.allow else f"refused {target}"


@pytest.fixture
def pages() -> Iterator[Pages]:
    yield Pages()


async def fetch(tmp_path: Path, pages: Pages, url: str, person: Person | None) -> ToolResult:
    tool = Browse(transport=httpx.MockTransport(pages.handler))
    prepared = prepare(call("browse", url=url), ToolRegistry([tool]))
    assert isinstance(prepared, PreparedCall)
    confirm = person.confirm if person is not None else None
    ctx = ToolContext(root=tmp_path, host=MemoryEditor(), confirm=confirm)
    return await run(prepared, ctx)


async def test_a_public_page_is_fetched_without_asking(tmp_path: Path, pages: Pages) -> None:
    person = Person(allow=False)
    result = await fetch(tmp_path, pages, "https://docs.example/guide", person)
    assert not result.is_error and "page https://docs.example/guide" in result.content
    assert person.asked == []


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:8080/",
        "http://0.0.0.0:6379/",
        "http://192.168.1.1/admin",
        "http://intranet.example/wiki/home",
    ],
)
async def test_a_local_address_is_asked_first(tmp_path: Path, pages: Pages, url: str) -> None:
    person = Person(allow=False)
    result = await fetch(tmp_path, pages, url, person)
    assert result.is_error and "refused" in result.content
    assert pages.requested == []  # nothing was sent
    [(title, target)] = person.asked
    assert title == f"fetching {url} ({LOCAL_REASON})"
    assert url.startswith(target)


async def test_with_no_one_to_ask_a_local_address_is_not_fetched(
    tmp_path: Path, pages: Pages
) -> None:
    result = await fetch(tmp_path, pages, "http://127.0.0.1:9/", None)
    assert result.is_error and "only when the person allows it" in result.content
    assert pages.requested == []


async def test_a_redirect_to_the_metadata_service_is_asked(tmp_path: Path, pages: Pages) -> None:
    person = Person(allow=False)
    result = await fetch(tmp_path, pages, "https://docs.example/to-metadata", person)
    assert result.is_error and "refused http://169.254.169.254" in result.content
    assert pages.requested == ["https://docs.example/to-metadata"]  # the redirect not followed
    assert [target for _, target in person.asked] == ["http://169.254.169.254"]


async def test_an_allowed_host_is_asked_once_per_call(tmp_path: Path, pages: Pages) -> None:
    person = Person(allow=True)
    result = await fetch(tmp_path, pages, "https://docs.example/to-intranet", person)
    assert not result.is_error, result.content
    assert "page http://intranet.example/wiki/home" in result.content
    assert [target for _, target in person.asked] == ["http://intranet.example"]
    assert pages.requested[-1] == "http://intranet.example/wiki/home"


# --- through a session: the permission gate asks every time, no rule answers -------------


ALLOW_ALWAYS = PermissionAnswer(outcome="selected", option="allow_always")
REJECT = PermissionAnswer(outcome="selected", option="reject_once")


async def test_a_session_asks_every_time_even_with_browse_allowed(tmp_path: Path) -> None:
    with TestSite() as site:
        url = site.url("/plain.txt")
        editor = MemoryEditor(permissions=[ALLOW_ALWAYS, REJECT])
        rules = RuleSet(allow=(parse_rule("browse"),))  # the person's `--allow browse`
        gate = PermissionGate(editor, store=None, rules=rules, timeout_s=5)
        script = [
            reply(call("browse", "b1", url=url)),
            reply(call("browse", "b2", url=url + "?again")),
            reply(content="ok"),
        ]
        session = Session(
            session_id="s",
            task="task",
            root=tmp_path,
            provider=ScriptedProvider(script),  # type: ignore[arg-type]
            editor=editor,
            settings=SessionSettings(),
            permissions=gate,
        )
        await session.run()
    assert len(editor.asked) == 2  # the allow rule and the "always" answer did not count
    for asked in editor.asked:
        assert asked.address.startswith("http://127.0.0.1:")
        assert asked.options == ("allow_once", "reject_once")
        assert asked.title.endswith(f"({LOCAL_REASON})")
    results = [m for m in session.messages if isinstance(m, ToolMessage)]
    assert not results[0].is_error and "content type: text/plain" in results[0].content
    assert results[1].is_error and "Do not retry it" in results[1].content
    decided = [e for e in editor.events if isinstance(e, PermissionDecided)]
    assert [d.verdict for d in decided] == ["allowed", "rejected"]
    assert json.loads(editor.asked[1].raw_input) == {"url": url + "?again"}
