"""HTTP for ``browse``: check a URL, GET it following redirects, read its body up to a cap.

Redirects are followed here, one hop at a time, so that each address is checked before it is
reached (``FetchOptions.guard``: a redirect to this machine or the local network asks first,
as the first URL does).

Loaded by the tools on their first fetch, so that importing the tools (and the engine) does not
load httpx.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
import httpx

from cadenza.tools.base import ToolError

MAX_REDIRECTS = 20
"""Redirects followed at most (httpx's default)."""
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


@dataclass(frozen=True, kw_only=True)
class FetchOptions:
    """How ``fetch`` fetches.

    Attributes:
        timeout_s: Seconds for the whole fetch (connection, redirects, body), not counting
            the time ``guard`` takes (a person answering a question).
        max_bytes: Bytes of body read at most.
        user_agent: The User-Agent header.
        transport: An httpx transport (proxies, tests); None for the default.
        guard: Awaited with each URL before it is requested (the first and each redirect's);
            raises ``ToolError`` to stop the fetch there.
    """

    timeout_s: float
    max_bytes: int
    user_agent: str
    transport: httpx.AsyncBaseTransport | None = None
    guard: Callable[[httpx.URL], Awaitable[None]] | None = None


async def fetch(url: httpx.URL, options: FetchOptions) -> Fetched:
    """GET ``url`` following redirects; the body is read up to ``options.max_bytes``.

    Raises:
        ToolError: No connection, an HTTP error status, content that is not text, no answer
            within ``options.timeout_s``, or a URL ``options.guard`` stopped.
    """
    headers = {"User-Agent": options.user_agent, "Accept": ACCEPT}
    try:
        async with httpx.AsyncClient(
            follow_redirects=False,
            timeout=options.timeout_s,
            headers=headers,
            transport=options.transport,
        ) as client:
            return await _follow(client, client.build_request("GET", url), options)
    except httpx.ConnectError as exc:
        raise ToolError(f"could not connect to {url.host}: {exc or 'connection failed'}") from None
    except (httpx.TimeoutException, TimeoutError):
        raise ToolError(f"no complete answer from {url} within {options.timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"fetching {url} failed: {type(exc).__name__}: {exc}") from None


async def _follow(
    client: httpx.AsyncClient, request: httpx.Request, options: FetchOptions
) -> Fetched:
    """Send ``request`` and each redirect's, every URL guarded first; read the last response."""
    remaining = options.timeout_s
    for _ in range(MAX_REDIRECTS + 1):
        if options.guard is not None:
            await options.guard(request.url)  # not timed: a person may be answering
        started = anyio.current_time()
        with anyio.fail_after(max(remaining, 0.001)):
            response = await client.send(request, stream=True)
            try:
                if response.next_request is None:
                    return await _read(response, options.max_bytes)
                request = response.next_request
            finally:
                await response.aclose()
        remaining -= anyio.current_time() - started
    raise ToolError(f"too many redirects (more than {MAX_REDIRECTS}) from {request.url}")


async def _read(response: httpx.Response, max_bytes: int) -> Fetched:
    """The response's body up to ``max_bytes`` (less when it is not text).

    Raises:
        ToolError: An HTTP error status, or content that is not text.
    """
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
        if size >= max_bytes:  # more body after the cap
            cut = True
            break
        chunks.append(chunk)
        size += len(chunk)
        if size == len(chunk) and text_kind(media_type, chunk) is None:
            break  # not text: no need to download the rest
    body = b"".join(chunks)
    if len(body) > max_bytes:
        body, cut = body[:max_bytes], True
    if text_kind(media_type, body) is None:
        raise ToolError(
            f"{final} is {media_type or 'binary content'}, not text: browse reads HTML, "
            "plain text, JSON and XML"
        )
    return Fetched(
        url=final, media_type=media_type, charset=response.charset_encoding, body=body, cut=cut
    )
