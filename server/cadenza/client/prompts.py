"""Answering the server's questions: ``cadenza/askUser`` and ``window/showMessageRequest``.

A :class:`Prompter` gets the question and returns the answer, or None when the person declines
(or cannot be asked: ``--yes``, or stdin is not a terminal). The terminal prompter reads in a
daemon thread so the event loop keeps serving the server meanwhile, and a prompt left open when
the process exits (Ctrl-C) does not keep it alive.
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

from cadenza.client.wire import AskUserParams

T = TypeVar("T")


class Prompter(Protocol):
    """Asks the person; None means declined."""

    async def ask(self, request: AskUserParams) -> str | None:
        """Answer a ``cadenza/askUser`` question (free text, or one of ``request.options``)."""
        ...

    async def choose(self, message: str, actions: Sequence[str]) -> str | None:
        """Pick one of ``actions`` for a ``window/showMessageRequest`` (None: dismissed)."""
        ...


class DecliningPrompter:
    """Declines everything: for ``--yes``, scripts, and stdin that is not a terminal."""

    async def ask(self, request: AskUserParams) -> str | None:
        """Always None (declined)."""
        return None

    async def choose(self, message: str, actions: Sequence[str]) -> str | None:
        """Always None (dismissed)."""
        return None


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
    """

    def __init__(
        self,
        console: Console,
        pause: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> None:
        self.console = console
        self.pause = pause
        self._lock = asyncio.Lock()

    async def ask(self, request: AskUserParams) -> str | None:
        """Ask the question; an empty answer or end of input declines."""
        question = request.question
        if request.why_no_default:
            question = f"{question}\n[dim]({request.why_no_default})[/dim]"
        return await self._prompt(question, request.options or None)

    async def choose(self, message: str, actions: Sequence[str]) -> str | None:
        """Offer the actions; an empty answer or end of input dismisses."""
        return await self._prompt(message, list(actions) or None)

    async def _prompt(self, question: str, choices: list[str] | None) -> str | None:
        def read() -> str | None:
            try:
                answer = Prompt.ask(
                    f"[bold cyan]?[/] {question}",
                    console=self.console,
                    choices=choices,
                    default="",  # an empty line declines; rich returns the default unchecked
                    show_default=False,
                )
            except EOFError:
                return None
            return answer.strip() or None

        async with self._lock:
            with self.pause():
                return await _in_daemon_thread(read)
