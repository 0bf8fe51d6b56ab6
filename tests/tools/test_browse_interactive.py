"""``browse_interactive`` with a real headless chromium against a real local site.

One browser serves the module (its launch is the slow part). The login test plays the person:
while the agent waits, it attaches to the same chromium over the DevTools protocol (the
``remote_debugging_port`` a person would use from ``chrome://inspect``), logs in on the page
the tool left open, and detaches; the tool then reads the logged-in page in the same browser
session.
"""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import async_playwright

from cadenza.config.browser import BrowserSettings, find_chromium
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.browser import BrowseInteractive, BrowserSessions
from cadenza.tools.browser.detect import find_obstacle
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.registry import ToolRegistry
from cadenza.tools.resources import SessionResources
from tests.doubles import MemoryEditor, call
from tests.support.web import PASSWORD, SECRET, TestSite

needs_chromium = pytest.mark.skipif(
    find_chromium() is None,
    reason="no chromium executable (apt-get install chromium) for the browser tests",
)
module_loop = pytest.mark.asyncio(loop_scope="module")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def settings(port: int) -> BrowserSettings:
    return BrowserSettings(headless=True, remote_debugging_port=port, timeout_s=2)


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    with TestSite() as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[BrowserSessions]:
    """The module's chromium (launched on first use by a test), closed after the module."""
    shared = BrowserSessions(settings(free_port()))
    yield shared
    await shared.aclose()


def context(tmp_path: Path, browser: BrowserSessions) -> ToolContext:
    """An agent session's context whose browser resource is the module's chromium."""
    resources = SessionResources()
    resources.get(BrowserSessions, lambda: browser)
    return ToolContext(root=tmp_path, host=MemoryEditor(), session_id="s1", resources=resources)


async def act(ctx: ToolContext, tool: BrowseInteractive | None = None, **args: Any) -> ToolResult:
    """One call through the dispatcher, as the agent makes it."""
    registry = ToolRegistry([tool or BrowseInteractive()])
    prepared = prepare(call("browse_interactive", **args), registry)
    if isinstance(prepared, ToolResult):
        return prepared
    assert isinstance(prepared, PreparedCall)
    return await run(prepared, ctx)


def session_of(result: ToolResult) -> str:
    first = result.content.splitlines()[0]
    assert first.startswith("browser session: br-"), result.content
    return first.removeprefix("browser session: ")


async def log_in_as_the_person(port: int, url: str, user: str) -> None:
    """What a person does: attach to the running chromium, log in on the open page, leave."""
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        pages = [page for ctx in chromium.contexts for page in ctx.pages if page.url == url]
        assert len(pages) == 1, [page.url for ctx in chromium.contexts for page in ctx.pages]
        page = pages[0]
        await page.fill("input[name=user]", user)
        await page.fill("input[type=password]", PASSWORD)
        await page.click("button[type=submit]")
        await page.wait_for_selector(f"text=Welcome, {user}")
        await chromium.close()  # disconnects; the browser and its contexts stay


@needs_chromium
@module_loop
async def test_login_page_waits_for_the_person_then_reads_logged_in(
    tmp_path: Path, site: TestSite, browser: BrowserSessions
) -> None:
    ctx = context(tmp_path, browser)
    started = time.perf_counter()
    opened = await act(ctx, action="open", url=site.url("/account"), new_session=True)
    print(f"open with browser launch: {time.perf_counter() - started:.2f} s")
    wait = opened.waiting_human
    assert wait is not None, opened.content
    assert not opened.is_error
    assert wait.url == site.url("/account")
    assert wait.browser_session_id.startswith("br-")
    assert wait.browser_session_id in browser.ids
    assert wait.wait_reason.startswith(f"Log in on the page 'Sign in' ({site.url('/account')})")
    assert f"http://127.0.0.1:{browser.settings.remote_debugging_port}" in wait.wait_reason
    assert opened.content.startswith(f"waiting for the person at {site.url('/account')}: Log in")
    assert opened.content.endswith(f"(browser session {wait.browser_session_id})")

    # The agent is waiting; the person logs in in the same browser.
    port = browser.settings.remote_debugging_port
    assert port is not None
    await log_in_as_the_person(port, site.url("/account"), "ada")

    # The session resumed: the model reads the page in the same browser session.
    read = await act(ctx, action="read", session_id=wait.browser_session_id)
    assert not read.is_error and read.waiting_human is None, read.content
    lines = read.content.splitlines()
    assert lines[:3] == [
        f"browser session: {wait.browser_session_id}",
        f"url: {site.url('/account')}",
        "title: Your account",
    ]
    assert "Welcome, ada" in read.content and SECRET in read.content
    # The cookie lives in the browser session: opening the page again needs nobody.
    again = await act(ctx, action="open", url=site.url("/account"))
    assert again.waiting_human is None and "Welcome, ada" in again.content
    assert session_of(again) == wait.browser_session_id


@needs_chromium
@module_loop
async def test_model_asks_for_the_person(
    tmp_path: Path, site: TestSite, browser: BrowserSessions
) -> None:
    ctx = context(tmp_path, browser)
    opened = await act(ctx, action="open", url=site.url("/form"), new_session=True)
    session_id = session_of(opened)
    blank = await act(ctx, action="wait_for_human", reason="  ")
    assert blank.is_error and blank.content == "action=wait_for_human needs `reason`"
    result = await act(
        ctx, action="wait_for_human", reason="Approve the deploy", session_id=session_id
    )
    wait = result.waiting_human
    assert wait is not None and not result.is_error
    assert wait.browser_session_id == session_id
    assert wait.url == site.url("/form")
    assert wait.wait_reason.startswith("Approve the deploy. The browser runs without a window")
    # Without session_id the latest browser session is used.
    latest = await act(ctx, action="wait_for_human", reason="Check the form")
    assert latest.waiting_human is not None
    assert latest.waiting_human.browser_session_id == session_id


@needs_chromium
@module_loop
async def test_click_and_type(tmp_path: Path, site: TestSite, browser: BrowserSessions) -> None:
    ctx = context(tmp_path, browser)
    opened = await act(ctx, action="open", url=site.url("/form"), new_session=True)
    assert "title: Search form" in opened.content and "Nothing clicked yet" in opened.content
    assert "  #q  text  label 'Query'" in opened.content  # controls with selectors
    assert f"  Read the article -> {site.url('/article')}" in opened.content  # links
    clicked = await act(ctx, action="click", selector="#change")
    assert "clicked #change" in clicked.content and "Button was clicked" in clicked.content
    typed = await act(ctx, action="type", selector="input[name=q]", text="cadenza")
    assert "typed 'cadenza' into input[name=q]" in typed.content
    assert "#q  text  label 'Query'  value 'cadenza'" in typed.content
    submitted = await act(ctx, action="click", selector="text=Search >> nth=1")
    assert f"url: {site.url('/search?q=cadenza')}" in submitted.content
    assert "Results for cadenza" in submitted.content
    back = await act(ctx, action="open", url=site.url("/form"))
    entered = await act(ctx, action="type", selector="#q", text="tools", press_enter=True)
    assert session_of(entered) == session_of(back) == session_of(opened)
    assert "Results for tools" in entered.content
    missing = await act(ctx, action="click", selector="#nope")
    assert missing.is_error and missing.content.startswith("no element matching '#nope'")
    needs = await act(ctx, action="type", selector="#q")
    assert needs.is_error and needs.content == "action=type needs `text`"


@needs_chromium
@module_loop
async def test_challenge_page_waits_for_the_person(
    tmp_path: Path, site: TestSite, browser: BrowserSessions
) -> None:
    ctx = context(tmp_path, browser)
    result = await act(ctx, action="open", url=site.url("/challenge"), new_session=True)
    assert result.waiting_human is not None
    assert "bot check" in result.waiting_human.wait_reason
    assert "'Just a moment...'" in result.waiting_human.wait_reason


@needs_chromium
@module_loop
async def test_detects_captcha_widgets_and_visible_password_fields(
    browser: BrowserSessions,
) -> None:
    session = await browser.open()
    page = await session.page()
    cases = {
        '<div class="g-recaptcha" style="width:300px;height:80px"></div>': "a reCAPTCHA",
        '<iframe src="about:blank#hcaptcha.com" class="h-captcha"></iframe>': "an hCaptcha",
        '<div class="cf-turnstile" style="width:300px;height:65px"></div>': "Cloudflare",
        '<form><input type="password"></form>': "a password field",
        '<input type="password" style="display:none"><p>hidden</p>': None,
        '<iframe src="about:blank#recaptcha&size=invisible"></iframe><p>v3</p>': None,
        "<p>Just text</p>": None,
    }
    for html, expected in cases.items():
        await page.set_content(f"<html><head><title>t</title></head><body>{html}</body></html>")
        obstacle = await find_obstacle(page)
        if expected is None:
            assert obstacle is None, html
        else:
            assert obstacle is not None and expected in obstacle.evidence, html


@needs_chromium
@module_loop
async def test_unknown_session_id_and_bad_arguments(
    tmp_path: Path, site: TestSite, browser: BrowserSessions
) -> None:
    ctx = context(tmp_path, browser)
    await act(ctx, action="open", url=site.url("/form"))
    result = await act(ctx, action="read", session_id="br-nope")
    assert result.is_error
    assert result.content.startswith("unknown browser session 'br-nope'; known sessions: br-")
    for known in browser.ids:
        assert known in result.content
    missing_page = await act(ctx, action="open", url=site.url("/missing"))
    assert f"opened {site.url('/missing')} (HTTP 404)" in missing_page.content
    assert "No such page" in missing_page.content and not missing_page.is_error
    no_url = await act(ctx, action="open")
    assert no_url.is_error and no_url.content == "action=open needs `url`"
    scheme = await act(ctx, action="open", url="file:///etc/passwd")
    assert scheme.is_error and "only http:// and https://" in scheme.content
    bad_action = await act(ctx, action="scroll")
    assert bad_action.is_error and "action: Input should be 'open'" in bad_action.content


@module_loop
async def test_no_session_yet_and_missing_chromium(tmp_path: Path) -> None:
    ctx = ToolContext(root=tmp_path, host=MemoryEditor(), session_id="s1")
    read = await act(ctx, action="read")
    assert read.is_error and read.content.startswith("no browser session yet")
    await ctx.resources.aclose()
    # Settings are the first tool's of the agent session: a new session for other settings.
    ctx = ToolContext(root=tmp_path, host=MemoryEditor(), session_id="s2")
    tool = BrowseInteractive(BrowserSettings(executable_path="/nonexistent/chromium"))
    missing = await act(ctx, tool, action="open", url="http://127.0.0.1:9/")
    assert missing.is_error
    assert missing.content == (
        "no chromium executable at /nonexistent/chromium: install Debian's chromium "
        "(apt-get install chromium) or set the browser's executable_path"
    )
    await ctx.resources.aclose()


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent does not count)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def chromium_processes(port: int) -> set[int]:
    """Live processes of the chromium listening on ``port`` and all of their descendants."""
    parents: dict[int, int] = {}
    roots: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state == "Z":
            continue
        parents[int(entry.name)] = int(ppid)
        if f"--remote-debugging-port={port}".encode() in cmdline:
            roots.add(int(entry.name))
    found = set(roots)
    grew = True
    while grew:
        children = {pid for pid, ppid in parents.items() if ppid in found} - found
        found |= children
        grew = bool(children)
    return found


@needs_chromium
@module_loop
async def test_aclose_leaves_no_chromium_process(tmp_path: Path, site: TestSite) -> None:
    port = free_port()
    ctx = ToolContext(root=tmp_path, host=MemoryEditor(), session_id="s2")
    tool = BrowseInteractive(settings(port))
    opened = await act(ctx, tool, action="open", url=site.url("/form"))
    assert not opened.is_error, opened.content
    running = chromium_processes(port)
    assert len(running) >= 2  # the browser and at least one helper (zygote, renderer)
    started = time.perf_counter()
    await ctx.resources.aclose()
    print(f"aclose: {time.perf_counter() - started:.2f} s")
    assert not {pid for pid in running if alive(pid)}
    assert not chromium_processes(port)
    assert ctx.resources.find(BrowserSessions) is None
