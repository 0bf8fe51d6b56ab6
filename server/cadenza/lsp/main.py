"""``cadenza serve``: logging to stderr, then the server over stdio, TCP or a WebSocket (``ws``).

stdout carries the protocol (LSP base protocol framing), so nothing else may write to it.
Over stdio the client's ``initialize`` is answered before pygls and the server are imported
(``early``); they load while the client reads the answer.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

from cadenza.lsp.early import EarlyStart, InitializeWatch, PrefixedStdin, answer_early
from cadenza.procgroups import exit_for_signal, kill_live_groups
from cadenza.secrets import redact_log_handlers

if TYPE_CHECKING:
    from cadenza.lsp.server import CadenzaServer

log = logging.getLogger(__name__)


class _DropInvalidParams(logging.Filter):
    """pygls logs every error response as an ERROR with a traceback.

    ``InvalidParams`` answers are the client's mistake, already logged by the server at INFO;
    a traceback for each would bury real failures.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        from pygls.exceptions import JsonRpcInvalidParams

        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, JsonRpcInvalidParams)


def parse_address(address: str, flag: str = "--tcp") -> tuple[str, int]:
    """``"HOST:PORT"`` → ``(host, port)``; an IPv6 host may be bracketed (``[::1]:PORT``).

    Raises:
        ValueError: No colon, or the port is not an integer in 0..65535.
    """
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{flag} expects HOST:PORT, got {address!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def _rule_problem(rules: tuple[list[str], list[str]]) -> str | None:
    """Why a rule of ``--allow``/``--deny`` cannot be read, or None."""
    if not any(rules):
        return None  # nothing to import on the way to ``initialize``
    from cadenza.permission_rules import RuleError, parse_rule

    for text in (*rules[0], *rules[1]):
        try:
            parse_rule(text)
        except RuleError as exc:
            return str(exc)
    return None


def _serve_network(server: CadenzaServer, args: argparse.Namespace) -> bool:
    """``--tcp`` or ``--ws`` (``lsp.tcp``, ``lsp.ws``); False when the options refuse it."""
    from cadenza.lsp.guard import ServeRefused

    flag = "--tcp" if args.tcp else "--ws"
    try:
        host, port = parse_address(args.tcp or args.ws, flag)
        if args.tcp:
            server.start_tcp(host, port, allow_remote=args.allow_remote)
        else:
            from cadenza.lsp.ws import serve_ws

            serve_ws(server, host, port, allow_remote=args.allow_remote, origins=args.ws_origin)
    except (ValueError, ServeRefused) as exc:
        log.error("%s", exc)
        return False
    except OSError as exc:  # the address is in use, or not this machine's
        log.error("%s %s: cannot listen: %s", flag, args.tcp or args.ws, exc.strerror or exc)
        return False
    except SystemExit:  # SIGTERM: the loop unwound, sessions were cancelled
        if not _TERMINATED:
            raise
    return True


_TERMINATED: list[int] = []


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM: unwind the event loop (sessions are cancelled, commands killed).

    A command being started right now is registered first (``procgroups.exit_for_signal``),
    so the exit kills its group too.
    """
    _TERMINATED.append(signum)
    exit_for_signal(signum)


def serve_main(args: argparse.Namespace) -> int:
    """Run the server until the client exits; returns the exit status.

    The status is 0 when the client sent ``shutdown`` before ``exit``, else 1 (LSP §exit;
    also when the stream just closed), over stdio and TCP alike.

    Args:
        args: ``tcp`` (``"HOST:PORT"`` or None for stdio), ``log_level`` (e.g. ``INFO``) and
            ``trust_workspace`` (a folder the person trusts for this server's life, or None).
    """
    logging.basicConfig(
        stream=sys.stderr,
        level=str(args.log_level).upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    redact_log_handlers()  # no API key in a log line, whichever logger wrote it
    # pygls logs every message body at INFO; keep that for --log-level DEBUG only.
    if logging.getLogger().level > logging.DEBUG:
        # Per-message and per-HTTP-request lines (llama-server health polls included) are noise
        # in editors that file every stderr line as an error (Neovim's lsp.log).
        for noisy in ("pygls", "httpx", "httpcore"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_DropInvalidParams())
    # SIGTERM ends the server like a closed stream: sessions are cancelled (their commands'
    # process groups killed) and atexit handlers run, instead of leaving children behind.
    signal.signal(signal.SIGTERM, _terminate)
    rules = (list(getattr(args, "allow", None) or []), list(getattr(args, "deny", None) or []))
    if (problem := _rule_problem(rules)) is not None:
        print(f"cadenza serve: error: {problem}", file=sys.stderr)
        return 2
    stdio = not args.tcp and not getattr(args, "ws", None)
    try:
        early = answer_early() if stdio else EarlyStart(pending=b"", answered=None)
    except SystemExit:  # SIGTERM while waiting for the first frame
        return 128 + _TERMINATED[0] if _TERMINATED else 1
    from cadenza.lsp.server import create_server

    server = create_server()
    server.person_rules = rules
    if getattr(args, "trust_workspace", None):
        server.trusted_folder = Path(args.trust_workspace).resolve()
    if args.tcp or getattr(args, "ws", None):
        if not _serve_network(server, args):
            return 2
    else:
        # Duck-typed streams: pygls only calls readline/read and write/flush on them.
        stdin = cast(BinaryIO, PrefixedStdin(early.pending, sys.stdin.buffer))
        stdout = sys.stdout.buffer
        if early.request_id is not None:
            stdout = cast(BinaryIO, InitializeWatch(stdout, early))
        server.start_io(stdin, stdout)
    if _TERMINATED:
        # The stdin reader thread may still block in read(); do not wait for it at exit.
        kill_live_groups()
        logging.shutdown()
        os._exit(128 + _TERMINATED[0])
    return 0 if server.shutdown_received else 1
