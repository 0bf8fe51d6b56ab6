"""Provider failures as one sentence a person can act on: what happened, then the fix.

A model server's error body is JSON most of the time (OpenAI ``{"error": {"message"}}``,
Anthropic ``{"type": "error", "error": {"message"}}``); only its message is kept, never the raw
body. The fix depends on the status: 401/403 the API key (the provider's key variable, e.g.
``OPENAI_API_KEY``), 404 the model name or the base URL, 429 waiting or the quota, 5xx trying
later; a refused connection names the address and how to point Cadenza elsewhere.
"""

from __future__ import annotations

import json

import httpx

from cadenza.providers.presets import PRESETS
from cadenza.secrets import redact_then_cut

MESSAGE_CHARS = 300
"""The server's own message is cut after this many characters."""


def _key_variable(who: str) -> str:
    """The environment variable holding the API key of ``who``'s provider (``PROVIDER/MODEL``)."""
    preset = PRESETS.get(who.partition("/")[0])
    return preset.api_key_env if preset is not None and preset.api_key_env else "the API key"


def server_message(body: str) -> str:
    """The message inside an error body (JSON or text), one line, redacted, bounded; or ""."""
    text = body.strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data)
        found = error.get("message") if isinstance(error, dict) else error
        if not isinstance(found, str):
            found = data.get("message") if isinstance(data.get("message"), str) else ""
        text = str(found or "")
    elif data is not None:
        text = ""
    text = " ".join(text.split())
    if text.lstrip().startswith(("<", "{", "[")):  # an HTML page or unreadable JSON
        return ""
    # Redacted before it is cut: a key echoed past the cut would no longer match whole.
    return redact_then_cut(text, MESSAGE_CHARS - 1)


def status_sentence(who: str, status: int, body: str, attempts: int = 1) -> str:
    """A readable sentence for an HTTP error ``status`` of ``who`` (``PROVIDER/MODEL``).

    ``attempts``: how many calls got it (said when more than one).
    """
    said = server_message(body)
    detail = f"HTTP {status}: {said}" if said else f"HTTP {status}"
    if attempts > 1:
        detail += f"; {attempts} attempts"
    model = who.partition("/")[2] or who
    if status in (401, 403):
        key = _key_variable(who)
        fix = f"set {key} to a valid key" if key != "the API key" else "check its API key"
        return f"{who}: the model server refused the API key ({detail}); {fix}."
    if status == 404:
        return (
            f"{who}: the model server does not know the model {model!r} or the address is "
            f"wrong ({detail}); choose another model or check the provider's base URL."
        )
    if status == 429:
        return (
            f"{who}: the model server's rate limit or quota was reached ({detail}); wait a "
            "minute and try again, or check the account's quota."
        )
    if status >= 500:
        return f"{who}: the model server failed ({detail}); try again later."
    return f"{who}: the model server refused the request ({detail})."


def transport_sentence(who: str, exc: Exception, attempts: int = 1) -> str | None:
    """A readable sentence for a connection failure; None for other failures."""
    if not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return None
    try:
        url = exc.request.url
        where = f"{url.scheme}://{url.host}" + (f":{url.port}" if url.port else "")
    except RuntimeError:  # no request attached
        where = "the model server"
    if isinstance(exc, httpx.ConnectTimeout):
        what = f"cannot reach {where} (the connection timed out)"
    else:
        what = f"cannot connect to {where} (ConnectError: {exc or 'connection refused'})"
    if attempts > 1:
        what += f" after {attempts} attempts"
    return (
        f"{who}: {what}; start the model server, or set the provider's base URL "
        "(e.g. OPENAI_BASE_URL)."
    )
