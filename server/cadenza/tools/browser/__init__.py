"""``browse_interactive``: a real browser the model drives and a person can take over.

Modules: ``settings`` (``BrowserSettings``, finding chromium), ``sessions`` (the per-session
browser and its browser sessions), ``detect`` (does a page need a person?), ``reading`` (what the
model reads of a page) and ``tool`` (the tool itself).
"""

from cadenza.tools.browser.sessions import BrowserSession, BrowserSessions
from cadenza.tools.browser.settings import BrowserSettings, find_chromium
from cadenza.tools.browser.tool import BrowseInteractive, BrowseInteractiveArgs

__all__ = [
    "BrowseInteractive",
    "BrowseInteractiveArgs",
    "BrowserSession",
    "BrowserSessions",
    "BrowserSettings",
    "find_chromium",
]
