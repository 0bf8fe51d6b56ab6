"""``browse_interactive``: a real browser the model drives and a person can take over.

Modules: ``sessions`` (the per-session browser and its browser sessions), ``detect`` (does a
page need a person?), ``reading`` (what the model reads of a page) and ``tool`` (the tool
itself). Its settings (``BrowserSettings``, finding chromium) live with the configuration, in
``cadenza.config.browser``.

The names below are loaded on first use (PEP 562), so that importing the package loads neither
the tool nor its dependencies.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cadenza.tools.browser.sessions import BrowserSession, BrowserSessions
    from cadenza.tools.browser.tool import BrowseInteractive, BrowseInteractiveArgs

__all__ = [
    "BrowseInteractive",
    "BrowseInteractiveArgs",
    "BrowserSession",
    "BrowserSessions",
]

_HOMES = {
    "BrowseInteractive": "tool",
    "BrowseInteractiveArgs": "tool",
    "BrowserSession": "sessions",
    "BrowserSessions": "sessions",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
