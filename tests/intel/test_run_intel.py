"""The code-intelligence tools through headless ``cadenza run`` with a real language server.

``cadenza run`` spawns ``cadenza serve``; the scripted fake model calls ``rename_symbol``,
``find_references`` and ``diagnostics``, answered by the Python language server the server
starts itself (no editor offers one here). The rename changes the files on disk through the
edit path; a language server killed between calls is started again and the session goes on; an
edit that breaks the file carries the new error in its result; no server outlives the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cadenza.intel.servers import find_servers
from tests.support.fake_openai import FakeOpenAI, call, text

RUN_TIMEOUT_S = 180
INVENTORY = "def calc_total(items):\n    return sum(items)\n"
REPORT = "from inventory import calc_total\n\n\ndef main():\n    print(calc_total([1, 2]))\n"

pytestmark = pytest.mark.skipif(
    "python" not in find_servers(), reason="no Python language server installed"
)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "inventory.py").write_text(INVENTORY)
    (root / "report.py").write_text(REPORT)
    return root


@pytest.fixture
def env(tmp_path: Path, fake: FakeOpenAI) -> dict[str, str]:
    values = dict(os.environ)
    values.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="x", NO_COLOR="1")
    values.pop("CADENZA_MODEL", None)
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        (tmp_path / name.lower()).mkdir()
        values[name] = str(tmp_path / name.lower())
    return values


def tool_results(fake: FakeOpenAI) -> dict[str, str]:
    """The tool messages of the last request, by call id."""
    messages: list[dict[str, Any]] = fake.requests[-1]["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


def servers_left(name: str) -> list[str]:
    """Processes named ``name`` whose parent is gone with the run (orphans)."""
    out = subprocess.run(["pgrep", "-x", name, "-P", "1"], capture_output=True, text=True)
    return out.stdout.split()


def test_rename_references_diagnostics_and_a_killed_server(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    spec, _ = find_servers()["python"]
    kill = f"kill -9 -- -$(pgrep -P $PPID -x {spec.name[:15]})"  # this run's server only
    fake.script(
        call(
            "rename_symbol",
            {
                "path": "inventory.py",
                "line": 1,
                "symbol": "calc_total",
                "new_name": "compute_total",
            },
            "c1",
        ),
        call("find_references", {"path": "report.py", "line": 5, "symbol": "compute_total"}, "c2"),
        call("find_references", {"path": "report.py", "line": 2, "symbol": "compute_total"}, "c3"),
        call("run_command", {"command": kill}, "c4"),
        call("diagnostics", {}, "c5"),
        call(
            "edit_file",
            {
                "path": "inventory.py",
                "old_string": "return sum(items)",
                "new_string": "return sum(itemz)",
            },
            "c6",
        ),
        text("Renamed and checked."),
    )
    before = set(servers_left(spec.name[:15]))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cadenza",
            "run",
            "--workspace",
            str(ws),
            "--yes",
            "--model",
            "openai/test",
            "rename calc_total to compute_total",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (ws / "report.py").read_text() == REPORT.replace("calc_total", "compute_total")
    tools = fake.requests[0]["tools"]
    assert {"rename_symbol", "find_references", "diagnostics"} <= {
        t["function"]["name"] for t in tools
    }
    assert "rename_symbol renames" in fake.requests[0]["messages"][0]["content"]
    results = tool_results(fake)
    assert results["c1"].startswith("renamed `calc_total` to `compute_total` in 2 file(s):")
    assert "report.py:5: print(compute_total([1, 2]))" in results["c1"]
    assert results["c2"].splitlines() == [
        "3 place(s) use `compute_total`:",
        "inventory.py:1: def compute_total(items):",
        "report.py:1: from inventory import compute_total",
        "report.py:5: print(compute_total([1, 2]))",
    ]
    assert "`compute_total` is not on line 2 of report.py" in results["c3"]
    assert "it occurs on line(s) 1, 5" in results["c3"]
    assert results["c5"] == "no problems reported in the workspace"  # a new server answered
    assert "New errors after this edit" in results["c6"]
    assert "inventory.py:2: error:" in results["c6"] and "itemz" in results["c6"]
    assert set(servers_left(spec.name[:15])) <= before
