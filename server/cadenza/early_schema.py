"""Check an ``initialize`` against its library's own schema before the library is loaded.

Both faces answer ``initialize`` before their protocol library is imported (``lsp.early``,
``acp.early``): the answer itself does not depend on the library, but whether the library
*accepts* the request does, and a malformed request must still get the library's error. So
each face ships a JSON Schema of the ``initialize`` params generated from its library
(``acp.initialize_schema``, ``lsp.initialize_schema``; never written by hand), and answers
early only params that pass it. A schema is generated no wider than its library (tests hold
each to that with generated params, and fail when the committed file differs from what the
installed library generates); anything it refuses takes the usual path, where the library
answers, error included. ``jsonschema_rs`` checks it: a compiled library, a few milliseconds
to import and to build the validator (``fastjsonschema`` took a third of a second to compile
lsprotocol's schema: more than the early answer saves).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


def env_allows() -> bool:
    """``CADENZA_EARLY_INITIALIZE=0`` turns the early answers off."""
    return os.environ.get("CADENZA_EARLY_INITIALIZE") != "0"


def dumps(schema: dict[str, Any]) -> str:
    """A schema file's text (stable: the tests compare it with the generated one)."""
    return json.dumps(schema, indent=1, sort_keys=True) + "\n"


def load_validator(path: Path) -> Callable[[Any], bool]:
    """Whether a value passes the schema in ``path``."""
    import jsonschema_rs

    validator = jsonschema_rs.validator_for(json.loads(path.read_text("utf-8")))

    def accepts(value: Any) -> bool:
        try:
            return bool(validator.is_valid(value))
        except Exception:  # anything it cannot judge takes the library's path
            return False

    return accepts
