"""``cadenza acp``: the engine behind the Agent Client Protocol on stdin/stdout.

stdout carries the protocol (newline-delimited JSON-RPC, the SDK's framing); logs go to
stderr. SIGTERM ends the agent like a closed stdin (running prompts are cancelled, their
commands' process groups killed), with exit status 143.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from typing import cast

from acp import Agent, run_agent, stdio_streams
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES

from cadenza.acp.agent import CadenzaAgent
from cadenza.acp.wire import checked_stdin
from cadenza.procgroups import kill_live_groups

log = logging.getLogger(__name__)


async def serve_stdio(terminated: list[int] | None = None) -> None:
    """Serve one client on stdio until it closes the stream (or SIGTERM).

    The SDK reads a checked copy of stdin (``wire.checked_stdin``): lines that are not a
    JSON-RPC object are answered with an error there and never reach it.

    Args:
        terminated: When given, SIGTERM cancels the serving (sessions are closed as at the
            end of the stream) and the signal number is appended here.
    """
    main = asyncio.current_task()
    if terminated is not None and main is not None:

        def _terminate() -> None:
            log.info("SIGTERM: stopping")
            terminated.append(signal.SIGTERM)
            main.cancel()

        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, _terminate)
    try:
        await _serve()
    except asyncio.CancelledError:
        if not terminated:
            raise


async def _serve() -> None:
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
    terminated: list[int] = []
    try:
        asyncio.run(serve_stdio(terminated))
    except KeyboardInterrupt:
        return 130
    if terminated:
        kill_live_groups()  # any command the cancellation did not reach
        return 128 + terminated[0]
    return 0
