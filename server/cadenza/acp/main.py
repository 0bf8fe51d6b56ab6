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

from acp import Agent, run_agent

from cadenza.acp.agent import CadenzaAgent

log = logging.getLogger(__name__)


async def serve_stdio() -> None:
    """Serve one client on stdio until it closes the stream."""
    agent = CadenzaAgent()
    try:
        await run_agent(cast(Agent, agent))
    finally:
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
