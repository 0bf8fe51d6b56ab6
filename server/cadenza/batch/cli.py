"""The parser of ``cadenza batch TASKS.jsonl --out DIR`` (the command is in :mod:`.main`).

Only argparse here: the ``cadenza`` parser is built for every subcommand, and ``serve`` or
``acp`` must not import the client or Ray to start.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_batch_parser(sub: Any) -> None:
    """Add ``batch`` to the ``cadenza`` subcommands (``sub``: argparse's subparsers action)."""
    from cadenza.cli_flags import rule

    batch = sub.add_parser(
        "batch",
        help="run many headless sessions over many repositories as Ray tasks (cadenza[batch])",
        description="Each line of TASKS.jsonl: {id?, repo, ref?, task, model?, workflow?, "
        "allow?, max_steps?}. Results land in DIR/<id>/ (result.json, patch.diff, "
        "events.jsonl, transcript.jsonl) and DIR/summary.json. See docs/batch.md.",
    )
    batch.add_argument("tasks", metavar="TASKS.jsonl", help="the task file, one JSON per line")
    batch.add_argument("--out", required=True, metavar="DIR", help="folder for the results")
    batch.add_argument(
        "--address", help="an existing Ray cluster (e.g. auto, HOST:6379); default: a local one"
    )
    batch.add_argument(
        "--max-concurrency",
        type=_positive,
        metavar="N",
        help="sessions at once (default: every slot of the nodes' local model servers, "
        "else 2 per CPU)",
    )
    batch.add_argument(
        "--model-slots",
        type=_positive,
        default=2,
        metavar="N",
        help="the local model: sessions each node's shared llama-server serves at once "
        "(its --parallel; default 2)",
    )
    batch.add_argument("--model", help="PROVIDER/MODEL for tasks that name none")
    batch.add_argument(
        "--allow",
        metavar="RULE",
        action="append",
        type=rule,
        default=[],
        help="allow the permission prompts RULE covers in every task (repeatable), "
        "e.g. --allow run_command or --allow 'run_command:pytest *'",
    )
    batch.add_argument(
        "--retry-crashed",
        type=int,
        default=1,
        metavar="N",
        help="submit a task again when its worker died, up to N times (default 1); a "
        "session that failed is a result and never retried",
    )
    batch.add_argument(
        "--resume", action="store_true", help="skip tasks whose DIR/<id>/result.json exists"
    )
    batch.add_argument(
        "--session-timeout",
        type=float,
        default=3600.0,
        metavar="S",
        help="cancel a session running longer than S seconds (default 3600)",
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value
