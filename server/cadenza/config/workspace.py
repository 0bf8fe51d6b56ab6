"""A workspace's own ``cadenza.toml``, sorted by what a folder may decide for itself.

A cloned repository is not trusted: its files are input, not the person's word. Its
``cadenza.toml`` is read (under the workspace path rule: no link out of the folder, a regular
file only, bounded) and each setting falls in one of three classes:

- **safe**, always applied: ``temperature``, ``review = "confirm"`` (a folder may ask for
  more review, never for less), and the bounds ``maxSteps``, ``maxTokens``, ``contextSize``
  and ``[checks] testTimeoutS`` at or below the person's own (``WorkspaceSettings.within``);
- **held**, applied only in a folder the person trusted (``host.trust``): the settings that
  choose the model or provider, where requests and keys go, or a program Cadenza runs:
  ``model``, ``models``, ``providers`` (base URL, API key variable, CLI executable),
  ``mcp`` (servers are processes), ``browser`` (the browser binary) and ``[checks] test``;
  and a bound above the person's own (more steps, a larger context: time, money, memory);
- **refused**, never taken from a workspace, trusted or not: ``permissions`` (a folder must
  not switch off the person's prompts), ``loop`` (priming would send the focused file to a
  hosted model unasked), ``review = "auto"`` and anything else.
"""

from __future__ import annotations

import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cadenza.workspace_files import WorkspaceFileError, read_workspace_text

CONFIG_NAME = "cadenza.toml"
MAX_CONFIG_BYTES = 1_000_000
"""A workspace ``cadenza.toml`` larger than this is not read (a warning says so)."""

SAFE_KEYS = frozenset(
    {
        "maxSteps",
        "max_steps",
        "maxTokens",
        "max_tokens",
        "temperature",
        "contextSize",
        "context_size",
    }
)
"""Top-level settings a workspace may set: bounds of the person's own session (``BOUNDS``)."""

BOUNDS = {
    "maxSteps": "maxSteps",
    "max_steps": "maxSteps",
    "maxTokens": "maxTokens",
    "max_tokens": "maxTokens",
    "contextSize": "contextSize",
    "context_size": "contextSize",
}
"""Safe settings that bound a session, by the name of the person's own limit: a workspace may
lower each, and raise it only in a trusted folder."""
CHECK_BOUNDS = {"testTimeoutS": "checks.testTimeoutS", "test_timeout_s": "checks.testTimeoutS"}
"""The same for ``[checks]`` keys."""

ARG_CHARS = 200
"""A command's argument longer than this is cut in the trust question (marked ``…``)."""
COMMAND_CHARS = 600
"""A command line, URL or path in the trust question is cut after this many characters."""

HELD_KEYS = frozenset({"model", "models", "providers", "mcp", "browser"})
"""Top-level settings applied only in a trusted folder."""

HELD_CHECKS = frozenset({"test"})
"""``[checks]`` keys applied only in a trusted folder (the test command is a program)."""


@dataclass(frozen=True, kw_only=True)
class WorkspaceSettings:
    """The settings of a workspace's ``cadenza.toml``, by class (see the module).

    Attributes:
        path: The file.
        safe: Settings applied in any folder.
        held: Settings applied only in a trusted folder.
        refused: Names of the settings never taken from a workspace.
    """

    path: Path
    safe: dict[str, Any] = field(default_factory=dict)
    held: dict[str, Any] = field(default_factory=dict)
    refused: tuple[str, ...] = ()

    def within(self, limits: Mapping[str, float | None]) -> WorkspaceSettings:
        """A copy in which each bound set above the person's own limit is held, not safe.

        Args:
            limits: The person's own limits by their ``BOUNDS`` name; None (no number set)
                counts any value as a raise.
        """
        safe, held = dict(self.safe), dict(self.held)
        for key, name in BOUNDS.items():
            if key in safe and _raises(safe[key], limits.get(name)):
                held[key] = safe.pop(key)
        checks = dict(safe.pop("checks", {}))
        raised = {
            key: checks.pop(key)
            for key, name in CHECK_BOUNDS.items()
            if key in checks and _raises(checks[key], limits.get(name))
        }
        if checks:
            safe["checks"] = checks
        if raised:
            held["checks"] = {**held.get("checks", {}), **raised}
        return replace(self, safe=safe, held=held)

    def held_names(self) -> list[str]:
        """The held settings' names, ``[checks] test`` as ``checks.test``."""
        names = [key for key in self.held if key != "checks"]
        names += [f"checks.{key}" for key in self.held.get("checks", {})]
        return sorted(names)

    def describe_held(self) -> str:
        """The held settings for a question: what runs and where requests go, in full.

        ``model = "cli/claude"``; ``providers.evil (base URL "http://…", headers X-Team)``;
        ``mcp.servers (fs: runs `npx -y @scope/server /home`)``; ``browser (runs
        "/opt/chrome")``. A command is shown with every argument (each bounded) so the person
        sees the program that would run; a header or environment variable by its name only.
        """
        parts = []
        for name in self.held_names():
            section, _, key = name.partition(".")
            value = self.held[section][key] if key else self.held[section]
            if isinstance(value, str):
                parts.append(f"{name} = {_shown(value)}")
            elif isinstance(value, int | float):  # a raised bound
                parts.append(f"{name} = {value}")
            elif section == "providers" and isinstance(value, dict):
                parts += [_provider(n, v) for n, v in value.items()]
            elif section == "mcp" and isinstance(value, dict):
                servers = value.get("servers")
                named = [_server(v) for v in servers] if isinstance(servers, list) else []
                parts.append(f"mcp.servers ({'; '.join(named)})" if named else "mcp")
            elif section == "browser" and isinstance(value, dict):
                parts.append(_browser(value))
            else:
                parts.append(name)
        return ", ".join(parts)

    def with_held(self) -> dict[str, Any]:
        """The safe and the held settings together (for a trusted folder)."""
        merged = {**self.safe, **{k: v for k, v in self.held.items() if k != "checks"}}
        checks = {**self.safe.get("checks", {}), **self.held.get("checks", {})}
        if checks:
            merged["checks"] = checks
        return merged


def _raises(value: Any, limit: float | None) -> bool:
    """Whether a bound set to ``value`` goes above ``limit``.

    A string is read as the settings' validation reads it (``"1000"`` is 1000); a value that
    reads as no number is not judged here: the validation refuses it.
    """
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return False
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return limit is None or not value <= limit  # NaN: not below, so a raise


def _shown(value: str, limit: int = 80) -> str:
    """A workspace value in a question: quoted, printable, at most ``limit`` characters."""
    shown = _printable(value[:limit])
    return f'"{shown}…"' if len(value) > limit else f'"{shown}"'


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def _command(words: list[Any]) -> str:
    """A command line as a shell would read it: `program arg …`, each part bounded.

    Each part is cut at ``ARG_CHARS`` (marked ``…``) and the line at ``COMMAND_CHARS``, saying
    how many arguments were left out: a question may not grow without bound, and a cut is
    never silent.
    """
    parts = [_printable(w if len(w) <= ARG_CHARS else w[:ARG_CHARS] + "…") for w in map(str, words)]
    line = ""
    for i, part in enumerate(parts):
        quoted = shlex.quote(part)
        if line and len(line) + len(quoted) > COMMAND_CHARS:
            return f"`{line} …` ({len(parts) - i} more arguments)"
        line = f"{line} {quoted}" if line else quoted
    return f"`{line}`"


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _names(table: Any) -> list[str]:
    """The keys of a table (headers, environment), never their values (they may be secrets)."""
    return [_printable(str(k))[:80] for k in table] if isinstance(table, dict | tuple) else []


def _provider(name: str, options: Any) -> str:
    """``providers.NAME`` with where it sends requests, what it runs and what it adds."""
    name = _printable(name[:80])
    if not isinstance(options, dict):
        return f"providers.{name}"
    named = []
    url = options.get("base_url", options.get("baseUrl"))
    if isinstance(url, str):
        named.append(f"base URL {_shown(url, COMMAND_CHARS)}")
    program = options.get("executable")
    args = _list(options.get("args"))
    if isinstance(program, str):
        named.append(f"runs {_command([program, *args])}")
    elif args:
        named.append(f"arguments {_command(args)}")
    key = options.get("api_key_env", options.get("apiKeyEnv"))
    if isinstance(key, str):
        named.append(f"API key from ${_printable(key)[:80]}")
    if headers := _names(options.get("headers")):
        named.append(f"headers {', '.join(headers)}")
    return f"providers.{name} ({'; '.join(named)})" if named else f"providers.{name}"


def _server(server: Any) -> str:
    """An MCP server: its name and the program it runs (every argument) or its address."""
    if not isinstance(server, dict):
        return "?"
    name = _printable(str(server.get("name", "?")))[:64]
    if isinstance(server.get("command"), str):
        what = f"runs {_command([server['command'], *_list(server.get('args'))])}"
        if isinstance(server.get("cwd"), str):
            what += f" in {_shown(server['cwd'])}"
        if env := _names(server.get("env")):
            what += f" with environment {', '.join(env)}"
    elif isinstance(server.get("url"), str):
        what = f"connects to {_shown(server['url'], COMMAND_CHARS)}"
        if headers := _names(server.get("headers")):
            what += f" with headers {', '.join(headers)}"
    else:
        what = "?"
    return f"{name}: {what}"


def _browser(options: dict[str, Any]) -> str:
    """``browser`` with the program it runs, when the folder names one."""
    program = options.get("executable_path", options.get("executablePath"))
    return (
        f"browser (runs {_shown(program, COMMAND_CHARS)})"
        if isinstance(program, str)
        else "browser"
    )


def classify(data: dict[str, Any], path: Path) -> WorkspaceSettings:
    """Sort the parsed ``cadenza.toml`` of a workspace into safe, held and refused."""
    safe: dict[str, Any] = {}
    held: dict[str, Any] = {}
    refused: list[str] = []
    for key, value in data.items():
        if key in SAFE_KEYS:
            safe[key] = value
        elif key in HELD_KEYS:
            held[key] = value
        elif key == "review" and value == "confirm":
            safe[key] = value
        elif key == "checks" and isinstance(value, dict):
            held_checks = {k: v for k, v in value.items() if k in HELD_CHECKS}
            safe_checks = {k: v for k, v in value.items() if k not in HELD_CHECKS}
            if held_checks:
                held["checks"] = held_checks
            if safe_checks:
                safe["checks"] = safe_checks
        else:
            refused.append(key)
    return WorkspaceSettings(path=path, safe=safe, held=held, refused=tuple(sorted(refused)))


def read_workspace_settings(workspace: Path) -> WorkspaceSettings | None:
    """The workspace's ``cadenza.toml``, classified; None when it has none.

    Raises:
        ValueError: The file cannot be used (a link out of the workspace, not a regular file,
            too large, not UTF-8, not TOML); the message names the file and why.
    """
    path = workspace / CONFIG_NAME
    try:
        text = read_workspace_text(workspace, CONFIG_NAME, max_bytes=MAX_CONFIG_BYTES)
    except WorkspaceFileError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if text is None:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return classify(data, path)


def untrusted_note(settings: WorkspaceSettings) -> str:
    """One line: which held settings were ignored, and how to trust the folder."""
    folder = settings.path.parent
    return (
        f"Cadenza ignored {', '.join(settings.held_names())} from {settings.path}: they choose "
        "the model or a program Cadenza runs, or raise a limit of your own settings, and this "
        "folder is not trusted. To use them, "
        f"trust it when Cadenza asks, run `cadenza trust {folder}`, or pass "
        "--trust-workspace to cadenza run"
    )


def refused_note(settings: WorkspaceSettings) -> str:
    """One line: which settings a workspace may never set (their names printable)."""
    refused = ", ".join(_names(settings.refused))
    return (
        f"{settings.path}: ignored {refused}: a workspace's cadenza.toml "
        "may not set them (permissions, loop, review = auto and unknown keys come from your "
        "own config or the editor's settings only)"
    )
