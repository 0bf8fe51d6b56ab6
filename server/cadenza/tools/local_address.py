"""Whether a URL's host is this machine or its local network (loopback, private, link-local).

A page the model fetches may tell it to fetch another: a prompt injection can point ``browse``
at a router's admin page, a database's HTTP port on ``localhost`` or the cloud's metadata
service (``169.254.169.254``, which hands out the machine's credentials). Such an address is
asked about every time (``tools.browse``); this module only says whether one is local.

A host counts as local when it is, or resolves to, an address that is not globally routable
(``ipaddress``'s ``is_global`` is false): loopback (``127.0.0.0/8``, ``::1``), the unspecified
address (``0.0.0.0``, ``::``), private ranges (``10/8``, ``172.16/12``, ``192.168/16``,
``fc00::/7``), link-local (``169.254/16``, ``fe80::/10``), shared and reserved ranges; an IPv4
address inside IPv6 (``::ffff:127.0.0.1``) counts as the IPv4 address. Any spelling the
resolver accepts (``127.1``, ``2130706433``, ``0x7f.0.0.1``) is resolved first, so it is caught
too. A name that does not resolve is not local (the fetch then fails to connect).
"""

from __future__ import annotations

import ipaddress
import socket

import anyio

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

LOCAL_REASON = "this address is on your machine or local network"
"""What the person reads about a local address (plain words, no range names)."""


def is_local(address: IPAddress) -> bool:
    """Whether ``address`` is this machine's or a local network's (not globally routable)."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or address.sixtofour
        if inner is not None:
            return is_local(inner)
    return not address.is_global or address.is_multicast


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


async def resolve(host: str, port: int) -> list[IPAddress]:
    """The addresses ``host`` resolves to (none when it does not resolve)."""
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return []
    found: list[IPAddress] = []
    for *_, sockaddr in infos:
        address = _literal(str(sockaddr[0]))
        if address is not None:
            found.append(address)
    return found


async def local_address(host: str, port: int) -> IPAddress | None:
    """The local address ``host`` is or resolves to, or None when it is not local.

    Args:
        host: A URL's host: a name or an address (IPv6 with or without brackets).
        port: The URL's port (the resolver wants one; it does not change the answer).
    """
    literal = _literal(host)
    addresses = [literal] if literal is not None else await resolve(host, port)
    return next((a for a in addresses if is_local(a)), None)
