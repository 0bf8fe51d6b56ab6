"""Command arguments as the server receives them: validated strictly against the schema.

``workspace/executeCommand`` carries ``arguments: LSPAny[]`` (raw JSON values); each Cadenza
command takes one object, declared in ``cadenza.schema.commands``. The server turns
``InvalidArguments`` into a JSON-RPC ``InvalidParams`` error (code -32602) whose message names
the field and the problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from cadenza.schema.base import strict_validate

M = TypeVar("M", bound=BaseModel)


class InvalidArguments(ValueError):
    """Command arguments do not match their model; the message names the field and problem."""


_JSON_TYPES: dict[type, str] = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "argument"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def parse_command_args(model: type[M], args: Sequence[Any]) -> M:
    """Validate the positional arguments of a command that takes exactly one object.

    Args:
        model: The schema model of that object.
        args: ``ExecuteCommandParams.arguments`` as received (raw JSON values).

    Returns:
        The validated model.

    Raises:
        InvalidArguments: Not exactly one argument, the argument is not a JSON object, or a
            field is missing, of the wrong type or unknown.
    """
    if len(args) != 1:
        raise InvalidArguments(f"expected exactly one argument (an object), got {len(args)}")
    (arg,) = args
    if not isinstance(arg, dict):
        kind = _JSON_TYPES.get(type(arg), "that")
        raise InvalidArguments(f"the argument must be a JSON object, not {kind}")
    try:
        return strict_validate(model, arg)
    except ValidationError as exc:
        raise InvalidArguments(_describe(exc)) from None
