"""A small website on 127.0.0.1 for the browse tools: real HTTP, stdlib ``http.server``.

Pages:

- ``/article``: an HTML article between navigation, a script, a style and a footer.
- ``/plain.txt``, ``/data.json``: text and JSON.
- ``/image.png``: a few PNG bytes (not text).
- ``/redirect``: 302 to ``/article``.
- ``/large?kb=N``: an HTML page of about N KiB of distinct paragraphs (default 300).
- ``/slow?s=N``: plain text after N seconds (default 2).
- ``/form``: a search form (``input#q``, ``button#go``) that GETs ``/search?q=…``, a button
  that changes the page with script, and a link to ``/article``.
- ``/challenge``: a browser check page titled "Just a moment...".
- ``/account``: a login form (``input[name=user]``, ``input[type=password]``, submit) unless
  the session cookie is set; then "Welcome, <user>" and the secret text ``SECRET``.
- ``POST /login``: with a user and ``PASSWORD`` sets the session cookie and redirects to
  ``/account``; anything else shows the form again with "Wrong password".
- anything else: 404.

Every request's path and User-Agent are recorded in ``requests``.
"""

from __future__ import annotations

import html
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PASSWORD = "correct horse"
SECRET = "The launch code is 0000."
ARTICLE_SENTENCES = (
    "Cadenza reads web pages as text so the model can follow documentation.",
    "Readable text keeps the paragraphs and drops the navigation around them.",
    "A third paragraph explains that tables and links may matter too.",
)
SCRIPT_MARKER = "scriptMarkerShouldNeverAppear"

ARTICLE = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>How Cadenza reads pages</title>
<style>.nav {{ color: red; }} /* styleMarker */</style>
<script>var x = "{SCRIPT_MARKER}"; console.log(x);</script>
</head><body>
<nav class="nav"><a href="/">Home</a> | <a href="/about">About</a> | <a href="/blog">Blog</a></nav>
<main><article>
<h1>How Cadenza reads pages</h1>
<p>{ARTICLE_SENTENCES[0]} It does not need a browser for that, only an HTTP client and an
extractor that knows what the main content of a page is.</p>
<p>{ARTICLE_SENTENCES[1]} Menus, cookie banners and footers are noise for a model that reads
documentation while it writes code, and they cost context.</p>
<p>{ARTICLE_SENTENCES[2]} See the <a href="/plain.txt">plain text notes</a> for details.</p>
<table><tr><th>Tool</th><th>Kind</th></tr><tr><td>browse</td><td>fetch</td></tr></table>
</article></main>
<footer>Copyright footer text</footer>
<script>document.title = document.title;</script>
</body></html>
"""

PLAIN = "Plain notes.\nLine two of the plain text.\n"
JSON_BODY = '{"name": "cadenza", "tools": ["browse", "browse_interactive"]}'
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 32

FORM = """<!doctype html>
<html><head><title>Search form</title></head><body>
<h1>Search the docs</h1>
<form action="/search" method="get">
<label for="q">Query</label> <input id="q" name="q" type="text" placeholder="search words">
<button id="go" type="submit">Search</button>
</form>
<button id="change" type="button"
 onclick="document.getElementById('out').textContent = 'Button was clicked'">Change</button>
<p id="out">Nothing clicked yet</p>
<a href="/article">Read the article</a>
</body></html>
"""

CHALLENGE = """<!doctype html>
<html><head><title>Just a moment...</title></head><body>
<p>Checking your browser before accessing the site.</p>
</body></html>
"""


def _login_form(message: str = "") -> str:
    note = f'<p class="error">{html.escape(message)}</p>' if message else ""
    return f"""<!doctype html>
<html><head><title>Sign in</title></head><body>
<h1>Sign in to your account</h1>{note}
<form action="/login" method="post">
<label>User <input name="user" type="text"></label>
<label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button>
</form>
</body></html>
"""


def _welcome(user: str) -> str:
    return f"""<!doctype html>
<html><head><title>Your account</title></head><body>
<h1>Welcome, {html.escape(user)}</h1>
<p>{SECRET}</p>
</body></html>
"""


def _results(words: str) -> str:
    title = "<html><head><title>Results</title></head>"
    return f"{title}<body><h1>Results for {html.escape(words)}</h1></body></html>"


def _large(kib: int) -> str:
    paragraphs: list[str] = []
    size = 0
    while size < kib * 1024:
        n = len(paragraphs) + 1
        paragraph = f"<p>Paragraph {n} says something new: item {n} of the large page, " + (
            f"with words {n * 7}, {n * 11} and {n * 13} to keep it unlike the others.</p>\n"
        )
        paragraphs.append(paragraph)
        size += len(paragraph)
    body = "".join(paragraphs)
    head = "<!doctype html><html><head><title>Large page</title></head>"
    return f"{head}<body><article>{body}</article></body></html>"


HTML = "text/html; charset=utf-8"
STATIC: dict[str, tuple[str, str | bytes]] = {
    "/article": (HTML, ARTICLE),
    "/plain.txt": ("text/plain; charset=utf-8", PLAIN),
    "/data.json": ("application/json", JSON_BODY),
    "/image.png": ("image/png", PNG),
    "/form": (HTML, FORM),
    "/challenge": (HTML, CHALLENGE),
}


class TestSite:
    """The server; use as a context manager or call ``start``/``stop``."""

    __test__ = False  # not a pytest test class

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []
        """``(path, user agent)`` of every request, in order."""
        self.sessions: dict[str, str] = {}
        """Session cookie → user name."""
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The TCP port on 127.0.0.1."""
        return int(self._httpd.server_address[1])

    def url(self, path: str) -> str:
        """The absolute URL of ``path``."""
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> TestSite:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> TestSite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, path: str, agent: str) -> None:
        with self._lock:
            self.requests.append((path, agent))

    def _user(self, cookie_header: str) -> str | None:
        for part in cookie_header.split(";"):
            name, _, value = part.strip().partition("=")
            if name == "session":
                with self._lock:
                    return self.sessions.get(value)
        return None

    def _login(self, form: dict[str, list[str]]) -> str | None:
        """A new session cookie for a right user and password, else None."""
        user = form.get("user", [""])[0]
        if not user or form.get("password", [""])[0] != PASSWORD:
            return None
        token = secrets.token_hex(8)
        with self._lock:
            self.sessions[token] = user
        return token

    def _page(
        self, path: str, query: dict[str, list[str]], cookie: str
    ) -> tuple[int, str, str | bytes]:
        """``(status, content type, body)`` of a GET."""
        if path in STATIC:
            return 200, *STATIC[path]
        if path == "/slow":
            time.sleep(float(query.get("s", ["2"])[0]))
            return 200, "text/plain", "finally"
        if path == "/large":
            return 200, HTML, _large(int(query.get("kb", ["300"])[0]))
        if path == "/search":
            return 200, HTML, _results(query.get("q", [""])[0])
        if path == "/account":
            user = self._user(cookie)
            return 200, HTML, _welcome(user) if user else _login_form()
        return (
            404,
            HTML,
            "<html><head><title>Not found</title></head><body>No such page</body></html>",
        )

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site._record(self.path, self.headers.get("User-Agent", ""))
                parts = urlsplit(self.path)
                if parts.path == "/redirect":
                    self._redirect("/article")
                    return
                cookie = self.headers.get("Cookie", "")
                status, content_type, body = site._page(parts.path, parse_qs(parts.query), cookie)
                self._send(status, content_type, body)

            def do_POST(self) -> None:
                site._record(self.path, self.headers.get("User-Agent", ""))
                length = int(self.headers.get("Content-Length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                token = site._login(form) if self.path == "/login" else None
                if token is None:
                    self._send(200, HTML, _login_form("Wrong password"))
                else:
                    self._redirect("/account", cookie=f"session={token}; Path=/; HttpOnly")

            def _redirect(self, location: str, cookie: str | None = None) -> None:
                self.send_response(302)
                self.send_header("Location", location)
                if cookie:
                    self.send_header("Set-Cookie", cookie)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _send(self, status: int, content_type: str, body: str | bytes) -> None:
                data = body.encode() if isinstance(body, str) else body
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading (the size cap)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
