"""One model file fetched over HTTP (a catalog file's ``url``), streamed into a ``HashingWriter``.

The writer hashes and counts what passes and refuses to go past the pinned size, so a wrong file
fails before it fills the disk; ``models.pull`` checks the hash and size once it is complete.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from cadenza.providers.http import LOOPBACK_HOSTS
from cadenza.providers.model_catalog import ModelError
from cadenza.providers.model_wheels import CHUNK_BYTES, HashingWriter

CONNECT_TIMEOUT_S = 30.0
"""Bound on connecting to the download host (seconds)."""
READ_TIMEOUT_S = 120.0
"""Bound on one silence of the download host mid-transfer (seconds); no bound on the whole."""


def http_download(url: str, out: HashingWriter, report: Callable[[], None]) -> None:
    """Stream ``url`` into ``out``, calling ``report`` after each chunk.

    Redirects are followed; ``HTTP(S)_PROXY`` is honoured except for a loopback host.

    Raises:
        ModelError: The host cannot be reached, answers with an error status, or goes silent;
            or the file is larger than the pinned size.
    """
    timeout = httpx.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    try:
        # As for model servers: a proxy from the environment must not capture a loopback host.
        trust_env = httpx.URL(url).host not in LOOPBACK_HOSTS
        with (
            httpx.Client(timeout=timeout, follow_redirects=True, trust_env=trust_env) as client,
            client.stream("GET", url) as response,
        ):
            if response.status_code != httpx.codes.OK:
                raise ModelError(f"downloading {url} failed: HTTP {response.status_code}")
            for chunk in response.iter_bytes(CHUNK_BYTES):
                out.write(chunk)
                report()
    except httpx.HTTPError as exc:
        raise ModelError(f"downloading {url} failed: {exc or type(exc).__name__}") from None
