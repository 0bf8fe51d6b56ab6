from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.support import Sandbox, make_sandbox


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    """A fresh copy of examples/inventory with private XDG state and config folders."""
    return make_sandbox(tmp_path)
