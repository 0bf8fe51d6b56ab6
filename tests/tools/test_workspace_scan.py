"""``tools.workspace_scan``: what a command changed, from a note taken before it ran."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cadenza.tools import workspace_scan
from cadenza.tools.workspace_scan import ScanLimits, WorkspaceScan, changes, scan


def taken(root: Path, limits: ScanLimits | None = None, **kw: object) -> WorkspaceScan:
    found = scan(root, limits=limits, **kw)  # type: ignore[arg-type]
    assert isinstance(found, WorkspaceScan), found
    return found


def later(path: Path) -> None:
    """Move the file's time on, as a later write would (a coarse clock may not)."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "ws"
    (base / "src").mkdir(parents=True)
    (base / "src" / "app.py").write_text("a = 1\n")
    (base / "gone.txt").write_text("bye\n")
    (base / "same.txt").write_text("same\n")
    return base.resolve()


def test_created_modified_and_deleted_files_with_their_bytes(root: Path) -> None:
    before = taken(root)
    (root / "src" / "app.py").write_text("a = 10\n")
    later(root / "src" / "app.py")
    (root / "gone.txt").unlink()
    (root / "src" / "new.py").write_text("print()\n")
    later(root / "same.txt")  # touched, not changed

    diff = changes(before)
    assert [(c.path, c.before, c.after) for c in diff.changes] == [
        ("gone.txt", b"bye\n", None),
        ("src/app.py", b"a = 1\n", b"a = 10\n"),
        ("src/new.py", None, b"print()\n"),
    ]
    assert diff.unrecorded == []
    assert diff.after is not None and set(diff.after.files) == {
        "same.txt",
        "src/app.py",
        "src/new.py",
    }


def test_skipped_folders_and_virtual_environments_are_not_looked_at(root: Path) -> None:
    for folder in (".git", "node_modules/pkg", "__pycache__", "env"):
        (root / folder).mkdir(parents=True)
    (root / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    before = taken(root)
    skipped = (".git", "node_modules", "__pycache__", "env")
    assert all(not p.startswith(skipped) for p in before.files)
    (root / ".git" / "index").write_text("x")
    (root / "node_modules" / "pkg" / "index.js").write_text("x")
    (root / "__pycache__" / "app.pyc").write_bytes(b"\x00x")
    (root / "env" / "lib.py").write_text("x")
    assert changes(before).changes == []


def test_binary_and_large_files_are_noticed_but_not_kept(root: Path) -> None:
    (root / "logo.png").write_bytes(b"\x89PNG\x00\x01")
    (root / "big.txt").write_text("x" * 200)
    limits = ScanLimits(file_bytes=100)
    before = taken(root, limits)
    assert before.files["logo.png"].data is None and before.files["big.txt"].data is None
    (root / "logo.png").write_bytes(b"\x89PNG\x00\x02\x03")
    (root / "big.txt").write_text("y" * 300)
    (root / "blob.bin").write_bytes(b"\x00\x00")
    diff = changes(before, limits)
    assert diff.changes == []
    assert diff.unrecorded == ["big.txt", "blob.bin", "logo.png"]


def test_past_the_bounds_the_scan_says_why(root: Path) -> None:
    too_many = scan(root, limits=ScanLimits(files=2))
    assert isinstance(too_many, str) and "more than 2 files" in too_many
    too_much = scan(root, limits=ScanLimits(kept_bytes=5))
    assert isinstance(too_much, str) and "text" in too_much


def test_a_command_that_leaves_too_many_files_still_reports_known_ones(root: Path) -> None:
    limits = ScanLimits(files=10)
    before = taken(root, limits)
    for i in range(20):
        (root / f"gen{i:02}.txt").write_text("g\n")
    (root / "src" / "app.py").write_text("a = 2\n")
    later(root / "src" / "app.py")
    diff = changes(before, limits)
    assert [c.path for c in diff.changes] == ["src/app.py"]  # created ones are not looked for
    assert diff.after is None


def test_links_out_of_the_workspace_are_never_read_or_followed(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    before = taken(root)
    assert "link.txt" not in before.files and not any(p.startswith("linkdir") for p in before.files)
    (outside / "secret.txt").write_text("changed secret\n")  # outside: not the workspace's
    (outside / "more.txt").write_text("more\n")
    assert changes(before).changes == []


def test_a_folder_replaced_by_a_link_is_not_read_through(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.py").write_text("outside\n")
    before = taken(root)
    (root / "src" / "app.py").unlink()
    (root / "src").rmdir()
    (root / "src").symlink_to(outside, target_is_directory=True)
    (root / "same.txt").unlink()
    (root / "same.txt").symlink_to(outside / "app.py")
    diff = changes(before)
    assert diff.changes == []
    assert diff.unrecorded == ["same.txt", "src/app.py"]
    assert all(c.after != b"outside\n" for c in diff.changes)


def test_a_previous_scan_spares_reading_unchanged_files(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = taken(root)
    (root / "src" / "app.py").write_text("a = 2\n")
    later(root / "src" / "app.py")
    read: list[str] = []
    real = workspace_scan._read_at

    def counted(folder: int, name: str, cap: int) -> bytes | None:
        read.append(name)
        return real(folder, name, cap)

    monkeypatch.setattr(workspace_scan, "_read_at", counted)
    second = taken(root, previous=first)
    assert read == ["app.py"]  # only the file whose size or time changed
    assert second.files["same.txt"].data == b"same\n"


def test_files_read_after_the_command_share_one_byte_budget(root: Path) -> None:
    limits = ScanLimits(kept_bytes=100)
    before = taken(root, limits)
    (root / "a.txt").write_text("a" * 60)
    (root / "b.txt").write_text("b" * 60)  # past the budget once a.txt was read
    diff = changes(before, limits)
    assert [c.path for c in diff.changes] == ["a.txt"]
    assert diff.unrecorded == ["b.txt"]
