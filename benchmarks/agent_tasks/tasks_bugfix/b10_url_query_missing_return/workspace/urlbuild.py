"""Build request URLs for the partner API: base URL, path segments, query parameters.

Query values follow the API's conventions: booleans are ``true``/``false``, dates ISO
8601, several values for one parameter are joined with commas (``status=open,paid``),
and a parameter whose value is None is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from urllib.parse import quote, urlencode


def join_path(base: str, *segments: object) -> str:
    """``base`` with ``segments`` appended, one slash between each.

    Each segment is percent-encoded whole, so a slash inside an id cannot add a level.
    """
    encoded = "/".join(quote(str(s), safe="") for s in segments)
    if not encoded:
        return base
    return f"{base.rstrip('/')}/{encoded}"


def query_value(value: object) -> str | None:
    """The text of one query value, or None when the parameter is to be left out."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        ",".join(str(query_value(v)) for v in value)
    return str(value)


def query_string(params: Mapping[str, object]) -> str:
    """``params`` as a query string (without ``?``), names in alphabetical order."""
    pairs = [(name, query_value(params[name])) for name in sorted(params)]
    kept = [(name, text) for name, text in pairs if text is not None]
    return urlencode(kept, quote_via=quote, safe=",")


def build_url(base: str, *segments: object, **params: object) -> str:
    """The full URL of an API call: ``build_url(BASE, "orders", 42, expand=True)``."""
    url = join_path(base, *segments)
    query = query_string(params)
    return f"{url}?{query}" if query else url
