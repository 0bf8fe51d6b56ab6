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
from cadenza.tools.intel import CodeIntel, IntelDiagnostic
from cadenza.tools.intel_format import format_diagnostic, inside, sort_diagnostics
from cadenza.tools.intel_source import ask, sources

MAX_SHOWN = 12
"""Error lines the model reads at most."""


@dataclass(frozen=True, kw_only=True)
class ErrorsFound:
    """What the language servers said about the session's files.

    Attributes:
        status: ``passed`` (no error), ``failed`` (errors, in ``detail``), ``skipped`` (a
            source failed).
        detail: What the model and the person read.
    """

    status: Literal["passed", "failed", "skipped"]
    detail: str


async def changed_file_errors(rt: Runtime, ctx: ToolContext) -> ErrorsFound | None:
    """The errors after the session's edits; None when no source serves the changed files."""
    changed = [p for p in rt.written if p.is_file()]
    served: list[tuple[CodeIntel, list[Path]]] = []
    for source in sources(ctx):
        mine = [p for p in changed if "diagnostics" in source.features(p)]
        mine = [p for p in mine if not any(p in group for _, group in served)]
        if mine:
            served.append((source, mine))
    if not served:
        return None
    found: dict[tuple[Path, int, int, str], IntelDiagnostic] = {}
    try:
        for source, group in served:
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
            "the language server reports errors after your changes:\n"
            + "\n".join(lines)
            + more
            + "\nFix those your change caused (for example a caller that no longer matches "
            "a changed function)"
        ),
    )


def _diagnostics(
    source: CodeIntel, paths: list[Path] | None
) -> Callable[[], Awaitable[list[IntelDiagnostic]]]:
    return lambda: source.diagnostics(paths)
