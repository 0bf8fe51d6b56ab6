"""``cadenza acp``: the engine behind the Agent Client Protocol on stdin/stdout.

stdout carries the protocol (newline-delimited JSON-RPC, the SDK's framing); logs go to
stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import cast

from acp import Agent, run_agent, stdio_streams
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES

from cadenza.acp.agent import CadenzaAgent
from cadenza.acp.wire import checked_stdin

log = logging.getLogger(__name__)


async def serve_stdio() -> None:
    """Serve one client on stdio until it closes the stream.

    The SDK reads a checked copy of stdin (``wire.checked_stdin``): lines that are not a
    JSON-RPC object are answered with an error there and never reach it.
    """
    limit = DEFAULT_STDIO_BUFFER_LIMIT_BYTES
    stdin, stdout = await stdio_streams(limit=limit)
    messages, pump = checked_stdin(stdin, stdout, limit)
    agent = CadenzaAgent()
    try:
        await run_agent(cast(Agent, agent), stdout, messages, stdio_buffer_limit_bytes=limit)
    finally:
        pump.cancel()
        await asyncio.gather(pump, return_exceptions=True)
        await agent.aclose()


def acp_main(args: argparse.Namespace) -> int:
    """Run the ACP agent until the client closes stdin; returns the exit status."""
    logging.basicConfig(
        stream=sys.stderr,
        level=str(args.log_level).upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if logging.getLogger().level > logging.DEBUG:
        for noisy in ("httpx", "httpcore"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        asyncio.run(serve_stdio())
    except KeyboardInterrupt:
        return 130
    return 0
