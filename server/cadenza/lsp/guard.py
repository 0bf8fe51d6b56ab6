"""Who may reach the network faces (``--tcp``, ``--ws``): the interface and the token.

The server runs commands with the person's rights, so a socket is as powerful as a shell:

- **Interface**: only loopback addresses by default. Any other needs ``--allow-remote`` *and*
  a token.
- **Token**: when ``CADENZA_SERVE_TOKEN`` is set, every client must present it (how depends on
  the face); it is compared in constant time. It lives in the environment, never on the
  command line, where ``ps`` shows it.
"""

from __future__ import annotations

import hmac
import ipaddress
import os

TOKEN_ENV = "CADENZA_SERVE_TOKEN"


class ServeRefused(ValueError):
    """The options do not allow this address (a remote one without a token)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is the loopback interface."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def configured_token() -> str | None:
    """The token clients must present, or None when ``CADENZA_SERVE_TOKEN`` is unset or empty."""
    return os.environ.get(TOKEN_ENV) or None


def check_address(flag: str, host: str, *, allow_remote: bool, token: str | None) -> None:
    """Raise ``ServeRefused`` unless ``host`` is loopback, or remote allowed with a token.

    Args:
        flag: The option that named the address (``--tcp``, ``--ws``), for the message.
        host: The address to listen on.
        allow_remote: ``--allow-remote`` was given.
        token: The configured token, or None.
    """
    if is_loopback(host):
        return
    if not allow_remote:
        raise ServeRefused(f"{flag} {host}: not a loopback address; add --allow-remote")
    if token is None:
        raise ServeRefused(f"{flag} {host} with --allow-remote needs {TOKEN_ENV} set")


def token_matches(given: str, token: str) -> bool:
    """Whether ``given`` is ``token`` (constant time)."""
    return hmac.compare_digest(given.encode(), token.encode())
