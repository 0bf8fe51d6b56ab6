"""``browse``: fetch a web page over HTTP and give the model its readable text.

HTML becomes the page's main content as Markdown-like text (paragraphs, headings, links, tables)
with ``trafilatura``, never regexes over HTML: navigation, scripts and footers are left out.
Plain text, JSON, XML and other textual types pass through as they are. The body is read up to
a byte cap and the text the model sees up to ``max_chars`` characters, each with a note when
cut. Anything else (a scheme other than http(s), no connection, HTTP 4xx/5xx, images, PDFs) is
an error the model reads.

An address on this machine or its local network (``tools.local_address``: loopback,
private and link-local ranges, the cloud's metadata service, or a name resolving to one) is
asked about before it is fetched, whether it is the URL the model gave or where a redirect
leads, even when ``browse`` runs without asking otherwise: a page's text must not be able to
send the agent to a router, a local database or the machine's credentials unasked. The
person's consent (``ToolContext.confirm``) covers that host for the rest of the call; with no
one to ask, the address is not fetched.

No JavaScript runs: a page that needs a browser (or a person) is ``browse_interactive``'s job.
The HTTP side (``cadenza.tools.web``, with httpx) is imported by the first call, not with the
tools: the engine imports the tools and must not load httpx (``tests/test_layers.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import anyio
import charset_normalizer
from pydantic import Field
from typing_extensions import override

from cadenza import __version__
from cadenza.secrets import redact
from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from cadenza.tools.local_address import LOCAL_REASON, local_address

if TYPE_CHECKING:  # httpx loads with the first fetch (cadenza.tools.web), not with the engine
    import httpx

DEFAULT_TIMEOUT_S = 30.0
"""Seconds for the whole fetch (connect, redirects and body)."""
DEFAULT_MAX_BYTES = 5_000_000
"""Bytes of body read at most; the rest of a bigger page is not downloaded."""
DEFAULT_MAX_CHARS = 20_000
MAX_CHARS_LIMIT = 100_000
USER_AGENT = f"cadenza/{__version__} (LLM coding agent; browse tool)"


class BrowseArgs(ToolArgs):
    """Arguments of the tool."""

    url: str = Field(description="The http:// or https:// URL to fetch.")
    max_chars: int | None = Field(
        default=None,
        ge=500,
        le=MAX_CHARS_LIMIT,
        description=f"Most characters of text to return (default {DEFAULT_MAX_CHARS}).",
    )


def decode(body: bytes, charset: str | None, cut: bool) -> str:
    """The body as text: the declared charset, else UTF-8, else charset detection."""
    if charset:
        try:
            return body.decode(charset, errors="replace")
        except LookupError:
            pass
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(body) - 3:  # a character split by the byte cap
            return body.decode("utf-8", errors="replace")
    best = charset_normalizer.from_bytes(body).best()
    return str(best) if best is not None else body.decode("utf-8", errors="replace")


def readable_html(html: str, url: str) -> tuple[str | None, str]:
    """``(title, text)`` of an HTML page: its main content, else all of its text."""
    import trafilatura  # on first use: ~70-115 ms at the server's start-up otherwise

    metadata = trafilatura.extract_metadata(html, default_url=url, extensive=False)
    title = metadata.title if metadata is not None else None
    text = trafilatura.extract(
        html,
        url=url,
        output_format="markdown",
        include_links=True,
        include_tables=True,
        include_comments=False,
        favor_recall=True,
    )
    if not text:
        text = trafilatura.baseline(html)[1]
    if not text:
        text = trafilatura.html2txt(html)
    return title, text.strip()


def bounded(text: str, max_chars: int) -> tuple[str, str]:
    """``(text, note)``: at most ``max_chars`` characters, and a note when some were cut.

    Secrets are redacted first (a key cut by the bound would no longer match).
    """
    text = redact(text)
    if len(text) <= max_chars:
        return text, ""
    note = f"[truncated: showing {max_chars} of {len(text)} characters" + (
        f"; call browse with a larger max_chars (up to {MAX_CHARS_LIMIT}) to read more]"
        if max_chars < MAX_CHARS_LIMIT
        else "]"
    )
    return text[:max_chars], note


class LocalGuard:
    """Asks the person before a fetch reaches a local address (see the module).

    Args:
        ctx: The call's context (``confirm`` asks the person).
        timeout_s: Seconds a name's resolution may take.
    """

    def __init__(self, ctx: ToolContext, timeout_s: float) -> None:
        self._ctx = ctx
        self._timeout_s = timeout_s
        self._allowed: set[tuple[str, int]] = set()

    async def check(self, url: httpx.URL) -> None:
        """Return when ``url`` may be fetched.

        Raises:
            ToolError: ``url`` is local and the person did not allow it (or no one could be
                asked); the message says so for the model.
        """
        port = url.port or (443 if url.scheme == "https" else 80)
        if (url.host, port) in self._allowed:
            return
        address = None  # a name that does not resolve in time: the fetch fails to connect
        with anyio.move_on_after(self._timeout_s):
            address = await local_address(url.host, port)
        if address is None:
            return
        target = f"{url.scheme}://{url.netloc.decode('ascii', 'replace')}"
        if self._ctx.confirm is None:
            raise ToolError(
                f"{target} is on this machine or its local network ({address}); browse fetches "
                "such an address only when the person allows it, and no one can be asked here"
            )
        refused = await self._ctx.confirm(f"fetching {url} ({LOCAL_REASON})", target)
        if refused is not None:
            raise ToolError(refused)
        self._allowed.add((url.host, port))


class Browse(Tool[BrowseArgs]):
    """Fetch a web page and return its readable text."""

    name = "browse"
    description = (
        "Fetch a web page (http or https) and return its readable text: the main content of an "
        "HTML page as Markdown-like text with links and tables, or plain text and JSON as they "
        "are. No JavaScript runs; for pages that need a browser or a login, use "
        "browse_interactive. Long pages are cut to `max_chars` characters with a note."
    )
    args_model = BrowseArgs
    kind: ClassVar[ToolKind] = "fetch"
    read_only = True

    def __init__(
        self,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_chars: int = DEFAULT_MAX_CHARS,
        user_agent: str = USER_AGENT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """A browse tool.

        Args:
            timeout_s: Seconds for a whole fetch (keep it below the dispatcher's
                ``Tool.timeout_s``, 60 s).
            max_bytes: Bytes of body read at most.
            max_chars: Characters returned when the call does not say.
            user_agent: The User-Agent header.
            transport: An httpx transport (proxies, tests); None for the default.
        """
        self._timeout_s = timeout_s
        self._max_bytes = max_bytes
        self._max_chars = max_chars
        self._user_agent = user_agent
        self._transport = transport

    @override
    def title(self, args: BrowseArgs) -> str:
        return f"fetching {args.url}"

    @override
    async def invoke(self, args: BrowseArgs, ctx: ToolContext) -> ToolResult:
        from cadenza.tools import web  # httpx: on the first fetch, not at the engine's import

        url = web.check_url(args.url)
        options = web.FetchOptions(
            timeout_s=self._timeout_s,
            max_bytes=self._max_bytes,
            user_agent=self._user_agent,
            transport=self._transport,
            guard=LocalGuard(ctx, self._timeout_s).check,
        )
        fetched = await web.fetch(url, options)
        kind = web.text_kind(fetched.media_type, fetched.body)
        text = decode(fetched.body, fetched.charset, fetched.cut)
        title: str | None = None
        if kind == "html":
            title, text = await anyio.to_thread.run_sync(readable_html, text, fetched.url)
        header = [fetched.url + (f" (redirected from {url})" if fetched.url != str(url) else "")]
        if title:
            header.append(f"title: {title}")
        if fetched.media_type and kind != "html":
            header.append(f"content type: {fetched.media_type}")
        if fetched.cut:
            header.append(f"[only the first {self._max_bytes} bytes of the page were read]")
        shown, note = bounded(text, args.max_chars or self._max_chars)
        body = shown if shown.strip() else "(the page has no readable text)"
        return ToolResult(content="\n".join(header) + "\n\n" + body + (f"\n{note}" if note else ""))
