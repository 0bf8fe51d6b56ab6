"""An MCP server's tool as a Cadenza ``Tool``: its schema offered, its arguments validated.

The server's ``inputSchema`` goes to the model as it is, but for its local ``$ref``s, which are
inlined (``model_schema``), and its top-level ``title``. Arguments are checked against the
original (``jsonschema``) while the dispatcher prepares the call, so an invalid call is an
error result before any permission prompt; the server's own validation still applies. An
``isError`` result, an MCP error or a lost connection is an error result the model reads.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, ClassVar, cast

import jsonschema  # type: ignore[import-untyped]
import mcp_types
from pydantic import ConfigDict, model_validator

from cadenza.messages import ToolSpec
from cadenza.secrets import redact
from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult

if TYPE_CHECKING:
    from cadenza.mcp.client import McpConnection

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 100_000
"""Result text beyond this is cut (the engine bounds it further by the context window)."""


class McpArgs(ToolArgs):
    """Any JSON object, checked against the tool's JSON Schema (``schema_validator``)."""

    model_config = ConfigDict(extra="allow")
    schema_validator: ClassVar[Any] = None

    @model_validator(mode="before")
    @classmethod
    def _check_schema(cls, data: Any) -> Any:
        validator = cls.schema_validator
        if validator is not None and isinstance(data, dict):
            errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
            if errors:
                raise ValueError("; ".join(_describe_error(e) for e in errors[:5]))
        return data

    def arguments(self) -> dict[str, Any]:
        """The call's arguments as the model sent them."""
        return dict(self.model_extra or {})


def _describe_error(error: Any) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else str(error.message)


def _args_model(schema: dict[str, Any], name: str) -> type[McpArgs]:
    """An argument model validating against ``schema`` (none when the schema is unusable)."""
    validator: Any = None
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = cls(schema)
    except Exception as exc:  # a broken schema: the server validates alone
        log.warning("MCP tool %s: its input schema is not valid JSON Schema: %s", name, exc)
    model = cast(type[McpArgs], type(f"McpArgs_{name}", (McpArgs,), {}))
    model.schema_validator = validator
    return model


MAX_REF_DEPTH = 8
"""How deep ``$ref`` chains are inlined; a deeper (recursive) one becomes ``{}`` (anything)."""


_DATA_KEYS = frozenset({"const", "enum", "default", "examples"})
"""Keys whose values are data, not subschemas (a ``$ref`` in them is not followed)."""


def _local_defs(schema: dict[str, Any]) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        found = schema.get(key)
        if isinstance(found, dict):
            defs.update({f"#/{key}/{name}": sub for name, sub in found.items()})
    return defs


def _inline(node: Any, defs: dict[str, Any], depth: int) -> Any:
    if isinstance(node, bool):
        return {} if node else {"not": {}}
    if isinstance(node, list):
        return [_inline(item, defs, depth) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref in defs:
        if depth >= MAX_REF_DEPTH:
            return {}
        target = _inline(defs[ref], defs, depth + 1)
        rest = {k: _inline(v, defs, depth) for k, v in node.items() if k != "$ref"}
        return {**target, **rest} if isinstance(target, dict) else target
    return {
        k: v if k in _DATA_KEYS else _inline(v, defs, depth)
        for k, v in node.items()
        if k not in ("$defs", "definitions")
    }


def model_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as offered to the model: local ``$ref``s inlined, top-level ``title`` dropped.

    A tool's schema is embedded in a larger one by the envelope mode (local models), where
    ``#/$defs/...`` would no longer resolve; boolean subschemas become objects (``{}`` for
    true) so code that reads properties as objects keeps working.
    """
    top = {k: v for k, v in schema.items() if k != "title"}
    out: dict[str, Any] = _inline(top, _local_defs(schema), 0)
    out.setdefault("type", "object")
    if out.get("type") == "object":
        out.setdefault("properties", {})
    return out


def tool_kind(remote: mcp_types.Tool) -> ToolKind:
    """``fetch`` for a read-only open-world tool, ``execute`` for a destructive one, else other."""
    notes = remote.annotations
    if notes is None:
        return "other"
    if notes.read_only_hint and notes.open_world_hint:
        return "fetch"
    if notes.destructive_hint and not notes.read_only_hint:
        return "execute"
    return "other"


def render_result(result: mcp_types.CallToolResult) -> str:
    """The text of a tool result: its content blocks (binary ones described, not included)."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            parts.append(f"[{block.type} {block.mime_type}, {len(block.data)} base64 chars]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            res = block.resource
            if isinstance(res, mcp_types.TextResourceContents):
                parts.append(f"[resource {res.uri}]\n{res.text}")
            else:
                parts.append(f"[resource {res.uri}: binary, {res.mime_type or 'unknown type'}]")
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(f"[resource link {block.uri}: {block.name}]")
        else:
            parts.append(f"[{getattr(block, 'type', 'unknown')} content]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts) or ("(the tool failed without a message)" if result.is_error else "")
    text = redact(text)  # before the cut: a key running past it would no longer match
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"\n[cut: {len(text) - MAX_RESULT_CHARS} more chars]"
    return text


class McpTool(Tool[McpArgs]):
    """One tool of one connected MCP server (a subclass per tool carries its name)."""

    name: ClassVar[str] = "mcp"
    description: ClassVar[str] = ""
    args_model: ClassVar[type[ToolArgs]] = McpArgs
    gated: ClassVar[bool] = True

    def __init__(self, connection: McpConnection, remote: mcp_types.Tool) -> None:
        self.connection = connection
        self.remote = remote

    @classmethod
    def build(
        cls,
        connection: McpConnection,
        remote: mcp_types.Tool,
        *,
        name: str,
        timeout_s: float,
        gated: bool,
    ) -> McpTool:
        """The tool ``remote`` of ``connection``, called ``name`` in the session."""
        server = connection.server.name
        description = (remote.description or "").strip() or f"Tool {remote.name}."
        attrs = {
            "name": name,
            "description": f"{description}\n(MCP server {server!r}, tool {remote.name!r})",
            "args_model": _args_model(remote.input_schema, name),
            "kind": tool_kind(remote),
            "timeout_s": timeout_s,
            "gated": gated,
        }
        subclass = cast(type[McpTool], type(f"McpTool_{name}", (cls,), attrs))
        return subclass(connection, remote)

    def _build_spec(self) -> ToolSpec:
        schema = model_schema(self.remote.input_schema)
        return ToolSpec(name=self.name, description=self.description, parameters=schema)

    def title(self, args: McpArgs) -> str:
        """``mcp SERVER: TOOL``."""
        return f"mcp {self.connection.server.name}: {self.remote.name}"

    async def invoke(self, args: McpArgs, ctx: ToolContext) -> ToolResult:
        """Call the tool on its server; an ``isError`` result is an error result."""
        result = await self.connection.call(self.remote.name, args.arguments())
        if not isinstance(result, mcp_types.CallToolResult):
            raise ToolError(f"MCP server {self.connection.server.name!r} gave no tool result")
        return ToolResult(content=render_result(result), is_error=result.is_error)
