"""A git repository whose own configuration runs programs, each leaving a marker file.

``hostile_repo`` commits a few files, then sets (in ``.git/config`` and a file it includes)
``core.fsmonitor``, filter drivers (``clean``/``smudge``, ``process``; ``required``), a
textconv driver, ``diff.external``, ``core.pager`` and ``core.hooksPath`` with every hook, each
a script that writes ``MARKS/<name>``. Tracked files are touched so that ``git status`` must
hash them again (through the clean filter) and one is changed so that ``git diff`` has a diff.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

HOOKS = ("post-index-change", "post-checkout", "post-commit", "pre-commit", "reference-transaction")


def _script(folder: Path, name: str, marks: Path, tail: str) -> Path:
    path = folder / name
    path.write_text(f'#!/bin/sh\necho "$@" >> "{marks / name}"\n{tail}\n', encoding="utf-8")
    path.chmod(0o755)
    return path


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def hostile_repo(root: Path, marks: Path) -> Path:
    """A committed repository under ``root`` whose config writes to ``marks`` when obeyed."""
    marks.mkdir(parents=True, exist_ok=True)
    repo = root / "repo"
    repo.mkdir(parents=True)
    (repo / "app.py").write_text("print('app')\n", encoding="utf-8")
    (repo / "notes.txt").write_text("notes\n", encoding="utf-8")
    (repo / "data.bin").write_text("data\n", encoding="utf-8")
    (repo / ".gitattributes").write_text(
        "*.py filter=evil diff=evil\n*.txt filter=inc\n*.bin filter=evilproc\n", encoding="utf-8"
    )
    _git(repo, "init", "--quiet")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "init")
    tools = root / "tools"
    tools.mkdir()
    hooks = repo / ".git" / "hostile-hooks"
    hooks.mkdir()
    for hook in HOOKS:
        _script(hooks, hook, marks, "exit 0")
    settings = {
        "core.fsmonitor": _script(tools, "fsmonitor", marks, "exit 1"),
        "filter.evil.clean": _script(tools, "clean", marks, "cat"),
        "filter.evil.smudge": _script(tools, "smudge", marks, "cat"),
        "filter.evil.required": "true",
        "filter.evilproc.process": _script(tools, "process", marks, "exit 1"),
        "diff.evil.textconv": _script(tools, "textconv", marks, 'cat "$1"'),
        "diff.external": _script(tools, "external-diff", marks, "exit 0"),
        "core.pager": _script(tools, "pager", marks, "cat"),
        "core.hooksPath": hooks,
        "include.path": root / "included.cfg",
    }
    for key, value in settings.items():
        _git(repo, "config", key, str(value))
    clean_inc = _script(tools, "clean-included", marks, "cat")
    (root / "included.cfg").write_text(f'[filter "inc"]\n\tclean = {clean_inc}\n', "utf-8")
    later = time.time() + 5  # a stat that differs from the index: git must hash the content
    for name in ("app.py", "notes.txt", "data.bin"):
        os.utime(repo / name, (later, later))
    (repo / "app.py").write_text("print('changed')\n", encoding="utf-8")
    return repo


def written(marks: Path) -> list[str]:
    """The markers written so far."""
    return sorted(p.name for p in marks.iterdir())
