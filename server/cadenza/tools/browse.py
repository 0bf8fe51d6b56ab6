"""``browse``: fetch a web page over HTTP and give the model its readable text.

HTML becomes the page's main content as Markdown-like text (paragraphs, headings, links, tables)
with ``trafilatura``, never regexes over HTML: navigation, scripts and footers are left out.
Plain text, JSON, XML and other textual types pass through as they are. The body is read up to
a byte cap and the text the model sees up to ``max_chars`` characters, each with a note when
cut. Anything else (a scheme other than http(s), no connection, HTTP 4xx/5xx, images, PDFs) is
an error the model reads.

No JavaScript runs: a page that needs a browser (or a person) is ``browse_interactive``'s job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import anyio
import charset_normalizer
import httpx
from pydantic import Field
from typing_extensions import override

from cadenza import __version__
from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult

DEFAULT_TIMEOUT_S = 30.0
"""Seconds for the whole fetch (connect, redirects and body)."""
DEFAULT_MAX_BYTES = 5_000_000
"""Bytes of body read at most; the rest of a bigger page is not downloaded."""
DEFAULT_MAX_CHARS = 20_000
MAX_CHARS_LIMIT = 100_000
USER_AGENT = f"cadenza/{__version__} (LLM coding agent; browse tool)"
ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5"

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_APPLICATION_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-javascript",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/x-sh",
        "application/graphql",
        "application/sql",
    }
)
TEXT_SUFFIXES = ("+json", "+xml", "+yaml")


class BrowseArgs(ToolArgs):
    """Arguments of the tool."""

    url: str = Field(description="The http:// or https:// URL to fetch.")
    max_chars: int | None = Field(
        default=None,
        ge=500,
        le=MAX_CHARS_LIMIT,
        description=f"Most characters of text to return (default {DEFAULT_MAX_CHARS}).",
    )


@dataclass(frozen=True, kw_only=True)
class Fetched:
    """A successful response, its body read up to the cap.

    Attributes:
        url: The final URL, after redirects.
        media_type: The content type without parameters, lower case ("" when absent).
        charset: The charset the server declared, if any.
        body: The body bytes (at most the cap).
        cut: True when the body was longer than the cap.
    """

    url: str
    media_type: str
    charset: str | None
    body: bytes
    cut: bool


def check_url(url: str) -> httpx.URL:
    """``url`` parsed, when it is an absolute http(s) URL.

    Raises:
        ToolError: Another scheme, no host, or not a URL at all.
    """
    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL as exc:
        raise ToolError(f"not a valid URL: {url!r} ({exc})") from None
    if parsed.scheme not in ("http", "https"):
        scheme = f"the scheme {parsed.scheme!r}" if parsed.scheme else "a URL without a scheme"
        raise ToolError(f"only http:// and https:// URLs can be opened, not {scheme}: {url}")
    if not parsed.host:
        raise ToolError(f"the URL has no host: {url}")
    return parsed


def text_kind(media_type: str, body: bytes) -> str | None:
    """``"html"``, ``"text"``, or None when the content is not text the model can read.

    A missing content type counts as text when the body has no NUL byte, and as HTML when it
    starts like an HTML document.
    """
    if media_type in HTML_TYPES:
        return "html"
    if (
        media_type.startswith("text/")
        or media_type in TEXT_APPLICATION_TYPES
        or media_type.endswith(TEXT_SUFFIXES)
    ):
        return "text"
    if not media_type and b"\x00" not in body[:4096]:
        start = body[:512].lstrip().lower()
        return "html" if start.startswith((b"<!doctype html", b"<html")) else "text"
    return None


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
    """``(text, note)``: at most ``max_chars`` characters, and a note when some were cut."""
    if len(text) <= max_chars:
        return text, ""
    note = f"[truncated: showing {max_chars} of {len(text)} characters" + (
        f"; call browse with a larger max_chars (up to {MAX_CHARS_LIMIT}) to read more]"
        if max_chars < MAX_CHARS_LIMIT
        else "]"
    )
    return text[:max_chars], note


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
        url = check_url(args.url)
        try:
            with anyio.fail_after(self._timeout_s):
                fetched = await self._fetch(url)
        except TimeoutError:
            raise ToolError(f"no complete answer from {url} within {self._timeout_s:g} s") from None
        kind = text_kind(fetched.media_type, fetched.body)
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

    async def _fetch(self, url: httpx.URL) -> Fetched:
        """GET ``url`` following redirects; the body is read up to ``max_bytes``.

        Raises:
            ToolError: No connection, an HTTP error status, or content that is not text.
        """
        headers = {"User-Agent": self._user_agent, "Accept": ACCEPT}
        try:
            async with (
                httpx.AsyncClient(
                    follow_redirects=True,
                    timeout=self._timeout_s,
                    headers=headers,
                    transport=self._transport,
                ) as client,
                client.stream("GET", url) as response,
            ):
                return await self._read(response)
        except httpx.ConnectError as exc:
            raise ToolError(
                f"could not connect to {url.host}: {exc or 'connection failed'}"
            ) from None
        except httpx.TimeoutException:
            raise ToolError(f"no answer from {url} within {self._timeout_s:g} s") from None
        except httpx.TooManyRedirects:
            raise ToolError(f"too many redirects from {url}") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"fetching {url} failed: {type(exc).__name__}: {exc}") from None

    async def _read(self, response: httpx.Response) -> Fetched:
        final = str(response.url)
        if response.status_code >= 400:
            reason = f" {response.reason_phrase}" if response.reason_phrase else ""
            raise ToolError(f"HTTP {response.status_code}{reason} from {final}")
        content_type = response.headers.get("content-type", "")
        media_type = content_type.split(";", 1)[0].strip().lower()
        chunks: list[bytes] = []
        size = 0
        cut = False
        async for chunk in response.aiter_bytes():
            if size >= self._max_bytes:  # more body after the cap
                cut = True
                break
            chunks.append(chunk)
            size += len(chunk)
            if size == len(chunk) and text_kind(media_type, chunk) is None:
                break  # not text: no need to download the rest
        body = b"".join(chunks)
        if len(body) > self._max_bytes:
            body, cut = body[: self._max_bytes], True
        if text_kind(media_type, body) is None:
            raise ToolError(
                f"{final} is {media_type or 'binary content'}, not text: browse reads HTML, "
                "plain text, JSON and XML"
            )
        return Fetched(
            url=final, media_type=media_type, charset=response.charset_encoding, body=body, cut=cut
        )
