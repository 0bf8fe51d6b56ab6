"""``browse_interactive``: drive a real browser (the system's chromium) one action at a time.

The model opens a page, clicks, types and reads; every result names the browser session, its
URL and title. Cookies live in the browser session between calls. When the page needs a person
(``detect``: a login form or a bot challenge), or the model asks for one (``wait_for_human``),
the result is the ``waiting_human`` output of ``dispatch.browse_result``: the movement ends,
the person acts in the same browser, and once the session resumes the model goes on in the
same browser session (``session_id``), logged in.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field
from typing_extensions import override

from cadenza.config.browser import BrowserSettings
from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from cadenza.tools.browser.sessions import BrowserSession, BrowserSessions, error_text
from cadenza.tools.dispatch.browse_result import WAITING_HUMAN, browse_tool_result

if TYPE_CHECKING:
    # Playwright (and the modules that use it) load on the first call: ~80 ms at start-up.
    from playwright.async_api import Page

    from cadenza.tools.browser.detect import Obstacle

ACTION_TEXT_CHARS = 4_000
"""Characters of page text after ``click`` and ``type`` (``read`` shows more)."""
LOAD_WAIT_S = 5.0
"""Seconds to let a page finish loading after an action before reading it anyway."""

Action = Literal["open", "click", "type", "read", "wait_for_human"]


class BrowseInteractiveArgs(ToolArgs):
    """Arguments of the tool."""

    action: Action = Field(
        description=(
            "open: load `url`; click: click `selector`; type: fill `selector` with `text`; "
            "read: the page's text, controls and links; wait_for_human: hand the browser to "
            "the person (`reason` says what they must do)."
        )
    )
    url: str | None = Field(default=None, description="open: the http(s) URL.")
    selector: str | None = Field(
        default=None,
        description=(
            "click/type: the element, as a CSS selector (#login, input[name=q]) or a "
            'Playwright text selector (text=Sign in, button:has-text("Next")).'
        ),
    )
    text: str | None = Field(default=None, description="type: the text (replaces the value).")
    press_enter: bool = Field(default=False, description="type: press Enter after typing.")
    reason: str | None = Field(
        default=None, description="wait_for_human: what the person must do in the browser."
    )
    session_id: str | None = Field(
        default=None,
        description="The browser session to use (from an earlier result); default the latest.",
    )
    new_session: bool = Field(
        default=False,
        description="open: start a new browser session (own cookies) instead of the latest.",
    )


def _required(value: str | None, name: str, action: str) -> str:
    if value is None or (name != "text" and not value.strip()):
        raise ToolError(f"action={action} needs `{name}`")
    return value


def _obstacle_reason(obstacle: Obstacle, title: str, url: str) -> str:
    page = f"{title!r} ({url})" if title else url
    if obstacle.kind == "login":
        return (
            f"Log in on the page {page}: it shows {obstacle.evidence}, which is for you to "
            "fill in, not the agent. Let the agent continue when you are done."
        )
    return (
        f"Get past the bot check on the page {page}: it shows {obstacle.evidence}. "
        "Let the agent continue when you are done."
    )


async def _settle(page: Page) -> None:
    """Wait a little for the page to finish loading; a slow page is read as it is."""
    from playwright.async_api import Error as PlaywrightError

    with contextlib.suppress(PlaywrightError):
        await page.wait_for_load_state("load", timeout=LOAD_WAIT_S * 1000)


def _not_found(selector: str, verb: str, timeout_s: float) -> str:
    return (
        f"no element matching {selector!r} could be {verb} within {timeout_s:g} s (missing, "
        "hidden or disabled); call read to see the page's controls and their selectors"
    )


async def _click(page: Page, selector: str, timeout_s: float) -> str:
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import TimeoutError as PlaywrightTimeoutError

    try:
        await page.locator(selector).click()
    except PlaywrightTimeoutError:
        raise ToolError(_not_found(selector, "clicked", timeout_s)) from None
    except PlaywrightError as exc:
        raise ToolError(f"click {selector!r} failed: {error_text(exc)}") from None
    await _settle(page)
    return f"clicked {selector}"


async def _type(page: Page, selector: str, text: str, press_enter: bool, timeout_s: float) -> str:
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import TimeoutError as PlaywrightTimeoutError

    locator = page.locator(selector)
    try:
        await locator.fill(text)
        if press_enter:
            await locator.press("Enter")
    except PlaywrightTimeoutError:
        raise ToolError(_not_found(selector, "typed into", timeout_s)) from None
    except PlaywrightError as exc:
        raise ToolError(f"type into {selector!r} failed: {error_text(exc)}") from None
    await _settle(page)
    shown = text if len(text) <= 80 else text[:80] + "…"
    return f"typed {shown!r} into {selector}" + (" and pressed Enter" if press_enter else "")


class BrowseInteractive(Tool[BrowseInteractiveArgs]):
    """Drive chromium: open, click, type, read, and wait for a person when needed."""

    name = "browse_interactive"
    description = (
        "Drive a real web browser (JavaScript runs, cookies are kept in a browser session). "
        "action=open loads `url`; click and type act on `selector` (CSS or Playwright text "
        "selector; type replaces the value with `text`); read returns the page's text, its "
        "controls with selectors, and its links; wait_for_human hands the browser to the "
        "person with a `reason`. Every result names the browser session: pass it as "
        "`session_id` to continue (default: the latest). When a page needs a person (a login "
        "form, a CAPTCHA) the tool waits for them; after they are done, call read with the "
        "same session_id. For plain reading of a page prefer browse."
    )
    args_model = BrowseInteractiveArgs
    kind: ClassVar[ToolKind] = "fetch"
    read_only = False
    timeout_s: ClassVar[float] = 120.0

    def __init__(self, settings: BrowserSettings | None = None) -> None:
        """A browse_interactive tool; ``settings`` apply to sessions that start using it."""
        self.settings = settings or BrowserSettings()

    @override
    def title(self, args: BrowseInteractiveArgs) -> str:
        if args.action == "open":
            return f"opening {args.url}"
        if args.action in ("click", "type"):
            verb = "clicking" if args.action == "click" else "typing into"
            return f"{verb} {args.selector}"
        if args.action == "read":
            return "reading the browser page"
        return "waiting for the person"

    @override
    async def invoke(self, args: BrowseInteractiveArgs, ctx: ToolContext) -> ToolResult:
        from cadenza.tools.browser.reading import describe, view

        sessions = ctx.resources.get(BrowserSessions, lambda: BrowserSessions(self.settings))
        if args.action == "open":
            return await self._open(sessions, args)
        session = sessions.get(args.session_id)
        async with session.lock:
            page = await session.page()
            if args.action == "wait_for_human":
                reason = _required(args.reason, "reason", args.action).strip()
                return await self._waiting(sessions, session, page, reason)
            if args.action == "read":
                max_chars = sessions.settings.max_chars
                return ToolResult(
                    content=describe(session.id, await view(page), max_chars=max_chars)
                )
            selector = _required(args.selector, "selector", args.action)
            timeout = sessions.settings.timeout_s
            if args.action == "click":
                done = await _click(page, selector, timeout)
            else:
                text = _required(args.text, "text", args.action)
                done = await _type(page, selector, text, args.press_enter, timeout)
            return await self._after(sessions, session, done, ACTION_TEXT_CHARS)

    async def _open(self, sessions: BrowserSessions, args: BrowseInteractiveArgs) -> ToolResult:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeoutError

        from cadenza.tools.web import check_url

        url = str(check_url(_required(args.url, "url", "open")))
        latest = sessions.latest() if args.session_id is None else sessions.get(args.session_id)
        session = await sessions.open() if args.new_session or latest is None else latest
        async with session.lock:
            page = await session.page()
            timeout = sessions.settings.timeout_s
            try:
                response = await page.goto(url, wait_until="domcontentloaded")
            except PlaywrightTimeoutError:
                raise ToolError(f"{url} did not load within {timeout:g} s") from None
            except PlaywrightError as exc:
                raise ToolError(f"could not open {url}: {error_text(exc)}") from None
            await _settle(page)
            status = response.status if response is not None else None
            done = f"opened {url}" + (f" (HTTP {status})" if status and status >= 400 else "")
            return await self._after(sessions, session, done, sessions.settings.max_chars)

    async def _after(
        self, sessions: BrowserSessions, session: BrowserSession, done: str, max_chars: int
    ) -> ToolResult:
        """The result after an action: a wait for the person if the page needs one."""
        from cadenza.tools.browser.detect import find_obstacle
        from cadenza.tools.browser.reading import describe, view

        page = await session.page()  # a click may have opened a new tab
        obstacle = await find_obstacle(page)
        if obstacle is not None:
            title = await page.title()
            return await self._waiting(
                sessions, session, page, _obstacle_reason(obstacle, title, page.url)
            )
        shown = await view(page)
        return ToolResult(content=describe(session.id, shown, done=done, max_chars=max_chars))

    async def _waiting(
        self, sessions: BrowserSessions, session: BrowserSession, page: Page, reason: str
    ) -> ToolResult:
        if not reason.endswith((".", "!", "?")):
            reason += "."
        output: dict[str, str] = {
            "action": WAITING_HUMAN,
            "waitReason": f"{reason} {sessions.where_to_act()}",
            "sessionId": session.id,
            "url": page.url,
        }
        act_url = await sessions.act_url(page)
        if act_url is not None:
            output["actUrl"] = act_url
        return browse_tool_result(output)
