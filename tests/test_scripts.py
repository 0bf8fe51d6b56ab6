"""The scripts a person runs first: ``--help`` prints their usage and sets up nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
STUB = '#!/usr/bin/env bash\ntouch "{marker}"\nexit 1\n'
"""A stand-in for what sets up (the setup script, the Python that makes .venv): it leaves a
mark, so a script that set up before printing its usage is caught in a second."""


@pytest.mark.parametrize("script", ["test.sh", "demo.sh", "setup.sh", "install-vscode.sh"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_usage_and_sets_up_nothing(tmp_path: Path, script: str, flag: str) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / script, tmp_path / "scripts" / script)
    marker = tmp_path / "set-up"
    stub = STUB.format(marker=marker)
    for name in ("setup.sh", "chromium.sh"):  # what the script would run first
        if name != script:
            (tmp_path / "scripts" / name).write_text(stub)
    python = tmp_path / "python3"
    python.write_text(stub)
    python.chmod(0o755)
    env = {**os.environ, "PYTHON": str(python), "CODE": "true"}
    done = subprocess.run(
        ["bash", str(tmp_path / "scripts" / script), flag],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"usage: bash scripts/{script}")
    assert not marker.exists() and not (tmp_path / ".venv").exists()
