"""The done check ``diagnostics``: a language server's errors after the edits, shown at done."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cadenza.engine.events import CheckRan
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.variants import LOCAL_LOOP
from cadenza.messages import ToolMessage
from cadenza.tools.intel import (
    IntelDiagnostic,
    IntelError,
    IntelFeature,
    IntelLocation,
    IntelRename,
)
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply

TOOL_LOOP = LOCAL_LOOP.replace(edit="old_string", ending="complete")
"""The small-model profile speaking tool calls, as these scripted models do."""

TASK = "Give fmt in money.py a second parameter cur and print it after the value."
CHANGE = call(
    "edit_file",
    path="money.py",
    old_string="def fmt(v):\n    return f'{v:.2f}'",
    new_string="def fmt(v, cur):\n    return f'{v:.2f} {cur}'",
)
CALLER = call("edit_file", path="main.py", old_string="fmt(1)", new_string="fmt(1, 'EUR')")
DONE = call("complete", status="done", summary="cur added")


@dataclass
class ArityIntel:
    """A language server double: an error where a call of fmt misses the new parameter."""

    root: Path
    fail: str | None = None
    asked: list[list[Path] | None] = field(default_factory=list)

    def features(self, path: Path) -> frozenset[IntelFeature]:
        served = path.suffix == ".py" or path == self.root  # the root: workspace-wide answers
        return frozenset({"diagnostics"}) if served else frozenset()

    async def diagnostics(self, paths: list[Path] | None) -> list[IntelDiagnostic]:
        self.asked.append(paths)
        if self.fail:
            raise IntelError(self.fail)
        if "cur" not in (self.root / "money.py").read_text():
            return []
        found = []
        for n, line in enumerate((self.root / "main.py").read_text().splitlines()):
            if "fmt(1)" in line:
                found.append(
                    IntelDiagnostic(
                        path=self.root / "main.py",
                        line=n,
                        character=line.index("fmt"),
                        severity="error",
                        message='Argument missing for parameter "cur"',
                    )
                )
        warning = IntelDiagnostic(
            path=self.root / "money.py", line=0, character=0, severity="warning", message="w"
        )
        return [*found, warning]

    async def references(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        return []

    async def definition(self, path: Path, line: int, character: int) -> list[IntelLocation]:
        return []

    async def rename(self, path: Path, line: int, character: int, new_name: str) -> IntelRename:
        raise IntelError("no rename here")


def project(root: Path) -> None:
    (root / "money.py").write_text("def fmt(v):\n    return f'{v:.2f}'\n")
    (root / "main.py").write_text("from money import fmt\n\nprint(fmt(1))\n")


def run_with(root: Path, script: list[object], intel: ArityIntel) -> Session:
    session = Session(
        session_id="s1",
        task=TASK,
        root=root,
        provider=ScriptedProvider(script),  # type: ignore[arg-type]
        editor=MemoryEditor(),
        settings=SessionSettings(loop=TOOL_LOOP, max_steps=10, test_command=""),
        intel=intel,
    )
    return session


def diag_checks(session: Session) -> list[CheckRan]:
    editor = session.rt.editor
    assert isinstance(editor, MemoryEditor)
    return [e for e in editor.events if isinstance(e, CheckRan) and e.name == "diagnostics"]


async def test_a_broken_caller_is_shown_at_done_and_then_fixed(tmp_path: Path) -> None:
    project(tmp_path)
    intel = ArityIntel(tmp_path)
    session = run_with(tmp_path, [reply(CHANGE), reply(DONE), reply(CALLER), reply(DONE)], intel)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    refusal = [m.content for m in session.messages if isinstance(m, ToolMessage)][1]
    assert "the language server reports errors after the changes" in refusal
    assert 'main.py:3: error: Argument missing for parameter "cur"' in refusal
    assert "warning" not in refusal
    assert "Fix those your change caused" in refusal  # the model is told what to do...
    assert [(c.status, c.refused) for c in diag_checks(session)] == [
        ("failed", True),
        ("passed", False),
    ]
    assert "Fix" not in diag_checks(session)[0].detail  # ...the person sees what was found
    assert [tmp_path / "money.py"] in intel.asked and None in intel.asked


async def test_errors_are_shown_once_then_the_claim_stands(tmp_path: Path) -> None:
    project(tmp_path)
    session = run_with(tmp_path, [reply(CHANGE), reply(DONE), reply(DONE)], ArityIntel(tmp_path))
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert [(c.status, c.refused) for c in diag_checks(session)] == [
        ("failed", True),
        ("failed", False),
    ]


async def test_a_failing_language_server_skips_the_check(tmp_path: Path) -> None:
    project(tmp_path)
    intel = ArityIntel(tmp_path, fail="crashed")
    session = run_with(tmp_path, [reply(CHANGE), reply(DONE)], intel)
    assert (await session.run()).stop_reason == "end_turn"
    [check] = diag_checks(session)
    assert check.status == "skipped" and "crashed" in check.detail
