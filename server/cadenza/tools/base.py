"""A tool is a small typed object: name, description, argument model, async ``invoke``.

Arguments stay raw JSON until the tool runs; a validation failure becomes an error result the
model can read (as pydantic-ai's ``ModelRetry`` and openai-agents' tool error function do).
"""

from __future__ import annotations

import hashlib
import weakref
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from cadenza.messages import ToolSpec
from cadenza.tools.freshness import ReadStamp
from cadenza.tools.host import FileEdit, ToolHost
from cadenza.tools.intel import CodeIntel
from cadenza.tools.resources import SessionResources

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "fetch", "think", "other"]
"""ACP's ``ToolKind`` values, so editors can pick an icon."""


class ToolError(Exception):
    """Raised inside a tool for a failure the model should read and correct (never fatal).

    ``settled``: nothing is left to do for the call although it failed (e.g. the edit is
    already made); the done gate does not count it as a failure. ``declined``: the person did
    not allow it (``ToolResult.declined``). ``summary``: what the person reads instead of the
    message, when the message speaks to the model (``ToolResult.summary``).
    """

    def __init__(
        self, message: str, *, settled: bool = False, declined: bool = False, summary: str = ""
    ) -> None:
        super().__init__(message)
        self.settled = settled
        self.declined = declined
        self.summary = summary


class ToolArgs(BaseModel):
    """Base of every tool's argument model: unknown fields are an error the model sees."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True, kw_only=True)
class HumanWait:
    """A person must act in the browser before the movement can go on.

    Attributes:
        wait_reason: What the person must do, non-empty.
        browser_session_id: The browser session to resume afterwards, non-empty.
        url: The page, when known.
        act_url: Where the person acts on it when not in a browser window on their screen
            (the DevTools page of a headless browser); None: in that window, or nowhere.
    """

    wait_reason: str
    browser_session_id: str
    url: str | None = None
    act_url: str | None = None


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """What a tool call produced.

    Attributes:
        content: Text for the model (bounded by the tool).
        is_error: True when the call failed; the model reads ``content`` to correct itself.
        edits: File changes the editor applied during the call.
        waiting_human: Set by the interactive browse tool when a person must act: the
            movement ends with a ``waiting_human`` result after this call's batch.
        settled: An error after which nothing is left to do (``ToolError.settled``).
        declined: The person did not allow the call or the change it made (a permission
            request rejected, dismissed or unanswered, a change declined in review or to a
            protected file): it is not a mistake to correct, and the done checks never ask
            the model to make that change anyway.
        stamp: For a read-only workspace tool, what it read as it was (``Tool.stamp``): the
            read cache answers from this result only while the stamp is fresh.
        unchanged: A whole-file write found the file already holding that text: nothing was
            written (no error, no edit). Candidates count such a reply as a failed change.
        summary: What the person reads of the result, in a few plain words, when ``content``
            speaks to the model (what to do next) or the call changed nothing although it
            looks like a change; "": ``content`` (its first line) says it.
    """

    content: str
    is_error: bool = False
    edits: tuple[FileEdit, ...] = field(default=())
    waiting_human: HumanWait | None = None
    settled: bool = False
    declined: bool = False
    stamp: ReadStamp | None = field(default=None, compare=False, repr=False)
    unchanged: bool = False
    summary: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """What a running tool may use.

    Attributes:
        root: The workspace root (absolute, resolved).
        host: The editor.
        session_id: The agent session's id ("" outside a session, e.g. in unit tests).
        resources: Things kept between this session's calls (browser sessions), closed with it.
        line_numbers: ``read_file`` prefixes each line with its 1-based number (``12| ``), for
            the line-range edit style (``replace_lines``).
        fenced: ``read_file`` shows the text in a fenced block after a line with its path, as
            the text edit format writes a file back (``read.render_lines``).
        shown: The files whose whole text the session has shown the model (a whole read, the
            task's files in the first message, a file it wrote whole), each with the
            ``text_digest`` of the text it was shown then (``saw``). When set, ``write_file``
            replaces an existing file only if it is in here: a model that never saw a file
            rewrites it from a guess (read before overwrite).
        syntax_guard: Edits that break a file's syntax are refused (``tools.syntax``) once:
            ``syntax_warned`` remembers the refused changes, made again they are written.
        trusted_folder: The person trusts the workspace folder: a command may run the
            programs its git configuration names (else ``gitcmd.command_environment``).
        confirm: Asks the person, every time, about a step the call's own permission does
            not cover (``browse`` reaching a local address): ``await confirm(title, target)``
            with a gerund title saying what and why, and what is reached (shown to clients
            that list it); None when allowed, else why not, for the model. None: no one can
            be asked (the step is not taken).
    """

    root: Path
    host: ToolHost
    session_id: str = ""
    resources: SessionResources = field(default_factory=SessionResources)
    line_numbers: bool = False
    fenced: bool = False
    shown: dict[Path, str] | None = None
    syntax_guard: bool = False
    syntax_warned: set[tuple[str, int, int]] = field(default_factory=set)
    intel: CodeIntel | None = None
    trusted_folder: bool = False
    confirm: Callable[[str, str], Awaitable[str | None]] | None = None

    def saw(self, path: Path, text: str) -> None:
        """Note that the model now knows ``text`` as the whole of ``path`` (``shown``)."""
        if self.shown is not None:
            self.shown[path] = text_digest(text)


def text_digest(text: str) -> str:
    """SHA-256 of ``text`` (UTF-8), hex: which text of a file the model was shown."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


A = TypeVar("A", bound=ToolArgs)


def strip_titles(schema: Any) -> Any:
    """Drop pydantic's ``title`` keys: noise for the model and for grammar conversion."""
    if isinstance(schema, dict):
        return {k: strip_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [strip_titles(v) for v in schema]
    return schema


_SCHEMAS: weakref.WeakKeyDictionary[type[ToolArgs], dict[str, Any]] = weakref.WeakKeyDictionary()


def _parameters(args_model: type[ToolArgs]) -> dict[str, Any]:
    """The JSON Schema of an argument model, made once per model class (shared: read only).

    Every session has its own tool objects; generating the schemas again for each (~12 tools)
    held the event loop for tens of ms per new session, delaying every running session's step.
    Weak keys: a model class made at run time (none today) is not kept alive by the cache.
    """
    schema = _SCHEMAS.get(args_model)
    if schema is None:
        schema = strip_titles(args_model.model_json_schema())
        schema.pop("description", None)  # the tool's own description says it
        _SCHEMAS[args_model] = schema
    return schema


class Tool(ABC, Generic[A]):
    """A tool the model can call."""

    name: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[ToolArgs]]
    kind: ClassVar[ToolKind] = "other"
    read_only: ClassVar[bool] = False
    timeout_s: ClassVar[float] = 60.0

    def spec(self) -> ToolSpec:
        """The tool as offered to the model (JSON Schema from the argument model).

        Built once per tool: pydantic's schema generation took ~3 ms per step for the
        workspace tools (benchmarks/, docs/lab/performance.md). The spec is shared: read it only.
        """
        cached: ToolSpec | None = self.__dict__.get("_spec")
        if cached is None:
            cached = self.__dict__["_spec"] = self._build_spec()
        return cached

    def _build_spec(self) -> ToolSpec:
        schema = _parameters(self.args_model)
        return ToolSpec(name=self.name, description=self.description, parameters=schema)

    def title(self, args: A) -> str:
        """A short human line for progress reports, e.g. ``reading src/app.py``."""
        return self.name

    def stamp(self, args: A, ctx: ToolContext) -> ReadStamp | None:
        """What a read-only call with ``args`` reads, as it is now (``tools.freshness``).

        None (the default): the tool's answer is not tied to workspace state it can probe.
        A read tool takes its stamp before reading and returns it in its result.
        """
        return None

    def precheck(self, args: A, ctx: ToolContext) -> None:
        """Refuse arguments that cannot pass the tool's own checks, before anyone is asked.

        The call pipeline runs it (in a worker thread) before the permission gate: a call that
        can never run (a folder outside the workspace) is not put to the person. ``invoke``
        checks again: the disk may change while the person decides. The default checks nothing.

        Raises:
            ToolError: What ``invoke`` would refuse with.
        """

    @abstractmethod
    async def invoke(self, args: A, ctx: ToolContext) -> ToolResult:
        """Run the tool.

        Raises:
            ToolError: A failure the model should read; the dispatcher makes it an error result.
        """
