"""The base of every ``cadenza/*`` wire shape: camelCase models, parsed strictly or leniently.

One declaration serves both ends of the wire, which read it with different needs:

- The server validates what it *receives* (command arguments, the answers to its requests)
  with :func:`strict_validate`: an unknown field or an unknown value of an enumeration is an
  error naming the field, so a malformed command is an Invalid Params error.
- Everything else is lenient: the constructor and a plain ``model_validate`` drop unknown
  fields, and an enumeration marked :data:`OPEN` keeps a value it does not know as the string
  that came. The headless client parses the server's messages this way, so a newer server's
  extra fields or new stop reasons never break an older client. The server builds its own
  messages with the constructor, where the type checker already holds every field to its type.

Python code uses snake_case; the wire is camelCase (as LSP and ACP are), by alias.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

STRICT = "cadenza_strict"
"""The validation-context key that asks for a strict parse (see :func:`strict_validate`)."""

MAX_REPLY_CHARS = 20_000
"""Longest reply to a waiting session (characters): more would overflow a small model's context
and end the session instead of resuming it."""

M = TypeVar("M", bound=BaseModel)


def is_strict(info: ValidationInfo) -> bool:
    """Whether the parse under way is :func:`strict_validate`'s."""
    context = info.context
    return isinstance(context, dict) and context.get(STRICT) is True


def strict_validate(model: type[M], data: Any) -> M:
    """Validate what the server receives: unknown fields and unknown enumeration values fail.

    Raises:
        pydantic.ValidationError: ``data`` does not fit ``model``.
    """
    return model.model_validate(data, context={STRICT: True})


def _keep_unknown(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
    try:
        return handler(value)
    except ValidationError:
        if isinstance(value, str) and not is_strict(info):
            return value
        raise


OPEN = WrapValidator(_keep_unknown)
"""Marks an enumeration open (``Annotated[StopReason, OPEN]``): a lenient parse keeps a value
this protocol version does not know (a newer server's) as the string it came as."""


@functools.cache
def _known_keys(model: type[BaseModel]) -> frozenset[str]:
    """Field names and their camelCase aliases."""
    keys: set[str] = set()
    for name, info in model.model_fields.items():
        keys.add(name)
        if info.alias:
            keys.add(info.alias)
    return frozenset(keys)


class WireModel(BaseModel):
    """Base of every wire shape: camelCase on the wire, frozen; unknown fields as the mode says.

    A strict parse refuses unknown fields (pydantic's own ``extra_forbidden`` error); any other
    validation drops them before pydantic sees them.
    """

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, frozen=True, alias_generator=to_camel
    )

    @model_validator(mode="before")
    @classmethod
    def _drop_unknown(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict) or is_strict(info):
            return data
        known = _known_keys(cls)
        if data.keys() <= known:
            return data
        return {key: value for key, value in data.items() if key in known}

    def wire(self) -> dict[str, Any]:
        """The JSON object sent on the wire (camelCase keys)."""
        return self.model_dump(by_alias=True, mode="json")


class SparseWireModel(WireModel):
    """A wire shape whose top-level fields that are None are left out (absent, not null)."""

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if value is not None}


class OpenWireModel(WireModel):
    """A shape whose unknown fields are ignored even by a strict parse.

    For the client's answers to the server's requests: a client may add fields of its own.
    """

    model_config = ConfigDict(extra="ignore")


class UnknownKind(WireModel):
    """Base of the catch-all member of a union: a kind this protocol version does not know.

    Only a lenient parse accepts one (a newer server's kind, which the client then ignores);
    a strict parse refuses it.
    """

    model_config = ConfigDict(extra="allow")

    @model_validator(mode="before")
    @classmethod
    def _drop_unknown(cls, data: Any, info: ValidationInfo) -> Any:
        """Overrides the base's: a strict parse refuses the kind; a lenient one keeps it whole."""
        if is_strict(info):
            raise ValueError(f"unknown kind: {data!r:.80}")
        return data


def encodable(value: str) -> str:
    r"""``value`` if it is valid Unicode text (no lone surrogates such as ``\ud800``).

    JSON allows escaped lone surrogates; they cannot be written as UTF-8 (transcripts, model
    requests), so they are refused where text enters.

    Raises:
        ValueError: The text holds a lone surrogate.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text holds a lone surrogate (not valid Unicode)") from None
    return value
