"""lsprotocol's ``InitializeParams`` as a JSON Schema: checked before pygls is imported.

``lsp.early`` answers ``initialize`` before pygls and lsprotocol load, so it must know without
them whether pygls would accept the params (a malformed request still gets pygls's error).
``initialize.schema.json`` beside this module is generated from lsprotocol itself, never
written by hand: ``python -m cadenza.lsp.initialize_schema`` writes it again, and a test fails
when the committed file differs from what the installed lsprotocol generates. See
``early_schema``.

lsprotocol ships its types as attrs classes, structured by cattrs with its hooks: each class
becomes an object of its fields (camelCase, as lsprotocol renames them; those without a
default are required), enums their values, unions ``anyOf``, ``LSPAny`` anything. Integers
are bounded to LSP's ``uinteger`` (lsprotocol checks ``integer``/``uinteger`` ranges), which
is no wider than either. Whatever the schema accepts, pygls accepts: a property test holds it
to that with generated params.
"""

from __future__ import annotations

import collections.abc
import enum
import types as pytypes
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cadenza.early_schema import dumps, load_validator

SCHEMA_FILE = Path(__file__).with_name("initialize.schema.json")
_UINTEGER_MAX = 2**31 - 1
_SEQUENCES = (list, tuple, collections.abc.Sequence)
_SCALARS: dict[Any, dict[str, Any]] = {
    type(None): {"type": "null"},
    bool: {"type": "boolean"},
    int: {"type": "integer", "minimum": 0, "maximum": _UINTEGER_MAX},
    float: {"type": "number"},
    str: {"type": "string"},
}


def camel_case(name: str) -> str:
    """The wire name lsprotocol's converter gives an attrs field (``_hooks``' rule)."""
    parts = name.removesuffix("_").split("_")
    return parts[0] + "".join(part.title() for part in parts[1:])


class _Generator:
    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.defs: dict[str, Any] = {}

    def schema(self, tp: Any) -> dict[str, Any]:
        import attrs

        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if tp is Any:
            return {}
        if tp in _SCALARS:
            return dict(_SCALARS[tp])
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            values = [member.value for member in tp]
            kind = "integer" if all(type(v) is int for v in values) else "string"
            return {"type": kind, "enum": values}
        if origin in (typing.Union, pytypes.UnionType):
            return {"anyOf": [self.schema(arg) for arg in args]}
        if origin in _SEQUENCES and len(args) == 1:
            return {"type": "array", "items": self.schema(args[0])}
        if isinstance(tp, type) and attrs.has(tp):
            if tp.__name__ not in self.defs:
                self.defs[tp.__name__] = {}  # a cycle refers to it meanwhile
                self.defs[tp.__name__] = self.object_schema(tp)
            return {"$ref": f"#/$defs/{tp.__name__}"}
        raise TypeError(f"no schema for {tp!r}: extend the generator (and its property test)")

    def object_schema(self, cls: type) -> dict[str, Any]:
        import attrs

        hints = typing.get_type_hints(cls, self.namespace)
        fields = attrs.fields(cls)
        return {
            "type": "object",
            "properties": {camel_case(f.name): self.schema(hints[f.name]) for f in fields},
            "required": [camel_case(f.name) for f in fields if f.default is attrs.NOTHING],
        }


def generate() -> dict[str, Any]:
    """The schema of ``initialize`` params from the installed lsprotocol."""
    from lsprotocol import types

    generator = _Generator(vars(types))
    root = generator.object_schema(types.InitializeParams)
    return {**root, "$defs": dict(sorted(generator.defs.items()))}


def accepts_params() -> Callable[[Any], bool]:
    """Whether ``initialize`` params pass the committed schema (no lsprotocol import)."""
    return load_validator(SCHEMA_FILE)


if __name__ == "__main__":
    SCHEMA_FILE.write_text(dumps(generate()), "utf-8")
