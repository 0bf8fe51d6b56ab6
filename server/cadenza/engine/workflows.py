"""Workflows: named lists of movements, loaded from TOML (docs/protocol.md).

Sources: the built-ins shipped in ``cadenza/workflows/``, the user config dir's
``workflows/*.toml`` (the person's own: they may replace a built-in of the same name), then the
workspace's ``.cadenza/workflows/*.toml``, which add workflows but never replace one: a workspace
file whose workflow has the name of a built-in or a user workflow is skipped, and named as
such. Workspace files are read under the workspace path rule (``workspace_files``: no link out
of the workspace, regular files only, bounded). An invalid file is reported with its path and
the field, and never stops the server: it is skipped (and named) when workflows are listed, and
an error when a session asks for that very workflow.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cadenza.config import ConfigError, user_config_dir
from cadenza.engine.variants import LoopSettings
from cadenza.workspace_files import WorkspaceFileError, read_workspace_text

Terminal = Literal["COMPLETE", "ASK", "ABORT"]
TERMINALS: frozenset[str] = frozenset({"COMPLETE", "ASK", "ABORT"})
DEFAULT_WORKFLOW = "default"
MAX_WORKFLOW_BYTES = 256_000
"""A workspace workflow file larger than this is not read (an error names it)."""


class WorkflowError(ConfigError):
    """A workflow is unknown or invalid; the message names the file and the field."""


class Movement(BaseModel):
    """One movement of a workflow.

    ``tools`` None means every workspace tool; the control tools are always offered.
    ``max_steps`` None means the session's own bound applies.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    instructions: str = ""
    tools: tuple[str, ...] | None = None
    max_steps: int | None = Field(default=None, ge=1, le=1000)
    default_next: str = "COMPLETE"

    def prompt(self, variant: LoopSettings, names: list[str]) -> str:
        """The user message that starts the movement: its name, instructions and tools.

        The tools it lists as the loop ``variant`` offers them (of the registry's ``names``).
        """
        offered = variant.movement_tools(self.tools, names) if self.tools is not None else None
        tools = ", ".join(offered) if offered is not None else "all workspace tools"
        return (
            f"Movement {self.name!r} starts. {self.instructions}\n"
            f"Tools in this movement: {tools}; plus transition and complete."
        )


class Workflow(BaseModel):
    """A named, ordered list of movements; the first runs first."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    description: str = ""
    movements: tuple[Movement, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_names(self) -> Workflow:
        # Cross-field rules; the message starts with the field's path (see parse_workflow).
        names = [m.name for m in self.movements]
        if len(set(names)) != len(names):
            raise ValueError(f"movements: movement names must be unique: {names}")
        for i, m in enumerate(self.movements):
            if m.default_next not in TERMINALS and m.default_next not in names:
                raise ValueError(
                    f"movements.{i}.default_next: {m.default_next!r} is neither a movement of "
                    f"this workflow ({', '.join(names)}) nor COMPLETE, ASK or ABORT"
                )
        return self

    def movement(self, name: str) -> Movement | None:
        """The movement called ``name``, or None."""
        return next((m for m in self.movements if m.name == name), None)

    @property
    def movement_names(self) -> list[str]:
        """Movement names in order."""
        return [m.name for m in self.movements]


def parse_workflow(text: str, source: str) -> Workflow:
    """Parse and validate one workflow file's text.

    Raises:
        WorkflowError: Not TOML, or a field is invalid; the message names ``source`` and field.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise WorkflowError(f"{source}: not valid TOML: {exc}") from None
    try:
        return Workflow.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_describe(e["loc"], e["msg"]) for e in exc.errors())
        raise WorkflowError(f"{source}: {problems}") from None


def _describe(loc: tuple[int | str, ...], msg: str) -> str:
    if loc:
        return f"{'.'.join(str(p) for p in loc)}: {msg}"
    return msg.removeprefix("Value error, ")  # a cross-field rule: its message names the field


@dataclass
class WorkflowCatalog:
    """Every workflow found, by name, and the files that failed (with their errors)."""

    workflows: dict[str, Workflow] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    """Workflow name → the file it came from."""
    known_tools: frozenset[str] | None = None
    """When set, ``get`` refuses a workflow naming a tool outside this set."""

    def get(self, name: str) -> Workflow:
        """The workflow called ``name``.

        Raises:
            WorkflowError: Unknown name (the message lists the known ones and any broken file
                that may have been meant).
        """
        found = self.workflows.get(name)
        if found is not None:
            self._check_tools(found)
            return found
        broken = [e for path, e in self.errors.items() if Path(path).stem == name]
        if broken:
            raise WorkflowError(broken[0])
        known = ", ".join(sorted(self.workflows))
        raise WorkflowError(f"unknown workflow {name!r}; known workflows: {known}")

    def _check_tools(self, workflow: Workflow) -> None:
        if self.known_tools is None:
            return
        for i, movement in enumerate(workflow.movements):
            unknown = sorted(set(movement.tools or ()) - self.known_tools)
            if unknown:
                source = self.sources.get(workflow.name, workflow.name)
                raise WorkflowError(
                    f"{source}: movements.{i}.tools: unknown tool(s) {', '.join(unknown)}; "
                    f"known tools: {', '.join(sorted(self.known_tools))}"
                )


def _builtin_sources() -> list[tuple[str, str]]:
    folder = resources.files("cadenza") / "workflows"
    return sorted(
        (f"cadenza/workflows/{item.name}", item.read_text(encoding="utf-8"))
        for item in folder.iterdir()
        if item.name.endswith(".toml")
    )


Source = tuple[str, "str | Exception"]
"""A workflow file's name and its text, or why it could not be read."""


def _folder_sources(folder: Path) -> list[Source]:
    """The user's workflow files (trusted: read as they are)."""
    if not folder.is_dir():
        return []
    out: list[Source] = []
    for path in sorted(folder.glob("*.toml")):
        try:
            out.append((str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            out.append((str(path), exc))
    return out


def _workspace_sources(root: Path) -> list[Source]:
    """The workspace's workflow files, read under the workspace path rule."""
    folder = root / ".cadenza" / "workflows"
    if not folder.is_dir():
        return []
    out: list[Source] = []
    for path in sorted(folder.glob("*.toml")):
        name = f".cadenza/workflows/{path.name}"
        try:
            text = read_workspace_text(root, name, max_bytes=MAX_WORKFLOW_BYTES)
        except WorkspaceFileError as exc:
            out.append((str(path), exc))
            continue
        if text is not None:
            out.append((str(path), text))
    return out


def load_catalog(
    workspace: Path | None, known_tools: frozenset[str] | None = None
) -> WorkflowCatalog:
    """Load the built-in, user and workspace workflows (never raises for a bad file).

    Args:
        workspace: The session's root, for ``.cadenza/workflows``; None for none.
        known_tools: The workspace tools a movement may name; ``get`` refuses others.
    """
    catalog = WorkflowCatalog(known_tools=known_tools)
    sources = _builtin_sources() + _folder_sources(user_config_dir() / "workflows")
    _add(catalog, sources, replace=True)
    if workspace is not None:
        _add(catalog, _workspace_sources(workspace), replace=False)
    return catalog


def _add(catalog: WorkflowCatalog, sources: list[Source], *, replace: bool) -> None:
    """Parse ``sources`` into ``catalog``; without ``replace`` a taken name is an error."""
    for source, text in sources:
        if isinstance(text, Exception):
            catalog.errors[source] = f"{source}: not read: {text}"
            continue
        try:
            workflow = parse_workflow(text, source)
        except WorkflowError as exc:
            catalog.errors[source] = str(exc)
            continue
        if not replace and workflow.name in catalog.workflows:
            taken = catalog.sources[workflow.name]
            catalog.errors[source] = (
                f"{source}: {taken} already defines a workflow called {workflow.name!r}; a "
                "workspace file cannot replace it (rename this workflow)"
            )
            continue
        catalog.workflows[workflow.name] = workflow
        catalog.sources[workflow.name] = source


def default_workflow() -> Workflow:
    """The built-in ``default`` workflow (one movement, ``work``)."""
    for source, text in _builtin_sources():
        if Path(source).stem == DEFAULT_WORKFLOW:
            return parse_workflow(text, source)
    raise WorkflowError("the built-in default workflow is missing from the package")
