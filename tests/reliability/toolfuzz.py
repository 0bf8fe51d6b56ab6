"""Adversarial tool arguments shared by the in-process and the real-server tool fuzzing."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

FILE_TOOLS = (
    "read_file",
    "list_files",
    "search",
    "edit_file",
    "write_file",
    "create_file",
    "delete_file",
    "rename_file",
)
TOOLS = (*FILE_TOOLS, "run_command")


def make_layout(base: Path) -> tuple[Path, Path]:
    """``base/ws`` (the workspace) and ``base/outside`` (a sibling that must never change)."""
    root = base / "ws"
    outside = base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET\n")
    (outside / "sub").mkdir()
    (outside / "sub" / "deep.txt").write_text("deep\n")
    (root / "inside.txt").write_text("fine\nTOP\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def greet():\n    return 'hi'\n")
    os.symlink(outside / "secret.txt", root / "link.txt")
    os.symlink(outside, root / "linkdir")
    os.symlink("../../outside/sub", root / "src" / "rel-link")
    os.symlink(root / "nowhere", root / "dangling")
    return root, outside


def snapshot(folder: Path) -> dict[str, tuple[str, str]]:
    """Every entry under ``folder`` (links not followed): kind and content hash or target."""
    state: dict[str, tuple[str, str]] = {".": ("dir", oct(folder.stat().st_mode))}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            key = str(path.relative_to(folder))
            if path.is_symlink():
                state[key] = ("link", os.readlink(path))
            elif path.is_dir():
                state[key] = ("dir", oct(path.stat().st_mode))
            else:
                data = path.read_bytes()
                state[key] = ("file", hashlib.sha256(data).hexdigest() + oct(path.stat().st_mode))
    return state


def escaping_paths(outside: Path) -> list[str]:
    """Paths that lead outside the workspace (``ws``), each one way or another."""
    return [
        "..",
        "../outside/secret.txt",
        "../outside/new.txt",
        "../outside/sub/deep.txt",
        "sub/../../outside/secret.txt",
        "./../outside",
        "src/../../outside/x.txt",
        "link.txt",
        "linkdir/secret.txt",
        "linkdir/new.txt",
        "linkdir/sub/deep.txt",
        "src/rel-link/deep.txt",
        "src/rel-link/new.txt",
        str(outside / "secret.txt"),
        str(outside / "new.txt"),
        str(outside),
        "/etc/passwd",
        "/tmp/cadenza-fuzz-escape.txt",
        "//etc/passwd",
        "../" * 40 + "etc/passwd",
        str(outside.parent / "ws" / ".." / "outside" / "secret.txt"),
    ]


def tricky_paths() -> list[str]:
    """Odd paths that stay inside (or are invalid): they must not escape either."""
    return [
        "",
        ".",
        "./",
        "inside.txt",
        "dangling",
        "src",
        "a\x00b",
        "\x00",
        "x" * 5000,
        ("d/" * 200) + "f.txt",
        "\u2024\u2024/outside/secret.txt",  # one-dot leaders, not dots
        "\uff0e\uff0e/outside/secret.txt",  # fullwidth full stops
        "\u202egnp.exe",
        "..\\outside\\secret.txt",  # a Windows separator is a plain character here
        "~/x.txt",
        "$HOME/x.txt",
        "file:///etc/passwd",
        "con",
        "new file.txt",
        "ünïcode/ファイル.txt",
        "src/app.py",
        ".git/config",
        ".git/hooks/pre-commit",
    ]


def path_strategy(outside: Path) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(escaping_paths(outside)),
        st.sampled_from(tricky_paths()),
        st.text(max_size=30),
        st.builds(
            lambda a, b: f"{a}/{b}", st.sampled_from(["..", "linkdir", "src"]), st.text(max_size=10)
        ),
        st.none(),
        st.integers(),
        st.lists(st.text(max_size=5), max_size=2),
        st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
    )


def content_strategy() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.text(max_size=50),
        st.sampled_from(
            [
                "",
                "x" * 200_000,
                "\x00\x01",
                "\ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
            ]
        ),
        st.none(),
        st.integers(),
        st.booleans(),
    )


def arguments_strategy(tool: str, outside: Path) -> st.SearchStrategy[dict[str, Any]]:
    paths = path_strategy(outside)
    text = content_strategy()
    fields: dict[str, st.SearchStrategy[Any]] = {
        "read_file": {
            "path": paths,
            "offset": st.integers(-3, 10**9),
            "limit": st.integers(-3, 10**6),
        },
        "list_files": {
            "path": paths,
            "glob": st.one_of(st.sampled_from(["**/*", "../*", "/*", "*"]), text),
        },
        "search": {
            "pattern": st.one_of(st.sampled_from(["SECRET", "(", "a{99999}", ".*"]), text),
            "path": paths,
        },
        "edit_file": {
            "path": paths,
            "old_string": st.one_of(st.just("TOP"), text),
            "new_string": text,
            "replace_all": st.one_of(st.booleans(), text),
        },
        "write_file": {"path": paths, "content": text},
        "create_file": {"path": paths, "content": text},
        "delete_file": {"path": paths},
        "rename_file": {"path": paths, "new_path": paths},
        "run_command": {
            "command": st.sampled_from(["pwd", "true", "ls"]),
            "cwd": paths,
            "timeout_s": st.one_of(st.none(), st.floats(-1, 5), text),
        },
    }[tool]
    # mostly the expected keys (values hostile), sometimes some missing or an unknown key
    return st.one_of(
        st.fixed_dictionaries(fields),
        st.fixed_dictionaries({}, optional={**fields, "unknown": text}),
    )


def escapes(arguments: dict[str, Any], outside: Path) -> bool:
    """The call names a path that leads outside the workspace (so it must fail)."""
    bad = set(escaping_paths(outside))
    values = [arguments.get(k) for k in ("path", "new_path", "cwd")]
    names = [v for v in values if isinstance(v, str)]
    return any(v in bad or v.startswith(("../", "linkdir/")) for v in names)
