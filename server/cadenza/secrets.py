"""Keep API keys out of errors and logs.

Keys come only from the environment (never from config files). A server may still echo one
back, e.g. a 401 body quoting the ``Authorization`` header, and httpcore's debug log prints
response headers; so every provider error text goes through ``redact``, and the HTTP libraries'
loggers get a filter that rewrites any record that would carry a registered key.
"""

from __future__ import annotations

import functools
import logging
import os
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
    """Register the values of ``KNOWN_KEY_ENV`` (once per process).

    A provider registers its own key when it is created; a tool's output (``run_command env``)
    may still print the key of a provider no session uses.
    """
    for name in KNOWN_KEY_ENV:
        secret_from_env(name)


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``[redacted]``."""
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
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


def _install_filter() -> None:
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    for name in HTTP_LOGGERS:
        logging.getLogger(name).addFilter(_FILTER)
