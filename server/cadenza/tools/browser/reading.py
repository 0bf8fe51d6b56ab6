"""What the model reads of a live page: title, URL, visible text, controls and links.

The text is the rendered ``innerText`` of the page (what a person sees, scripts and hidden
elements excluded), bounded. Controls (inputs, text areas, selects, buttons) and links come with
a selector the model can pass to ``click`` or ``type``: ``#id``, ``tag[name="…"]``, a
Playwright text selector such as ``button:has-text("Sign in")``, or ``tag >> nth=N``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from cadenza.secrets import redact

MAX_CONTROLS = 30
MAX_LINKS = 40
VIEW_WAIT_S = 10.0
"""Seconds to wait for the page to answer (a page busy navigating may not)."""

_VIEW = r"""(limits) => {
  const visible = (el) => {
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  };
  const clean = (s) => (s || '').replace(/\s+/g, ' ').trim().slice(0, 80);
  const quote = (v) => '"' + v.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
  const unique = (selector) => {
    try { return document.querySelectorAll(selector).length === 1; } catch (e) { return false; }
  };
  const selectorOf = (el) => {
    const tag = el.tagName.toLowerCase();
    if (el.id && unique('#' + CSS.escape(el.id))) return '#' + CSS.escape(el.id);
    for (const attr of ['name', 'aria-label', 'placeholder', 'value']) {
      const value = el.getAttribute(attr);
      if (value && value.length <= 80) {
        const selector = tag + '[' + attr + '=' + quote(value) + ']';
        if (unique(selector)) return selector;
      }
    }
    const text = clean(el.innerText);
    if (text && (tag === 'a' || tag === 'button')) {
      const same = Array.from(document.querySelectorAll(tag)).filter(
        (other) => clean(other.innerText).includes(text));
      if (same.length === 1) return tag + ':has-text(' + quote(text) + ')';
    }
    return tag + ' >> nth=' + Array.from(document.querySelectorAll(tag)).indexOf(el);
  };
  const labelOf = (el) => clean(
    (el.labels && el.labels[0] && el.labels[0].innerText) || el.getAttribute('aria-label')
    || el.getAttribute('placeholder') || el.innerText || el.getAttribute('title'));
  const controls = [];
  const query = 'input:not([type=hidden]), textarea, select, button, [contenteditable=true]';
  for (const el of document.querySelectorAll(query)) {
    if (controls.length >= limits.controls) break;
    if (!visible(el)) continue;
    const tag = el.tagName.toLowerCase();
    const kind = tag === 'input' ? (el.getAttribute('type') || 'text').toLowerCase()
      : tag === 'button' ? (el.getAttribute('type') || 'submit').toLowerCase() + ' button' : tag;
    const secret = kind === 'password';
    const value = 'value' in el && tag !== 'button' && !secret ? clean(String(el.value)) : '';
    controls.push({selector: selectorOf(el), kind, label: labelOf(el), value,
                   disabled: !!el.disabled});
  }
  const links = [];
  const seen = new Set();
  let more = 0;
  for (const el of document.querySelectorAll('a[href]')) {
    if (!visible(el) || el.href.startsWith('javascript:')) continue;
    const text = clean(el.innerText || el.getAttribute('aria-label') || el.getAttribute('title'));
    const key = text + ' ' + el.href;
    if (seen.has(key)) continue;
    seen.add(key);
    if (links.length >= limits.links) { more += 1; continue; }
    links.push({text, href: el.href});
  }
  const root = document.body || document.documentElement;
  return {text: root ? root.innerText : '', controls, links, moreLinks: more};
}"""


@dataclass(frozen=True, kw_only=True)
class Control:
    """A visible input, text area, select or button."""

    selector: str
    kind: str
    label: str
    value: str
    disabled: bool


@dataclass(frozen=True, kw_only=True)
class PageView:
    """A page as the model reads it."""

    url: str
    title: str
    text: str
    controls: tuple[Control, ...]
    links: tuple[tuple[str, str], ...]
    more_links: int


def tidy(text: str) -> str:
    """Lines stripped on the right, runs of blank lines made one, no blank edges."""
    lines: list[str] = []
    for line in text.splitlines():
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip()


async def view(page: Page) -> PageView:
    """The page's title, URL, visible text, controls and links (empty when it cannot say)."""
    raw: Any = None
    title = ""
    with anyio.move_on_after(VIEW_WAIT_S):
        try:
            title = await page.title()
            raw = await page.evaluate(_VIEW, {"controls": MAX_CONTROLS, "links": MAX_LINKS})
        except PlaywrightError:  # navigating away right now: show what is known
            raw = None
    if not isinstance(raw, dict):
        return PageView(url=page.url, title="", text="", controls=(), links=(), more_links=0)
    controls = tuple(
        Control(
            selector=str(c["selector"]),
            kind=str(c["kind"]),
            label=str(c["label"]),
            value=str(c["value"]),
            disabled=bool(c["disabled"]),
        )
        for c in raw["controls"]
    )
    links = tuple((str(link["text"]), str(link["href"])) for link in raw["links"])
    return PageView(
        url=page.url,
        title=title,
        text=tidy(str(raw["text"])),
        controls=controls,
        links=links,
        more_links=int(raw["moreLinks"]),
    )


def describe(
    session_id: str, page: PageView, *, done: str = "", max_chars: int, lists: bool = True
) -> str:
    """The text the model reads: where the session is, what happened, and the page.

    Args:
        session_id: The browser session's id.
        page: The page.
        done: What the action did, e.g. ``clicked #submit`` (first line after the header).
        max_chars: Most characters of page text.
        lists: Include the page's controls and links.
    """
    out = [f"browser session: {session_id}", f"url: {page.url}", f"title: {page.title or '-'}"]
    if done:
        out.append(done)
    text = redact(page.text or "(the page shows no text)")  # before it is cut
    out += ["", text[:max_chars]]
    if len(text) > max_chars:
        out.append(f"[truncated: showing {max_chars} of {len(text)} characters of page text]")
    if lists and page.controls:
        out += ["", "controls (selector, kind, label, value):"]
        for c in page.controls:
            parts = [c.selector, c.kind]
            parts += [f"label {c.label!r}"] if c.label else []
            parts += [f"value {c.value!r}"] if c.value else []
            parts += ["disabled"] if c.disabled else []
            out.append("  " + "  ".join(parts))
    if lists and page.links:
        out += ["", "links:"]
        out += [f"  {text or '(no text)'} -> {href}" for text, href in page.links]
        if page.more_links:
            out.append(f"  [{page.more_links} more links not shown]")
    return "\n".join(out)
