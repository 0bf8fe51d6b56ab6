"""Keep API keys out of everything that leaves the process.

Keys come only from the environment (never from config files). A server may still echo one
back, e.g. a 401 body quoting the ``Authorization`` header, a command may print one, a file may
hold one; so every text Cadenza sends or prints (provider errors, tool results, session
updates, diffs, summaries, transcripts) goes through ``redact``, and the HTTP libraries' loggers
get a filter that rewrites any record that would carry a registered key.

Redaction comes before any cut: a text cut first may end inside a key, which then no longer
matches and leaks all but its tail. ``redact_then_cut`` does both in that order; a text that
arrives already cut (the head and tail kept of a command's output) goes through
``redact_piece``, which also masks a key's head at a cut end and its tail at a cut start.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 6
"""Shorter values are not treated as secrets: replacing them would mangle ordinary text."""
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
FRAGMENT_CHARS = 3
"""A key's head or tail at a cut of at least this many characters is masked (``redact_piece``)."""


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
    """``text`` with every registered secret replaced by ``[redacted]``."""
    for secret in _registered():
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


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
        cut_after: Text was dropped after it: a key's first characters at its end are masked.
    """
    text = redact(text)
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
        with _lock:
            empty = not _secrets
        if empty:
            return True
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
