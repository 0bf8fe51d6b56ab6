"""The done check ``diagnostics``: the errors language servers report after the session's edits.

Asked of the same sources as the ``diagnostics`` tool (``tools.intel_source``: the editor's
language servers first, else the ones Cadenza started): the errors of the files the session
changed, and those the source reports anywhere else in the workspace, since a changed
signature breaks its callers in files nobody edited. Warnings and hints are left out; at most
``MAX_SHOWN`` lines are shown.

The errors are shown once, not required to vanish: a language server also reports what the
environment makes (an import of a package that is not installed), which the model cannot fix;
the tests are the judge that must pass. A source that fails or hangs (bounded) skips the check.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cadenza.engine.runtime import Runtime
from cadenza.tools.base import ToolContext, ToolError
from cadenza.tools.intel import CodeIntel, IntelDiagnostic, IntelUnavailable
from cadenza.tools.intel_format import format_diagnostic, inside, sort_diagnostics
from cadenza.tools.intel_source import ask, intel_of

MAX_SHOWN = 12
"""Error lines the model reads at most."""


@dataclass(frozen=True, kw_only=True)
class ErrorsFound:
    """What the language servers said about the session's files.

    Attributes:
        status: ``passed`` (no error), ``failed`` (errors, in ``detail``), ``skipped`` (a
            source failed).
        detail: What was found (the person and the model read it; ``engine.checks`` adds
            what the model should do).
    """

    status: Literal["passed", "failed", "skipped"]
    detail: str


async def changed_file_errors(rt: Runtime, ctx: ToolContext) -> ErrorsFound | None:
    """The errors after the session's edits; None when no source serves the changed files."""
    source = intel_of(ctx)
    changed = [p for p in rt.written if p.is_file()]
    group = [p for p in changed if source is not None and "diagnostics" in source.features(p)]
    if source is None or not group:
        return None
    found: dict[tuple[Path, int, int, str], IntelDiagnostic] = {}
    try:
        for paths in (group, None):
            diags = await ask(_diagnostics(source, paths), "its diagnostics")
            found.update(((d.path, d.line, d.character, d.message), d) for d in diags)
    except ToolError as exc:
        return ErrorsFound(status="skipped", detail=f"no diagnostics: {exc}")
    errors = [
        d
        for d in sort_diagnostics(found.values())
        if d.severity == "error" and inside(rt.root, d.path)
    ]
    names = ", ".join(dict.fromkeys(rt.changed)) or "the changed files"
    if not errors:
        return ErrorsFound(
            status="passed", detail=f"no errors reported after the changes to {names}"
        )
    lines = [format_diagnostic(rt.root, d) for d in errors[:MAX_SHOWN]]
    more = f"\n(and {len(errors) - MAX_SHOWN} more)" if len(errors) > MAX_SHOWN else ""
    return ErrorsFound(
        status="failed",
        detail=(
            "the language server reports errors after the changes:\n" + "\n".join(lines) + more
        ),
    )


def _diagnostics(
    source: CodeIntel, paths: list[Path] | None
) -> Callable[[], Awaitable[list[IntelDiagnostic]]]:
    """The diagnostics of ``paths``; those of the files no language server serves are none."""

    async def request() -> list[IntelDiagnostic]:
        try:
            return await source.diagnostics(paths)
        except IntelUnavailable as exc:
            return list(exc.found)

    return request
