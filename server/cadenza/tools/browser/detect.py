"""Does the page need a person? Login forms and bot challenges, seen in the live page.

After ``open``, ``click`` and ``type`` the interactive browse tool asks the page (in every
frame, through the DOM, never regexes over HTML) whether it shows:

- a bot challenge: a visible CAPTCHA widget or frame (Google reCAPTCHA, hCaptcha, Cloudflare
  Turnstile, a generic ``captcha`` frame, Cloudflare's challenge form), or a title such as
  "Just a moment..." or "Attention Required!"; an invisible reCAPTCHA v3 frame does not count;
- a login form: a visible ``input[type=password]``.

Either one means the model cannot go on alone: the tool then waits for a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

CHALLENGE_SELECTORS: dict[str, str] = {
    'iframe[src*="recaptcha"]:not([src*="size=invisible"])': "a reCAPTCHA",
    ".g-recaptcha": "a reCAPTCHA",
    'iframe[src*="hcaptcha.com"]': "an hCaptcha",
    ".h-captcha": "an hCaptcha",
    'iframe[src*="challenges.cloudflare.com"]': "a Cloudflare Turnstile check",
    ".cf-turnstile": "a Cloudflare Turnstile check",
    "#challenge-form": "a Cloudflare browser check",
    "#challenge-running": "a Cloudflare browser check",
    'iframe[src*="captcha"]:not([src*="size=invisible"])': "a CAPTCHA",
}
"""CSS selector of a visible challenge element → what it is, checked in order."""

CHALLENGE_TITLES = (
    "just a moment",
    "attention required",
    "verify you are human",
    "are you a robot",
    "checking your browser",
    "human verification",
    "security check",
)
"""Lower-case parts of page titles that challenge pages use."""

_SCAN = """(selectors) => {
  const visible = (el) => {
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  };
  const shown = (selector) => Array.from(document.querySelectorAll(selector)).some(visible);
  return {
    challenge: selectors.find(shown) || null,
    password: shown('input[type=password]'),
  };
}"""

MAX_CHILD_FRAMES = 10
MAIN_FRAME_WAIT_S = 5.0
CHILD_FRAME_WAIT_S = 1.0
"""Seconds to wait for a frame's answer (child frames are scanned at the same time)."""


@dataclass(frozen=True, kw_only=True)
class Obstacle:
    """Why a person must act on the page.

    Attributes:
        kind: ``challenge`` (CAPTCHA, browser check) or ``login``.
        evidence: What the page shows, e.g. ``a reCAPTCHA`` or ``a password field``.
    """

    kind: Literal["challenge", "login"]
    evidence: str


async def _scan_frame(frame: Frame, wait_s: float, answers: list[dict[str, Any]]) -> None:
    """Append the scan's answer in ``frame``; a frame that fails or does not answer is skipped.

    Evaluating in a frame can hang (a frame still loading, or never getting a script context),
    so each frame has ``wait_s`` seconds.
    """
    with anyio.move_on_after(wait_s):
        try:
            answer = await frame.evaluate(_SCAN, list(CHALLENGE_SELECTORS))
        except PlaywrightError:
            return  # detached or navigating: nothing to see there
        if isinstance(answer, dict):
            answers.append(answer)


async def _scan_children(page: Page) -> list[dict[str, Any]]:
    """The scan's answers in the page's child frames, scanned at the same time."""
    answers: list[dict[str, Any]] = []
    children = [frame for frame in page.frames if frame is not page.main_frame]
    async with anyio.create_task_group() as group:
        for frame in children[:MAX_CHILD_FRAMES]:
            group.start_soon(_scan_frame, frame, CHILD_FRAME_WAIT_S, answers)
    return answers


def _challenge(answers: list[dict[str, Any]]) -> Obstacle | None:
    for answer in answers:
        selector = answer.get("challenge")
        if isinstance(selector, str) and selector in CHALLENGE_SELECTORS:
            return Obstacle(kind="challenge", evidence=CHALLENGE_SELECTORS[selector])
    return None


async def find_obstacle(page: Page) -> Obstacle | None:
    """What the person must get the page past, or None when the model can go on alone."""
    try:
        title = (await page.title()).strip()
    except PlaywrightError:
        title = ""
    lowered = title.lower()
    if any(part in lowered for part in CHALLENGE_TITLES):
        return Obstacle(kind="challenge", evidence=f"the title {title!r}")
    answers: list[dict[str, Any]] = []
    await _scan_frame(page.main_frame, MAIN_FRAME_WAIT_S, answers)
    obstacle = _challenge(answers)
    if obstacle is not None:
        return obstacle
    answers += await _scan_children(page)
    obstacle = _challenge(answers)
    if obstacle is None and any(answer.get("password") for answer in answers):
        obstacle = Obstacle(kind="login", evidence="a password field")
    return obstacle
