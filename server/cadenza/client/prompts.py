"""Answering the server: questions, message requests, permissions, and edits to confirm.

A :class:`Prompter` answers ``cadenza/askUser`` and ``window/showMessageRequest`` with the
answer, or None when the person declines (or cannot be asked: ``--yes``, or stdin is not a
terminal); it answers ``cadenza/requestPermission`` from its :class:`PermissionPolicy` (the
run's ``--allow``/``--deny``), else by asking the person to pick one of the request's options
(a prompter that cannot ask declines: the request is answered ``cancelled``); and it decides on
edits that need confirmation (review mode ``confirm``): shown as a
unified diff and answered yes or no; ``--yes`` accepts every edit, a prompter that cannot ask
declines them. The terminal prompter reads in a daemon thread so the event loop keeps serving
the server meanwhile, and a prompt left open when the process exits (Ctrl-C) does not keep it
alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar

from rich.console import Console
from rich.prompt import Prompt

from cadenza.client.display import print_diffs
from cadenza.client.edits import EditReview
from cadenza.client.permissions import PermissionAsk, PermissionPolicy
from cadenza.client.safe_text import line_markup, visible_markup
from cadenza.schema.requests import AskUserParams, PermissionOption

T = TypeVar("T")

REVIEW_DIFF_LINES = 200
"""Longest diff shown per file when an edit is reviewed (lines)."""


class Prompter(Protocol):
    """Asks the person; None means declined.

    Attributes:
        permissions: The run's ``--allow`` / ``--deny`` rules (they answer some requests).
    """

    permissions: PermissionPolicy

    async def ask(self, request: AskUserParams) -> str | None:
        """Answer a ``cadenza/askUser`` question (free text, or one of ``request.options``)."""
        ...

    async def choose(self, message: str, actions: Sequence[str]) -> str | None:
        """Pick one of ``actions`` for a ``window/showMessageRequest`` (None: dismissed)."""
        ...

    async def permit(self, ask: PermissionAsk) -> PermissionOption | None:
        """Pick one of the options of a ``cadenza/requestPermission`` (None: cancelled)."""
        ...

    async def confirm_edit(self, review: EditReview) -> bool:
        """Whether to apply an edit that needs confirmation (its diff is in ``review``)."""
        ...


class DecliningPrompter:
    """Declines every question: for ``--yes``, scripts, and stdin that is not a terminal.

    Args:
        accept_edits: Accept edits that need confirmation (``--yes``); otherwise they are
            declined like questions (nobody can review them).
        permissions: Answers permission requests of the tools it names (``--allow``); the
            others are declined (``cancelled``, as a dismissed prompt).
    """

    def __init__(
        self, *, accept_edits: bool = False, permissions: PermissionPolicy | None = None
    ) -> None:
        self.accept_edits = accept_edits
        self.permissions = permissions or PermissionPolicy()

    async def ask(self, request: AskUserParams) -> str | None:
        """Always None (declined)."""
        return None

    async def choose(self, message: str, actions: Sequence[str]) -> str | None:
        """Always None (dismissed)."""
        return None

    async def permit(self, ask: PermissionAsk) -> PermissionOption | None:
        """The policy's option for the request's tool; otherwise None (cancelled).

        A request about a protected path is always declined: only a person may allow it.
        """
        return ask.decided_by(self.permissions)

    async def confirm_edit(self, review: EditReview) -> bool:
        """``accept_edits``."""
        return self.accept_edits


async def _in_daemon_thread(func: Callable[[], T]) -> T:
    """Run blocking ``func`` in a daemon thread and await its result."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        try:
            result = func()
        except BaseException as exc:  # handed to the awaiting task, not swallowed
            loop.call_soon_threadsafe(deliver, None, exc)
        else:
            loop.call_soon_threadsafe(deliver, result, None)

    threading.Thread(target=work, name="cadenza-prompt", daemon=True).start()
    return await future


class TerminalPrompter:
    """Asks on the terminal with rich's :class:`~rich.prompt.Prompt`, one question at a time.

    Args:
        console: Where to ask.
        pause: Returns a context manager that suspends the live display while a prompt is
            open (a rich ``Live`` and a prompt cannot share the terminal).
        permissions: Answers permission requests of the tools it names without asking.
    """

    def __init__(
        self,
        console: Console,
        pause: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
        permissions: PermissionPolicy | None = None,
    ) -> None:
        self.console = console
        self.pause = pause
        self.permissions = permissions or PermissionPolicy()
        self._lock = asyncio.Lock()

    async def ask(self, request: AskUserParams) -> str | None:
        """Ask the question; an empty answer or end of input declines."""
        question = visible_markup(request.question)
        if request.why_no_default:
            question = f"{question}\n[dim]({visible_markup(request.why_no_default)})[/dim]"
        return await self._prompt(question, request.options or None)

    async def choose(self, message: str, actions: Sequence[str]) -> str | None:
        """Offer the actions (an empty answer dismisses)."""
        return await self._prompt(visible_markup(message), list(actions) or None)

    async def permit(self, ask: PermissionAsk) -> PermissionOption | None:
        """The policy's option for the request's tool, else ask with the options' names.

        An empty answer or end of input cancels.
        """
        decided = ask.decided_by(self.permissions)
        if decided is not None:
            return decided
        options = ask.params.options
        names = [option.name for option in options]
        answer = await self._prompt(line_markup(ask.question()), names or None)
        return next((option for option in options if option.name == answer), None)

    async def confirm_edit(self, review: EditReview) -> bool:
        """Print the edit's unified diff, then ask ``Apply this change? [y/n]``.

        ``y``/``yes`` applies; anything else, an empty answer or end of input declines.
        """

        def show_and_read() -> str | None:
            title = review.description or review.label
            self.console.print(f"[bold cyan]?[/] [bold]{line_markup(title)}[/]", soft_wrap=True)
            print_diffs(self.console, review.changes, max_lines=REVIEW_DIFF_LINES)
            try:
                answer = Prompt.ask(
                    "Apply this change?",
                    console=self.console,
                    choices=["y", "n"],
                    default="n",
                )
            except EOFError:
                return None
            return answer.strip().lower()

        async with self._lock:
            with self.pause():
                answer = await _in_daemon_thread(show_and_read)
        return answer in ("y", "yes")

    async def _prompt(self, question: str, choices: list[str] | None) -> str | None:
        def read() -> str | None:
            if choices:
                listed = ", ".join(f"{i}. {line_markup(c)}" for i, c in enumerate(choices, 1))
                question_text = f"[bold cyan]?[/] {question}\n  {listed} (number or name)"
            else:
                question_text = f"[bold cyan]?[/] {question}"
            while True:
                try:
                    answer = Prompt.ask(
                        question_text, console=self.console, default="", show_default=False
                    ).strip()
                except EOFError:
                    return None
                if not answer or not choices:  # an empty line declines
                    return answer or None
                if (picked := pick_choice(answer, choices)) is not None:
                    return picked
                last = len(choices)
                self.console.print(
                    f"[yellow]Please answer with a number from 1 to {last}, or a name.[/]"
                )

        async with self._lock:
            with self.pause():
                return await _in_daemon_thread(read)


def pick_choice(answer: str, choices: list[str]) -> str | None:
    """The choice ``answer`` names: its number, its name, or the start of only one name."""
    if answer.isdigit() and 1 <= int(answer) <= len(choices):
        return choices[int(answer) - 1]
    lowered = answer.lower()
    exact = [c for c in choices if c.lower() == lowered]
    starting = [c for c in choices if c.lower().startswith(lowered)]
    if exact:
        return exact[0]
    return starting[0] if len(starting) == 1 else None
