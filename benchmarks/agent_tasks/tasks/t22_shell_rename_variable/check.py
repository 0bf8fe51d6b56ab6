"""Checker of t22_shell_rename_variable."""

from __future__ import annotations

import re
from pathlib import Path

from benchmarks.agent_tasks.checks import CheckFailed, Verdict, ok, run_bash


# The run shows the behaviour is kept; then the script's assignments and expansions (comments
# left out) show which variable it uses. No shell parser is available to Python here.
def check(workspace: Path) -> Verdict:
    done = run_bash(workspace, "backup.sh", "photos")
    if done.returncode != 0:
        raise CheckFailed(f"backup.sh failed: {done.stderr.strip()[-200:]}")
    if done.stdout.splitlines() != ["backing up photos", "archive: photos.tar"]:
        raise CheckFailed(f"backup.sh printed {done.stdout.splitlines()}")
    text = (workspace / "backup.sh").read_text(encoding="utf-8")
    code = "\n".join(
        line.split("#", 1)[0] if not line.startswith("#!") else "" for line in text.splitlines()
    )
    if re.search(r"\$\{?SRC\b|\bSRC=", code):
        raise CheckFailed("backup.sh still sets or expands SRC")
    if not re.search(r"\bSOURCE_DIR=", code):
        raise CheckFailed("backup.sh does not set SOURCE_DIR")
    return ok("SRC renamed to SOURCE_DIR; output unchanged")
