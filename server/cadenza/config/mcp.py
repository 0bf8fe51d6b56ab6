"""MCP server settings: ``[mcp]`` and ``[[mcp.servers]]`` of the user's ``cadenza.toml``.

Also ``initializationOptions`` ``{"mcp": {"servers": [...]}}`` (LSP face) and ACP's
``session/new`` ``mcpServers`` (converted by ``from_acp``). A workspace's own ``cadenza.toml``
sets it only in a folder the person trusted: a server is a process Cadenza starts
(``config.workspace``).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

DEFAULT_CALL_TIMEOUT_S = 60.0
DEFAULT_STARTUP_TIMEOUT_S = 30.0
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sanitize(text: str) -> str:
    """``text`` with every character outside ``[A-Za-z0-9_-]`` replaced by ``_``.

    Server names become part of tool names (``cadenza.mcp.naming``); it lives here so that
    two servers whose names would give the same tool prefix are refused with the config.
    """
    return _UNSAFE.sub("_", text) or "_"


class McpServerConfig(BaseModel):
    """One MCP server: ``command`` (stdio) or ``url`` (streamable HTTP)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, alias_generator=to_camel)

    name: str = Field(min_length=1, max_length=64, description="Names its tools: mcp__NAME__TOOL.")
    type: Literal["stdio", "http"] | None = Field(
        default=None, description="Optional: stdio (command) or http (url)."
    )
    command: str | None = Field(default=None, min_length=1, description="stdio: the program.")
    args: list[str] = Field(default_factory=list, description="stdio: its arguments.")
    env: dict[str, str] = Field(
        default_factory=dict,
        description="stdio: extra environment variables (the rest: PATH, HOME... only).",
    )
    cwd: str | None = Field(
        default=None, description="stdio: working folder (relative to the root)."
    )
    url: str | None = Field(default=None, description="http: the server's MCP endpoint.")
    headers: dict[str, str] = Field(default_factory=dict, description="http: request headers.")
    gated: bool | None = Field(
        default=None, description="Ask before each call of its tools (default: mcp.gated)."
    )
    timeout_s: float | None = Field(
        default=None, gt=0, le=86_400, description="Seconds a call may take (default: mcp's)."
    )

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server {self.name!r}: give either command (stdio) or url (http)")
        if self.type == "stdio" and self.command is None:
            raise ValueError(f"MCP server {self.name!r}: type stdio needs a command")
        if self.type == "http" and self.url is None:
            raise ValueError(f"MCP server {self.name!r}: type http needs a url")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"MCP server {self.name!r}: url must be http:// or https://")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """How Cadenza talks to it."""
        return "stdio" if self.command is not None else "http"


class McpConfig(BaseModel):
    """``[mcp]``: the servers every session starts, and how their tools behave."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, alias_generator=to_camel)

    servers: list[McpServerConfig] = Field(
        default_factory=list, description="MCP servers started for each session."
    )
    gated: bool = Field(
        default=True, description="MCP tools ask the person before each call (per server too)."
    )
    timeout_s: float = Field(
        default=DEFAULT_CALL_TIMEOUT_S, gt=0, le=86_400, description="Seconds a call may take."
    )
    startup_timeout_s: float = Field(
        default=DEFAULT_STARTUP_TIMEOUT_S,
        gt=0,
        le=600,
        description="Seconds a server has to start and list its tools; else it is skipped.",
    )

    @model_validator(mode="after")
    def _unique_names(self) -> McpConfig:
        seen: set[str] = set()
        for server in self.servers:
            key = sanitize(server.name)
            if key in seen:
                raise ValueError(f"two MCP servers are named {server.name!r}")
            seen.add(key)
        return self


def _pairs(items: Any) -> dict[str, str]:
    """ACP's ``[{name, value}]`` (EnvVariable, HttpHeader) as a dict."""
    out: dict[str, str] = {}
    for item in items or []:
        if isinstance(item, dict):
            out[str(item["name"])] = str(item["value"])
    return out


def from_acp(servers: list[Any]) -> tuple[list[McpServerConfig], list[str]]:
    """ACP ``McpServer`` values (SDK models or plain dicts) as configs, and the refused ones.

    stdio ``{name, command, args, env: [{name, value}]}`` and http ``{type: "http", name,
    url, headers: [{name, value}]}`` are supported; sse (and anything else) is refused.

    Returns:
        ``(configs, problems)``: a sentence for each server that is not used.
    """
    configs: list[McpServerConfig] = []
    problems: list[str] = []
    for item in servers:
        raw: Any = item.model_dump(by_alias=True) if isinstance(item, BaseModel) else item
        if not isinstance(raw, dict):
            problems.append(f"ignoring an MCP server that is not an object: {raw!r}")
            continue
        name = str(raw.get("name", "?"))
        kind = raw.get("type")
        if kind not in (None, "stdio", "http"):
            problems.append(f"MCP server {name!r}: transport {kind!r} is not supported")
            continue
        data: dict[str, Any] = {"name": name}
        if kind == "http" or ("url" in raw and "command" not in raw):
            data |= {"url": raw.get("url"), "headers": _pairs(raw.get("headers"))}
        else:
            data |= {
                "command": raw.get("command"),
                "args": list(raw.get("args") or []),
                "env": _pairs(raw.get("env")),
            }
        try:
            configs.append(McpServerConfig.model_validate(data))
        except ValidationError as exc:
            problems.append(f"MCP server {name!r} is invalid: {exc.errors()[0]['msg']}")
    return configs, problems
