"""Settings of the interactive browser (``[browser]``), and where its chromium is.

Cadenza never downloads a browser: it drives the system's chromium (Debian's ``chromium``
package) through Playwright's ``executable_path``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
"""Where Debian and Ubuntu install chromium."""
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
"""Names looked up on ``PATH`` after ``CHROMIUM_PATHS``."""
INSTALL_HINT = (
    "install Debian's chromium (apt-get install chromium) or set the browser's executable_path"
)


class BrowserSettings(BaseModel):
    """How ``browse_interactive`` runs its browser.

    Attributes:
        headless: Run without a window; None: headless unless a desktop is present
            (``DISPLAY`` or ``WAYLAND_DISPLAY`` set), so a person can see the window.
        executable_path: The chromium binary; None: the first of ``CHROMIUM_PATHS`` that
            exists, else ``CHROMIUM_NAMES`` on ``PATH``.
        remote_debugging_port: When set, chromium listens for the DevTools protocol on
            127.0.0.1 at this port, so a person (``chrome://inspect``) or a test can attach to
            the same browser, e.g. to log in while the browser is headless.
        timeout_s: Seconds for one page action (navigation, click, typing).
        max_chars: Most characters of page text a ``read`` returns.
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, alias_generator=to_camel
    )

    headless: bool | None = None
    executable_path: str | None = None
    remote_debugging_port: int | None = Field(default=None, ge=1, le=65535)
    timeout_s: float = Field(default=15.0, gt=0, le=120)
    max_chars: int = Field(default=20_000, ge=1_000, le=200_000)

    def is_headless(self, environ: Mapping[str, str] | None = None) -> bool:
        """Whether the browser runs without a window."""
        if self.headless is not None:
            return self.headless
        env = os.environ if environ is None else environ
        return not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))

    def chromium(self) -> str:
        """The chromium executable to launch.

        Raises:
            FileNotFoundError: The configured path is not an executable file, or no chromium
                was found; the message says how to install one (the tool reports it).
        """
        if self.executable_path:
            path = Path(self.executable_path).expanduser()
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
            raise FileNotFoundError(
                f"no chromium executable at {self.executable_path}: {INSTALL_HINT}"
            )
        found = find_chromium()
        if found is None:
            raise FileNotFoundError(f"no chromium browser found: {INSTALL_HINT}")
        return found


def find_chromium() -> str | None:
    """The first chromium of ``CHROMIUM_PATHS`` then ``CHROMIUM_NAMES`` on ``PATH``, or None."""
    for candidate in CHROMIUM_PATHS:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None
