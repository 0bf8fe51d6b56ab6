"""A browser page drives ``cadenza serve --ws``: CodeMirror + @codemirror/lsp-client 6.3.

The page (``browser/page.js``, bundled here with esbuild) runs in headless Debian Chromium,
served from a loopback origin; its LSP client connects to the WebSocket with the token, starts
a session, and the agent's edit arrives as ``workspace/applyEdit`` and lands in the editor's
document (the file on disk is untouched). The model is the scripted server in its own process.
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.support.fake_openai import call, text
from tests.thirdparty.scripted_model import ScriptedModel

REPO = Path(__file__).resolve().parents[2]
MODULES = REPO / ".thirdparty" / "node_modules"
CHROMIUM = Path("/usr/bin/chromium")
WAIT_S = 40.0
TOKEN = "page-token"


def _missing() -> str | None:
    if not (MODULES / "@codemirror" / "lsp-client").exists():
        return "@codemirror/lsp-client is not installed: run scripts/thirdparty.sh"
    if not (MODULES / ".bin" / "esbuild").exists():
        return "esbuild is not installed: run scripts/thirdparty.sh"
    if not CHROMIUM.exists():
        return "chromium is not installed: run scripts/chromium.sh"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    """The bundled page, served over HTTP from 127.0.0.1 (a loopback origin)."""
    folder = tmp_path / "site"
    folder.mkdir()
    source = Path(__file__).parent / "browser" / "page.js"
    bundle = ["--bundle", "--format=iife", f"--outfile={folder / 'page.js'}", "--log-level=error"]
    subprocess.run(
        [str(MODULES / ".bin" / "esbuild"), str(source), *bundle],
        env={**os.environ, "NODE_PATH": str(MODULES)},
        check=True,
        timeout=120,
    )
    (folder / "index.html").write_text('<!doctype html><body><script src="page.js"></script>')

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    httpd.shutdown()
    httpd.server_close()


async def test_page_starts_a_session_and_the_edit_lands_in_the_editor(
    tmp_path: Path, site: str
) -> None:
    from playwright.async_api import async_playwright

    root = tmp_path / "ws"
    root.mkdir()
    path = root / "a.py"
    path.write_text("x = 1\n")
    edit = {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CADENZA_", "XDG_"))}
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        (home / name.lower()).mkdir(parents=True)
        env[name] = str(home / name.lower())
    port = free_port()
    with ScriptedModel(tmp_path / "model", [call("edit_file", edit, "e1"), text("done")]) as model:
        env.update(OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="k", CADENZA_SERVE_TOKEN=TOKEN)
        server = subprocess.Popen(
            [sys.executable, "-m", "cadenza", "serve", "--ws", f"127.0.0.1:{port}"],
            env=env,
            stdin=subprocess.DEVNULL,
        )
        query = urlencode(
            {
                "ws": f"ws://127.0.0.1:{port}/?token={TOKEN}",
                "root": root.as_uri(),
                "uri": path.as_uri(),
                "text": "x = 1\n",
                "task": "set x to 2",
            }
        )
        try:
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(
                    executable_path=str(CHROMIUM),
                    headless=True,
                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
                )
                page = await browser.new_page()
                await asyncio.sleep(1.0)  # the server binds its port
                await page.goto(f"{site}?{query}")
                await page.wait_for_function(
                    "() => window.cadenza && (window.cadenza.error || window.cadenza.updates"
                    ".some(u => u.sessionUpdate === 'session_end'))",
                    timeout=WAIT_S * 1000,
                )
                state = await page.evaluate(
                    "() => ({error: window.cadenza.error, sessionId: window.cadenza.sessionId,"
                    " edits: window.cadenza.edits.length,"
                    " kinds: window.cadenza.updates.map(u => u.sessionUpdate),"
                    " stop: (window.cadenza.updates.at(-1) || {}).stopReason,"
                    " doc: window.cadenza.view && window.cadenza.view.state.doc.toString()})"
                )
                await browser.close()
        finally:
            server.kill()
            server.wait(WAIT_S)
    assert state["error"] is None, state
    assert state["sessionId"]
    assert state["edits"] == 1
    assert state["stop"] == "end_turn"
    assert state["doc"] == "x = 2\n"  # the editor's document changed
    assert path.read_text() == "x = 1\n"  # the disk did not
    assert "tool_call" in state["kinds"]
