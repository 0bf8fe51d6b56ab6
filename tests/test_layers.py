"""The engine stays below the faces: importing any engine module loads no protocol or HTTP library.

``cadenza.engine`` knows neither pygls, lsprotocol nor httpx (import-linter checks the
import graph in CI; this checks what really loads, lazy imports included). Each module is
imported in a fresh interpreter, so one test's imports cannot hide another's.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest

import cadenza.engine

FORBIDDEN = ("pygls", "lsprotocol", "httpx", "playwright", "trafilatura")
"""Protocol libraries (the faces'), HTTP (providers' and browse's), and the browsers' libraries
(loaded by the tools that use them, on first use)."""

ENGINE_MODULES = sorted(
    ["cadenza.engine"]
    + [info.name for info in pkgutil.walk_packages(cadenza.engine.__path__, "cadenza.engine.")]
)

PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
forbidden = json.loads(sys.argv[2])
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(forbidden))))
"""


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_importing_an_engine_module_loads_no_face_or_http_library(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module, json.dumps(FORBIDDEN)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [], f"importing {module} loaded {done.stdout.strip()}"


def test_every_engine_module_is_probed() -> None:
    assert "cadenza.engine.session" in ENGINE_MODULES
    assert len(ENGINE_MODULES) > 10
