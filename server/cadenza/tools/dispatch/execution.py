"""Execution: parse and validate a call's arguments, run the tool with a timeout.

Unknown tools, malformed JSON, schema violations, timeouts and exceptions all become error
results the model can read; nothing here raises into the loop except cancellation. Registered
secrets (API keys, ``cadenza.secrets``) in a result are redacted.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import ValidationError

from cadenza.fileread import FileReadError, in_worker
from cadenza.messages import ToolCall
from cadenza.secrets import redact, register_known_keys
from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from cadenza.tools.freshness import ReadStamp, StampedRead

if TYPE_CHECKING:  # the registry holds the tools, some of which use dispatch's results
    from cadenza.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class PreparedCall:
    """A call whose tool exists and whose arguments validated.

    Attributes:
        stamp: What a read-only call reads, as it was before it ran (``stamped``): taken once
            per call and used by the stuck detector, the cache lookup and the tool itself.
    """

    call: ToolCall
    tool: Tool[Any]
    args: ToolArgs
    stamp: ReadStamp | None = None

    @property
    def title(self) -> str:
        """The tool's human line for this call."""
        return self.tool.title(self.args)


async def stamped(prepared: PreparedCall, ctx: ToolContext) -> PreparedCall:
    """The call with its read stamp taken now (``Tool.stamp``); unchanged for other tools.

    Take it before anything reads for the call: a change after it is a later difference.
    The probe walks and ``stat``-s the disk, so it runs in a worker thread within the read
    deadline (``fileread.in_worker``). A probe that fails leaves the call unstamped: the
    tool then takes its own stamp and its failure becomes the call's error result.
    """
    if not prepared.tool.read_only:
        return prepared
    try:
        stamp = await in_worker(prepared.tool.stamp, prepared.args, ctx)
    except Exception as exc:
        log.warning("tool %s: its read stamp failed: %s", prepared.tool.name, exc)
        return prepared
    return prepared if stamp is None else dataclasses.replace(prepared, stamp=stamp)


def format_validation(exc: ValidationError) -> str:
    """A pydantic error as ``field: message; ...`` for the model to read."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def prepare(call: ToolCall, registry: ToolRegistry) -> PreparedCall | ToolResult:
    """Resolve the tool and validate the raw arguments.

    Returns:
        A ``PreparedCall``, or an error ``ToolResult`` naming what was wrong.
    """
    tool = registry.get(call.name)
    if tool is None:
        return ToolResult(
            content=f"unknown tool {call.name!r}; available tools: {', '.join(registry.names)}",
            is_error=True,
        )
    try:
        raw = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError as exc:
        return ToolResult(content=f"arguments are not valid JSON ({exc})", is_error=True)
    if not isinstance(raw, dict):
        return ToolResult(content="arguments must be a JSON object", is_error=True)
    try:
        args = tool.args_model.model_validate(raw)
    except ValidationError as exc:
        return ToolResult(
            content=f"invalid arguments for {call.name}: {format_validation(exc)}", is_error=True
        )
    return PreparedCall(call=call, tool=tool, args=args)


async def precheck(prepared: PreparedCall, ctx: ToolContext) -> ToolResult | None:
    """The error result of a call its tool refuses before it runs (``Tool.precheck``), or None.

    Taken before the permission gate, so a call that can never run is not put to the person.
    """
    tool = prepared.tool
    if type(tool).precheck is Tool.precheck:  # checks nothing: no worker thread for it
        return None
    try:
        await in_worker(tool.precheck, prepared.args, ctx)
    except (ToolError, FileReadError) as exc:
        return ToolResult(content=str(exc), is_error=True)
    return None


async def run(prepared: PreparedCall, ctx: ToolContext) -> ToolResult:
    """Run a prepared call within its tool's timeout (seconds); API keys in its content redacted.

    A result may quote an API key (``run_command env``, a workspace ``.env`` read), one a
    provider registered or one of ``secrets.KNOWN_KEY_ENV``; the content goes to the model,
    the client and the transcript, so the key is replaced by ``[redacted]``. The texts of its
    edits stay exact: the session compares them with the disk (the test check); they leave the
    process only as ``FileEdited`` events, which redact them (``events.file_edited``).

    Raises:
        Only cancellation; every failure of the tool becomes an error result.
    """
    result = await _run(prepared, ctx)
    register_known_keys()
    return dataclasses.replace(result, content=redact(result.content))


async def _run(prepared: PreparedCall, ctx: ToolContext) -> ToolResult:
    tool = prepared.tool
    try:
        with anyio.fail_after(tool.timeout_s):
            if prepared.stamp is not None and isinstance(tool, StampedRead):
                return await tool.read(prepared.args, ctx, prepared.stamp)  # type: ignore[no-any-return]
            return await tool.invoke(prepared.args, ctx)
    except ToolError as exc:
        return ToolResult(
            content=str(exc),
            is_error=True,
            settled=exc.settled,
            declined=exc.declined,
            summary=exc.summary,
        )
    except FileReadError as exc:  # a bounded read refused the file, or a read's deadline
        return ToolResult(content=str(exc), is_error=True)
    except TimeoutError:
        return ToolResult(
            content=f"{tool.name} timed out after {tool.timeout_s:g} s", is_error=True
        )
    except Exception as exc:
        log.exception("tool %s failed", tool.name)
        return ToolResult(content=f"{tool.name} failed: {type(exc).__name__}: {exc}", is_error=True)
