"""Command arguments as the server receives them: validated strictly against the schema.

``workspace/executeCommand`` carries ``arguments: LSPAny[]`` (raw JSON values); each Cadenza
command takes one object, declared in ``cadenza.schema.commands``. The server turns
``InvalidArguments`` into a JSON-RPC ``InvalidParams`` error (code -32602) whose message names
the field and the problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.uris import to_fs_path, uri_scheme
from pygls.workspace import Workspace

from cadenza.schema.base import strict_validate
from cadenza.schema.commands import DocumentIdentifier

M = TypeVar("M", bound=BaseModel)


class InvalidArguments(ValueError):
    """Command arguments do not match their model; the message names the field and problem."""


class UnusableChoice(InvalidArguments):
    """Well-formed arguments that name what cannot be used: an unknown provider or workflow.

    The message is the person's to read as it is (it says what is known and what to do), so
    the JSON-RPC error carries it without the ``Invalid Params: COMMAND:`` prefix that helps a
    client's author find a malformed argument.
    """


def invalid_params_message(command: str, exc: InvalidArguments) -> str:
    """The message of the ``InvalidParams`` error that answers ``exc`` for ``command``."""
    if isinstance(exc, UnusableChoice):
        return str(exc)
    return f"Invalid Params: {command}: {exc}"


_JSON_TYPES: dict[type, str] = {
    dict: "an object",
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


def arguments_error(params: Any) -> JsonRpcInvalidParams | None:
    """The error that answers ``workspace/executeCommand`` params whose ``arguments`` is no array.

    The protocol's converter takes any sequence for ``LSPAny[]``: a string would reach the
    command as its characters (``"abc"``, three arguments), an object as its keys. Check the
    raw params before they are converted.
    """
    if not isinstance(params, dict) or not isinstance(command := params.get("command"), str):
        return None
    arguments = params.get("arguments")
    if arguments is None or isinstance(arguments, list):
        return None
    kind = _JSON_TYPES.get(type(arguments), "that")
    problem = InvalidArguments(f"arguments must be an array (of one object), got {kind}")
    return JsonRpcInvalidParams(message=invalid_params_message(command, problem))


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


def document_path(document: DocumentIdentifier | None) -> Path | None:
    """The file of a ``file:`` URI, or None (priming checks it is inside the workspace)."""
    if document is None or uri_scheme(document.uri) != "file":
        return None
    fs_path = to_fs_path(document.uri)
    return Path(fs_path) if fs_path else None


def folder_of(uri: str) -> Path:
    """The existing local folder named by a ``file:`` URI.

    Raises:
        InvalidArguments: Not a ``file:`` URI, or not an existing folder.
    """
    if uri_scheme(uri) != "file":
        raise InvalidArguments(f"rootUri must be a file: URI, got {uri!r}")
    fs_path = to_fs_path(uri)
    if fs_path is None or not Path(fs_path).is_dir():
        raise InvalidArguments(f"rootUri {uri!r} is not an existing folder")
    return Path(fs_path).resolve()


def workspace_root(workspace: Workspace, root_uri: str | None) -> Path:
    """The folder ``root_uri`` names, else the client's first workspace folder (or root).

    Raises:
        InvalidArguments: None given and the client opened no folder, or not a local folder.
    """
    if root_uri is not None:
        return folder_of(root_uri)
    for folder in workspace.folders.values():
        return folder_of(folder.uri)
    if workspace.root_uri:
        return folder_of(workspace.root_uri)
    raise InvalidArguments("no rootUri given and the client opened no workspace folder")


def command_args(
    command: str, model: type[M], arguments: Sequence[Any], *, optional: bool = False
) -> M:
    """A command's one argument as ``model``; malformed: ``InvalidParams`` naming ``command``.

    ``optional``: no argument at all means the model's defaults.
    """
    if optional and not arguments:
        return model()
    try:
        return parse_command_args(model, arguments)
    except InvalidArguments as exc:
        raise JsonRpcInvalidParams(message=invalid_params_message(command, exc)) from None


def request_failed(message: str) -> JsonRpcException:
    """A command that cannot be done now (``RequestFailed``, -32803)."""
    return JsonRpcException(message=message, code=types.LSPErrorCodes.RequestFailed.value)


def optional_root(workspace: Workspace, command: str, root_uri: str | None) -> Path | None:
    """The workspace folder a command names, or None when it names none and none is open.

    A ``rootUri`` that names no open folder is ``InvalidParams`` naming ``command``.
    """
    try:
        return workspace_root(workspace, root_uri)
    except InvalidArguments as exc:
        if root_uri is not None:
            raise JsonRpcInvalidParams(message=invalid_params_message(command, exc)) from None
        return None
