"""Shared settings of the reliability suites: CI mode by default, long mode by env var.

``CADENZA_RELIABILITY_LONG=1`` multiplies every count (see docs/lab/reliability.md).
"""

from __future__ import annotations

import os

LONG = os.environ.get("CADENZA_RELIABILITY_LONG", "") not in ("", "0")


def scaled(ci: int, long: int) -> int:
    """``ci`` in CI mode, ``long`` with ``CADENZA_RELIABILITY_LONG=1``."""
    return long if LONG else ci
