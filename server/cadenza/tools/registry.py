"""The default tool set of a session."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cadenza.config.browser import BrowserSettings
from cadenza.messages import ToolSpec
from cadenza.tools.ask import AskUser
from cadenza.tools.base import Tool
from cadenza.tools.browse import Browse
from cadenza.tools.browser import BrowseInteractive
from cadenza.tools.code_intel import Diagnostics, FindReferences, GoToDefinition
from cadenza.tools.edit import CreateFile, DeleteFile, EditFile, RenameFile, WriteFile
from cadenza.tools.lines import ReplaceLines
from cadenza.tools.read import ListFiles, ReadFile, Search
from cadenza.tools.rename_symbol import RenameSymbol
from cadenza.tools.shell import RunCommand

AnyTool = Tool[Any]


class ToolRegistry:
    """Tools by name, in the order they are offered to the model."""

    def __init__(self, tools: Iterable[AnyTool]) -> None:
        self._tools: dict[str, AnyTool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            self._tools[tool.name] = tool

    def get(self, name: str) -> AnyTool | None:
        """The tool called ``name``, or None."""
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        """Tool names in offer order."""
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        """Every tool's spec, for the model request."""
        return [tool.spec() for tool in self._tools.values()]

    def with_tools(self, tools: Iterable[AnyTool]) -> ToolRegistry:
        """A new registry: these tools, then ``tools`` (a session's MCP tools)."""
        return ToolRegistry([*self._tools.values(), *tools])


def default_tools(browser: BrowserSettings | None = None) -> ToolRegistry:
    """The workspace tools every session has (``browser``: ``browse_interactive``'s settings)."""
    return ToolRegistry(
        [
            ReadFile(),
            ListFiles(),
            Search(),
            EditFile(),
            WriteFile(),
            ReplaceLines(),
            CreateFile(),
            DeleteFile(),
            RenameFile(),
            RunCommand(),
            Browse(),
            BrowseInteractive(browser),
            AskUser(),
        ]
    )


def intel_tools() -> list[AnyTool]:
    """The code-intelligence tools, for a session where a language server can answer them."""
    return [FindReferences(), GoToDefinition(), RenameSymbol(), Diagnostics()]
