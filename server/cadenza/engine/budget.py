"""A session's budgets besides its steps: each reply's tokens, and the run's wall time.

A reply's completion bound (``reply_tokens``, under ``LoopSettings.reply_budget`` when no
``maxTokens`` is configured) is what the largest reply the step may need holds: an edit of the
largest file in play carries up to that file's text twice (the text it replaces and the new
text), plus a call's envelope and room for code the task adds. A bound sized so, rather than a
flat one, stops a reply that wanders on long before a flat 1,024 tokens would; a reply that
needed more is cut and repaired once with twice the bound (``engine.request``).

The wall-time budget (``SessionSettings.time_budget_s``, per run like ``max_steps``) is a
``RunClock``: the loop looks at it before each step and bounds each model request by the time
left; time spent waiting for the person (a permission prompt) is not counted.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cadenza.messages import AssistantMessage, Message
from cadenza.tools.base import ToolError
from cadenza.tools.paths import resolve_in_workspace

CHARS_PER_TOKEN = 3.0
"""Characters of code per token, on the low side (Qwen's and Llama's tokenizers give 3 to 4),
so the bound errs towards room."""
CALL_TOKENS = 64
"""A call's envelope: its name, argument keys, the path and the JSON around them."""
MARGIN_TOKENS = 256
"""Room for the code a task adds beyond the file's own text (an implementation of a stub)."""
FLOOR_TOKENS = 512
"""The least bound of a reply: a call, a short file, an implementation of a few functions."""
CONTEXT_RESERVE = 0.25
"""The share of the context a reply may not take beyond what the history leaves free."""


def reply_tokens(sizes: list[int], *, free_tokens: int) -> int:
    """The completion bound of a step whose files in play have ``sizes`` (characters).

    Args:
        sizes: The characters of each file in play (primed, read, edited in the session).
        free_tokens: What the context leaves for the reply (its size minus the history).

    Returns:
        ``CALL_TOKENS`` + twice the largest file's tokens + ``MARGIN_TOKENS``, at least
        ``FLOOR_TOKENS``, at most ``free_tokens`` (but never below the floor: the server
        reports a context overflow plainly, a bound of a few tokens would only cut).
    """
    largest = max(sizes, default=0)
    wanted = CALL_TOKENS + 2 * math.ceil(largest / CHARS_PER_TOKEN) + MARGIN_TOKENS
    return max(FLOOR_TOKENS, min(wanted, free_tokens))


PATH_KEYS = ("path", "new_path")
"""Call arguments that name a workspace file."""


def files_in_play(
    root: Path, messages: list[Message], named: list[str], written: dict[Path, str]
) -> list[int]:
    """The sizes (characters) of the files the session works on.

    The files the task names (``named``, primed), each file a call of the history named (a
    read, an edit), and each file the session changed (its text as the session left it). Sizes
    of files on disk are their byte counts (a file is not read for this); a path outside the
    workspace or missing counts nothing.
    """
    sizes = {path: len(text) for path, text in written.items()}
    names = list(named)
    for message in messages:
        if isinstance(message, AssistantMessage):
            names += [name for call in message.tool_calls for name in _paths(call.arguments)]
    for name in dict.fromkeys(names):
        try:
            path = resolve_in_workspace(root, name)
        except (ToolError, OSError, RuntimeError):  # outside; a symlink loop
            continue
        if path not in sizes:
            try:
                sizes[path] = path.stat().st_size if path.is_file() else 0
            except OSError:
                sizes[path] = 0
    return list(sizes.values())


def _paths(arguments: str) -> list[str]:
    try:
        value = json.loads(arguments)
    except ValueError:
        return []
    if not isinstance(value, dict):
        return []
    return [v for k in PATH_KEYS if isinstance(v := value.get(k), str) and v]


Clock = Callable[[], float]


@dataclass(kw_only=True)
class RunClock:
    """The wall time of one run of a session against its budget.

    Attributes:
        budget_s: Seconds the run may take, or None (no budget).
        now: The monotonic clock (a test passes its own).
        waited: Seconds spent waiting for the person so far (the permission gate's total),
            not counted: only what it grows by during the run is taken off.
    """

    budget_s: float | None = None
    now: Clock = time.monotonic
    waited: Clock = field(default=lambda: 0.0)
    _started: float = field(init=False)
    _waited_before: float = field(init=False)

    def __post_init__(self) -> None:
        self._started = self.now()
        self._waited_before = self.waited()

    @property
    def elapsed_s(self) -> float:
        """Counted seconds since the run began."""
        paused = self.waited() - self._waited_before
        return max(0.0, self.now() - self._started - paused)

    @property
    def left_s(self) -> float:
        """Seconds left (``math.inf`` without a budget; 0 once spent)."""
        if self.budget_s is None:
            return math.inf
        return max(0.0, self.budget_s - self.elapsed_s)

    @property
    def spent(self) -> bool:
        """Whether the budget is used up."""
        return self.left_s <= 0.0


def duration(seconds: float) -> str:
    """``seconds`` as a person reads a duration: ``45 s``, ``3 min 5 s``, ``10 min``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"
