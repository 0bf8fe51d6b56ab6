"""The browser of one agent session and its browser sessions.

``BrowserSessions`` is a per-session resource (``ctx.resources``): chromium is launched on first
use and closed with the agent session (``aclose``). Each browser session is one Playwright
``BrowserContext`` (its own cookies and storage) and the page the model works on, known by a
short id the model passes back. A session outlives the tool call that opened it, so a person can
log in while the agent waits and the model reads the logged-in page afterwards.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from cadenza.config.browser import BrowserSettings
from cadenza.tools.base import ToolError

if TYPE_CHECKING:  # Playwright is imported when a browser starts (~80 ms at start-up otherwise)
    from playwright.async_api import Browser, BrowserContext, Page, Playwright
    from playwright.async_api import Error as PlaywrightError

log = logging.getLogger(__name__)

LAUNCH_TIMEOUT_S = 30.0


def error_text(exc: PlaywrightError) -> str:
    """A Playwright error's message without its call log."""
    message = exc.message or str(exc)
    return message.split("\nCall log:", 1)[0].strip()


@dataclass(eq=False, kw_only=True)
class BrowserSession:
    """One browser context and the page the model works on.

    Attributes:
        id: The id the model passes back (``session_id``).
        context: The Playwright context: cookies survive between calls.
        lock: Held while an action runs, so two calls never drive the page at once.
    """

    id: str
    context: BrowserContext
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    async def page(self) -> Page:
        """The newest open page of the session (a new blank one if all were closed)."""
        pages = [page for page in self.context.pages if not page.is_closed()]
        return pages[-1] if pages else await self.context.new_page()


class BrowserSessions:
    """The chromium of one agent session and its browser sessions, by id."""

    def __init__(self, settings: BrowserSettings | None = None) -> None:
        self.settings = settings or BrowserSettings()
        self._lock = anyio.Lock()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._sessions: dict[str, BrowserSession] = {}
        self._closed = False

    @property
    def ids(self) -> list[str]:
        """Browser session ids, least recently used first."""
        return list(self._sessions)

    def get(self, session_id: str | None = None) -> BrowserSession:
        """The browser session ``session_id``, or the most recently used one.

        Raises:
            ToolError: No such session (the known ids are named), or none at all.
        """
        if self._browser is not None and not self._browser.is_connected():
            self._sessions.clear()
            raise ToolError("the browser was closed, and its sessions with it: open the page again")
        if session_id is None:
            if not self._sessions:
                raise ToolError("no browser session yet: call action=open with a url first")
            session_id = next(reversed(self._sessions))
        session = self._sessions.get(session_id)
        if session is None:
            known = ", ".join(self._sessions) or "none (call action=open first)"
            raise ToolError(f"unknown browser session {session_id!r}; known sessions: {known}")
        self._sessions[session_id] = self._sessions.pop(session_id)  # most recently used last
        return session

    def latest(self) -> BrowserSession | None:
        """The most recently used browser session, or None (none yet, or the browser is gone)."""
        if not self._sessions or self._browser is None or not self._browser.is_connected():
            return None
        return self.get()

    async def open(self) -> BrowserSession:
        """A new browser session (own cookies) with one blank page.

        Raises:
            ToolError: chromium is missing or did not start.
        """
        from playwright.async_api import Error as PlaywrightError

        browser = await self._ensure_browser()
        headed = not self.settings.is_headless()
        try:
            context = await browser.new_context(no_viewport=headed)
            context.set_default_timeout(self.settings.timeout_s * 1000)
            await context.new_page()
        except PlaywrightError as exc:
            raise ToolError(f"could not open a browser session: {error_text(exc)}") from None
        session_id = f"br-{secrets.token_hex(3)}"
        while session_id in self._sessions:
            session_id = f"br-{secrets.token_hex(3)}"
        session = BrowserSession(id=session_id, context=context)
        self._sessions[session_id] = session
        return session

    async def act_url(self, page: Page) -> str | None:
        """Where the person acts on ``page``; None when it is in a window on their screen.

        A headed browser brings the page to the front and answers None (the person uses that
        window). A headless one with a remote debugging port answers the DevTools front end of
        that page, served by the browser itself on 127.0.0.1 (its screencast takes clicks and
        typing). Without a port nobody can reach the page: None.
        """
        from playwright.async_api import Error as PlaywrightError

        port = self.settings.remote_debugging_port
        try:
            if not self.settings.is_headless():
                await page.bring_to_front()
                return None
            if port is None:
                return None
            cdp = await page.context.new_cdp_session(page)
            try:
                info = await cdp.send("Target.getTargetInfo")
            finally:
                await cdp.detach()
        except PlaywrightError as exc:
            log.info("no place to act on %s: %s", page.url, exc)
            return None
        target = info.get("targetInfo", {}).get("targetId")
        if not isinstance(target, str):
            return None
        return (
            f"http://127.0.0.1:{port}/devtools/inspector.html"
            f"?ws=127.0.0.1:{port}/devtools/page/{target}"
        )

    def where_to_act(self) -> str:
        """A sentence telling the person where the browser is."""
        port = self.settings.remote_debugging_port
        if not self.settings.is_headless():
            return "Use the Chromium window that Cadenza opened."
        if port is not None:
            return (
                "The browser runs without a window: attach to it over the DevTools protocol at "
                f"http://127.0.0.1:{port} (in Chrome or Chromium: chrome://inspect, Configure, "
                f"add 127.0.0.1:{port})."
            )
        return (
            "The browser runs without a window and no remote debugging port, so nobody can act "
            "in it: set the browser's headless to false or a remote_debugging_port."
        )

    async def _ensure_browser(self) -> Browser:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        async with self._lock:
            if self._closed:
                raise ToolError("the browser was closed with the session")
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            self._sessions.clear()  # a browser that went away took its sessions with it
            self._browser = None
            try:
                executable = self.settings.chromium()
            except FileNotFoundError as exc:
                raise ToolError(str(exc)) from None
            if self._playwright is None:
                try:
                    self._playwright = await async_playwright().start()
                except Exception as exc:
                    raise ToolError(f"could not start Playwright: {exc}") from None
            args = []
            if self.settings.remote_debugging_port is not None:
                args.append(f"--remote-debugging-port={self.settings.remote_debugging_port}")
            try:
                self._browser = await self._playwright.chromium.launch(
                    executable_path=executable,
                    headless=self.settings.is_headless(),
                    args=args,
                    timeout=LAUNCH_TIMEOUT_S * 1000,
                )
            except PlaywrightError as exc:
                raise ToolError(
                    f"could not start chromium ({executable}): {error_text(exc)}"
                ) from None
            return self._browser

    async def aclose(self) -> None:
        """Close every browser session, chromium and the Playwright driver (idempotent)."""
        from playwright.async_api import Error as PlaywrightError

        with anyio.CancelScope(shield=True):
            async with self._lock:
                self._closed = True
                sessions = list(self._sessions.values())
                self._sessions.clear()
                browser, self._browser = self._browser, None
                playwright, self._playwright = self._playwright, None
                for session in sessions:
                    with contextlib.suppress(PlaywrightError):  # the browser is already gone
                        await session.context.close()
                if browser is not None:
                    try:
                        await browser.close()
                    except PlaywrightError as exc:
                        log.warning("closing chromium failed: %s", error_text(exc))
                if playwright is not None:
                    await playwright.stop()
