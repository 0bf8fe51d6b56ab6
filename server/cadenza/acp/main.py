"""``cadenza acp``: the engine behind the Agent Client Protocol on stdin/stdout.

stdout carries the protocol (newline-delimited JSON-RPC, the SDK's framing); logs go to
stderr. SIGTERM ends the agent like a closed stdin (running prompts are cancelled, their
commands' process groups killed), with exit status 143.

Start-up: the client's ``initialize`` is answered before the SDK and the engine are imported
(``early.answer_early``); they load while the client reads the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from types import FrameType
from typing import cast

from cadenza.acp.early import EarlyStart, answer_early
from cadenza.procgroups import kill_live_groups
from cadenza.secrets import redact_log_handlers

log = logging.getLogger(__name__)


async def serve_stdio(terminated: list[int] | None = None, early: EarlyStart | None = None) -> None:
    """Serve one client on stdio until it closes the stream (or SIGTERM).

    The SDK reads a checked copy of stdin (``wire.checked_stdin``): lines that are not a
    JSON-RPC object are answered with an error there and never reach it.

    Args:
        terminated: When given, SIGTERM cancels the serving (sessions are closed as at the
            end of the stream) and the signal number is appended here.
        early: What was read (and answered) from stdin before the SDK was loaded.
    """
    main = asyncio.current_task()
    if terminated is not None and main is not None:

        def _terminate() -> None:
            log.info("SIGTERM: stopping")
            terminated.append(signal.SIGTERM)
            main.cancel()

        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, _terminate)
    try:
        await _serve(early or EarlyStart(pending=b"", initialize=None))
    except asyncio.CancelledError:
        if not terminated:
            raise


async def _serve(early: EarlyStart) -> None:
    from acp import Agent, run_agent, stdio_streams
    from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES

    from cadenza.acp.agent import CadenzaAgent
    from cadenza.acp.wire import checked_stdin

    limit = DEFAULT_STDIO_BUFFER_LIMIT_BYTES
    stdin, stdout = await stdio_streams(limit=limit)
    messages, pump = checked_stdin(stdin, stdout, limit, early.pending)
    agent = CadenzaAgent()
    if early.initialize is not None:
        await agent.take_initialize(early.initialize)
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
    redact_log_handlers()  # no API key in a log line, whichever logger wrote it
    if logging.getLogger().level > logging.DEBUG:
        for noisy in ("httpx", "httpcore"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    terminated: list[int] = []
    try:
        early = _answer_initialize()
        asyncio.run(serve_stdio(terminated, early))
    except KeyboardInterrupt:
        return 130
    except _Terminated:
        return 128 + signal.SIGTERM
    if terminated:
        kill_live_groups()  # any command the cancellation did not reach
        return 128 + terminated[0]
    return 0


class _Terminated(Exception):
    """SIGTERM while waiting for the client's first line."""


def _answer_initialize() -> EarlyStart:
    """``answer_early``, with SIGTERM ending the wait (exit 143, as later on)."""

    def _stop(signum: int, frame: FrameType | None) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        return answer_early()
    finally:
        signal.signal(signal.SIGTERM, previous)
