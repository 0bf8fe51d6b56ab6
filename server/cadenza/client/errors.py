"""Why the headless client could not run a session; every message is meant for the person."""

from __future__ import annotations


class ClientError(Exception):
    """The client could not run the session; the message is meant for the person."""


class ServerStartError(ClientError):
    """The server could not be started or initialized (missing command, crash, refusal)."""


class ServerExitedError(ClientError):
    """The server process ended before the session did."""


class SessionStartError(ClientError):
    """The server refused ``cadenza.startSession`` (e.g. invalid arguments or unknown model)."""
