"""Keep API keys out of everything that leaves the process.

Keys come only from the environment (never from config files). A server may still echo one
back, e.g. a 401 body quoting the ``Authorization`` header, a command may print one, a file may
hold one; so every text Cadenza sends or prints (provider errors, tool results, session
updates, diffs, summaries, transcripts) goes through ``redact``, and the HTTP libraries' loggers
get a filter that rewrites any record that would carry a registered key.

Besides the registered values, ``redact`` hides credentials by their shape, whoever's they
are: the password of a URL (``postgres://app:[redacted]@db/app``; a long token standing alone
as a URL's user too) and the value of an environment-style assignment whose name says it holds
a secret (``PGPASSWORD=[redacted]``, ``GITHUB_PAT=[redacted]``, ``*_KEY``, ``*_TOKEN``,
``*_SECRET``, ``*_PASSWORD``, ``*_PAT``). Only upper-case names with ``=`` and no space count,
as in a shell, a ``.env`` file or a CI file: ``primary_key=True`` or ``password=password`` in
code stays readable, and a value that refers to another (``$TOKEN``, ``${{ secrets.X }}``) is
not a secret. ``cadenza.secret_shapes`` adds vendor tokens (AWS, GitHub, Slack, OpenAI,
Anthropic, Stripe, Google, JWT), private key blocks, ``Authorization`` headers and assignments
written as in code or config (``api_key = "…"``, ``"password": "…"``, ``password: …``).

Redaction comes before any cut: a text cut first may end inside a key, which then no longer
matches and leaks all but its tail. ``redact_then_cut`` does both in that order; a text that
arrives already cut (the head and tail kept of a command's output) goes through
``redact_piece``, which also masks a key's head at a cut end and its tail at a cut start. A
registered key's head that another program cut and marked with an ellipsis (pytest's summary:
``'sk-proj-AB12CD34...``) is masked by ``redact`` itself.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import threading
from typing import Any

from cadenza.secret_shapes import MIN_SECRET_LENGTH as MIN_SECRET_LENGTH
from cadenza.secret_shapes import REDACTED as REDACTED
from cadenza.secret_shapes import redact_cut_end, redact_shapes

HTTP_LOGGERS = (
    "httpx",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
)
"""The loggers httpx 0.28 / httpcore 1.x write to (a logger's filter is not inherited)."""

_lock = threading.Lock()
_secrets: set[str] = set()


_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|ACCESS_KEY|SECRET(?:_KEY)?|TOKEN|PASSWORD)$")
"""Environment variable names that hold secrets by convention (``HF_TOKEN``,
``AWS_SECRET_ACCESS_KEY``, ``GITHUB_TOKEN``, ``CADENZA_TOKEN``)."""
_URL_PASSWORD = re.compile(r"\b([a-z][a-z0-9+.-]*://[^\s:/?#@\"'<>]*):[^\s/?#\"'<>]+@", re.I)
"""``scheme://user:password@``: the password runs to the authority's last ``@``."""
_URL_TOKEN = re.compile(r"\b([a-z][a-z0-9+.-]*://)[A-Za-z0-9_-]{20,}@", re.I)
"""``https://ghp_…@github.com``: a token as the user name (a short name, ``git@``, stays)."""
_ASSIGNMENT = re.compile(
    r"(?<![\w$])([A-Z][A-Z0-9_]*)=(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^\s\"'`;&|]+))"
)
"""``NAME=value``, ``NAME="value"`` or ``NAME='value'``, the name not inside a longer word."""
_ASSIGNED_SECRET = re.compile(
    r"PASSWORD|PASSWD|SECRET|TOKEN|MYSQL_PWD|[A-Z0-9_]*(?:PASSWORD|PASSWD|APIKEY)"
    r"|[A-Z0-9_]*_(?:KEY|TOKEN|SECRET|PAT|CREDENTIALS?)"
)
"""Names of assignments whose value is hidden (matched whole): not ``KEY`` or ``MONKEY``."""
_REFERENCE = ("$", "%", "<", "{", REDACTED)
"""Assigned values that name another value rather than hold one."""
_CUT_URL_PASSWORD = re.compile(r"(://[^\s:/?#@\"'<>]*:)[^\s/?#\"'<>@]+\Z")
"""A URL's password running into a cut (no ``@`` left to end it)."""
_CUT_ASSIGNMENT = re.compile(r"(?<![\w$])([A-Z][A-Z0-9_]*)=([\"']?)[^\s\"'`;&|]+\Z")
"""An assignment's value running into a cut, its closing quote cut off too."""
FRAGMENT_CHARS = 3
"""A key's head or tail at a cut of at least this many characters is masked (``redact_piece``)."""
ELLIPSES = ("...", "…")
"""What a program that shortens a text (pytest's summary, a log formatter) puts after the cut."""
ELLIPSIS_HEAD_CHARS = 16
"""A key's head before an ellipsis is masked from this many characters on (from half of a
shorter key, and never under 8): a vendor's public prefix and its documented placeholder
(``sk-ant-api03-...``, ``github_pat_11...``, ``sk-proj-...``) stay readable."""


def register_secret(value: str | None) -> None:
    """Remember ``value`` so that ``redact`` and the log filter hide it from now on."""
    if value is None or len(value) < MIN_SECRET_LENGTH:
        return
    with _lock:
        _secrets.add(value)
    _install_filter()


def secret_from_env(name: str | None) -> str | None:
    """The value of environment variable ``name`` (None when unset or empty), registered."""
    if not name:
        return None
    value = os.environ.get(name) or None
    register_secret(value)
    return value


KNOWN_KEY_ENV = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "VLLM_API_KEY",
    "LLAMA_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "XAI_API_KEY",
    "GROK_API_KEY",
)
"""Well-known API key variables: hidden even when no provider of this process reads them."""


@functools.cache
def register_known_keys() -> None:
    """Register the values of ``KNOWN_KEY_ENV`` and of secret-named variables (once).

    A provider registers its own key when it is created; a tool's output (``run_command env``)
    may still print the key of a provider no session uses, or another credential of the
    environment (``GITHUB_TOKEN``): every variable whose name says it holds a secret
    (``_SECRET_NAME``) is registered too.
    """
    for name in KNOWN_KEY_ENV:
        secret_from_env(name)
    for name in list(os.environ):
        if _SECRET_NAME.search(name.upper()):
            secret_from_env(name)


def _registered() -> list[str]:
    with _lock:
        return sorted(_secrets, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every registered secret, and credentials by shape, as ``[redacted]``."""
    secrets = _registered()
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    if "..." in text or "…" in text:
        text = _redact_heads_before_ellipses(text, secrets)
    if "://" in text:
        text = _URL_PASSWORD.sub(rf"\1:{REDACTED}@", text)
        text = _URL_TOKEN.sub(rf"\1{REDACTED}@", text)
    if "=" in text:
        text = _ASSIGNMENT.sub(_assigned, text)
    return redact_shapes(text)


def redact_json(value: Any) -> Any:
    """Parsed JSON ``value`` with ``redact`` applied to each string in it (not to the keys)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_json(item) for key, item in value.items()}
    return value


def redact_jsonl(text: str) -> str:
    """A JSON Lines text with ``redact_json`` applied to each line; other lines ``redact`` whole.

    ``redact`` over a line's JSON text would take an escaped quote for a quote: a quoted
    assignment inside a string (``PGPASSWORD="…"``) would lose the backslash before its
    quote, keep its value, and the line would no longer be JSON. A line without a secret is
    kept byte for byte.
    """
    lines = text.split("\n")  # not splitlines: a JSON string may hold U+2028 unescaped
    for n, line in enumerate(lines):
        try:
            value = json.loads(line)
        except ValueError:
            lines[n] = redact(line)
            continue
        cleaned = redact_json(value)
        if cleaned != value:
            lines[n] = json.dumps(cleaned, ensure_ascii=False)
    return "\n".join(lines)


def _redact_heads_before_ellipses(text: str, secrets: list[str]) -> str:
    """``text`` with a registered key's head that a third party cut (``sk-proj-AB12...``) masked.

    A test runner's summary or a logger shortens a line after the key began; the head that
    is left no longer matches the key. It counts as the key when an ellipsis follows it and
    it is long enough to be no chance match (``ELLIPSIS_HEAD_CHARS``). Each key costs one
    ``str.find`` of its shortest such head over the text.
    """
    for secret in secrets:
        least = max(8, min(ELLIPSIS_HEAD_CHARS, (len(secret) + 1) // 2))
        head = secret[:least]
        at = text.find(head) if least < len(secret) else -1
        while at >= 0:
            end = at + least
            while end < len(text) and end - at < len(secret) and text[end] == secret[end - at]:
                end += 1
            if text.startswith(ELLIPSES, end):
                text = text[:at] + REDACTED + text[end:]
                end = at + len(REDACTED)
            at = text.find(head, end)
    return text


def _assigned(match: re.Match[str]) -> str:
    """An assignment with its value hidden when its name says it is a secret."""
    name = match[1]
    value = next(v for v in match.groups()[1:] if v is not None)
    if not value or value.startswith(_REFERENCE) or not _ASSIGNED_SECRET.fullmatch(name):
        return match[0]
    quote = "" if match[4] is not None else match[0][len(name) + 1]
    return f"{name}={quote}{REDACTED}{quote}"


def shown_redacted(old_text: str, new_text: str) -> str | None:
    """A line ``new_text`` adds that is a line of ``old_text`` as ``redact`` showed it, or None.

    The model edits the text it was shown: a line it copies from a read of ``old_text`` into
    its new text would write ``[redacted]`` over the secret the file holds. Lines compare
    without their spaces and quotes (a model writing the file back in a formatter's style,
    ``API_KEY = "[redacted]"`` for ``API_KEY='[redacted]'``, copies the line all the same); a
    line of ``old_text`` itself is never counted.
    """
    if REDACTED not in new_text:
        return None
    old_lines = {_bare(line) for line in old_text.splitlines()}
    added = [
        line.strip()
        for line in new_text.splitlines()
        if REDACTED in line and _bare(line) not in old_lines
    ]
    if not added:
        return None
    shown = {_bare(line) for line in redact(old_text).splitlines()} - old_lines
    return next((line for line in added if _bare(line) in shown), None)


_SPACES_AND_QUOTES = re.compile(r"[\s'\"`]+")


def _bare(line: str) -> str:
    """``line`` without spaces and quotes, as ``shown_redacted`` compares lines."""
    return _SPACES_AND_QUOTES.sub("", line)


def redact_then_cut(text: str, limit: int, marker: str = "…") -> str:
    """``text`` redacted, then cut to ``limit`` characters with ``marker`` after a cut.

    Use it wherever a text that leaves the process is shortened: cut first, a key running
    past ``limit`` would lose its end, no longer match, and leak its head.
    """
    text = redact(text)
    return text if len(text) <= limit else text[:limit] + marker


def redact_piece(text: str, *, cut_before: bool = False, cut_after: bool = False) -> str:
    """``redact`` for a piece of a longer text that was cut before Cadenza saw it whole.

    Args:
        text: The piece (e.g. the head or the tail kept of a command's output).
        cut_before: Text was dropped before the piece: a registered key's last characters
            (``FRAGMENT_CHARS`` or more) at its start are masked.
        cut_after: Text was dropped after it: a key's first characters at its end are masked,
            and so is a URL's password or a secret assignment's value the cut ends in.
    """
    text = redact(text)
    if cut_after:
        text = _CUT_URL_PASSWORD.sub(rf"\1{REDACTED}", text)
        cut = _CUT_ASSIGNMENT.search(text)
        if cut and _ASSIGNED_SECRET.fullmatch(cut[1]) and not cut[0].endswith(REDACTED):
            text = f"{text[: cut.start()]}{cut[1]}={cut[2]}{REDACTED}"
        text = redact_cut_end(text)
    for secret in _registered():
        if cut_after:
            for n in range(min(len(secret) - 1, len(text)), FRAGMENT_CHARS - 1, -1):
                if text.endswith(secret[:n]):
                    text = text[:-n] + REDACTED
                    break
        if cut_before:
            for n in range(min(len(secret) - 1, len(text)), FRAGMENT_CHARS - 1, -1):
                if text.startswith(secret[-n:]):
                    text = REDACTED + text[n:]
                    break
    return text


class RedactingFilter(logging.Filter):
    """Rewrites a record whose message contains a registered secret (never drops it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the formatted message in place; always keeps the record."""
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: leave it to the handler to report
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


_FILTER = RedactingFilter()
_installed = False


def redact_log_handlers() -> None:
    """Redact every record the root logger's handlers write (stderr, the editor's log).

    A handler's filter sees the records of every logger that propagates to it, so one filter
    per handler covers the whole process; call it once logging is configured.
    """
    for handler in logging.getLogger().handlers:
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)


def _install_filter() -> None:
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    for name in HTTP_LOGGERS:
        logging.getLogger(name).addFilter(_FILTER)
