"""Why the headless client could not run a session; every message is meant for the person."""

from __future__ import annotations

import re

from pygls.exceptions import JsonRpcException


class ClientError(Exception):
    """The client could not run the session; the message is meant for the person."""


class ServerStartError(ClientError):
    """The server could not be started or initialized (missing command, crash, refusal)."""


class ServerExitedError(ClientError):
    """The server process ended before the session did."""


class SessionStartError(ClientError):
    """The server refused ``cadenza.startSession`` (e.g. invalid arguments or unknown model)."""


_PROTOCOL_PREFIX = re.compile(r"^Invalid [Pp]arams:\s*(?:cadenza\.\w+:\s*)?")


def rpc_message(exc: JsonRpcException) -> str:
    """The reason in a JSON-RPC error from the server, in the person's words.

    The message without the protocol's ``Invalid Params: COMMAND:`` prefix, which names the
    error code and the command for a client's author, not for the person.
    """
    message = _PROTOCOL_PREFIX.sub("", (exc.message or "").strip())
    return message or "the server gave no reason"
