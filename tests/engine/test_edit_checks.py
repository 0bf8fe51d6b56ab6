"""Diagnostics after an edit (``engine.edit_checks``) over a scripted ``CodeIntel``.

The double reports an error on every line holding ``bad_name``, read from disk as it is now,
so "before" and "after" are real states of the file; the real-server runs are in tests/intel.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cadenza.engine.edit_checks import EditDiagnostics
from cadenza.tools.host import FileEdit
from cadenza.tools.intel import IntelDiagnostic, IntelError, IntelFeature
from tests.doubles import MemoryEditor


@dataclass
class LineIntel:
    fail: bool = False

    def features(self, path: Path) -> frozenset[IntelFeature]:
        return frozenset({"diagnostics"}) if path.suffix == ".py" else frozenset()

    async def diagnostics(self, paths: list[Path] | None) -> list[IntelDiagnostic]:
        if self.fail:
            raise IntelError("stopped")
        out = []
        for path in paths or []:
            for number, line in enumerate(path.read_text().splitlines()):
                if "bad_name" in line:
                    out.append(
                        IntelDiagnostic(
                            path=path,
                            line=number,
                            character=0,
                            severity="error",
                            message=f"`bad_name` is not defined ({line.count('bad_name')})",
                        )
                    )
        return out

    async def references(self, path: Path, line: int, character: int) -> list[object]:
        raise NotImplementedError

    definition = references

    async def rename(self, path: Path, line: int, character: int, new_name: str) -> object:
        raise NotImplementedError


def edit(path: Path, old: str | None, new: str) -> FileEdit:
    path.write_text(new)
    return FileEdit(
        path=path,
        old_text=old,
        new_text=new,
        version=None,
        label="t",
        kind="create" if old is None else "change",
    )


async def test_only_the_errors_the_edit_introduced(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    old = "x = bad_name\ny = 1\n"
    a.write_text(old)
    checks = EditDiagnostics(tmp_path, MemoryEditor(), LineIntel())  # type: ignore[arg-type]
    before = await checks.before("a.py")
    new = "z = 0\nx = bad_name\ny = bad_name\n"  # the old error moved down; one is new
    note = await checks.note([edit(a, old, new)], before)
    assert (
        note
        == "\nNew errors after this edit (fix them):\na.py:3: error: `bad_name` is not defined (1)"
    )
    assert await checks.note([edit(a, new, old)], await checks.before("a.py")) == ""


async def test_a_new_file_a_file_without_baseline_and_a_failing_server(tmp_path: Path) -> None:
    checks = EditDiagnostics(tmp_path, MemoryEditor(), LineIntel())  # type: ignore[arg-type]
    before = await checks.before("new.py")
    note = await checks.note([edit(tmp_path / "new.py", None, "bad_name\n")], before)
    assert "new.py:1: error:" in note
    other = tmp_path / "other.py"
    other.write_text("bad_name\n")
    assert await checks.note([edit(other, "bad_name\n", "bad_name\n\n")], {}) == ""
    failing = EditDiagnostics(tmp_path, MemoryEditor(), LineIntel(fail=True))  # type: ignore[arg-type]
    assert await failing.before("new.py") == {}  # new.py exists now: the server failed
    base = {tmp_path / "new.py": []}
    assert await failing.note([edit(tmp_path / "new.py", "x\n", "bad_name\n")], base) == ""
    assert await failing.before("../outside.py") == {}
    many = "\n".join(f"v{i} = bad_name" for i in range(8)) + "\n"
    lines = (
        await checks.note([edit(tmp_path / "m.py", None, many)], {tmp_path / "m.py": []})
    ).splitlines()
    assert len(lines) == 1 + 1 + 5 + 1 and lines[-1] == "… and 3 more"
