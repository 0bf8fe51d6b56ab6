"""The ``cadenza`` command: serve, acp, run, reply, undo, trust, models, batch, doctor."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from cadenza import __version__
from cadenza.batch.cli import add_batch_parser
from cadenza.cli_flags import add_headless_flags

RUN_EPILOG = (
    "exit status: 0 the task is done (end_turn); 1 the session ended in error, failed\n"
    "(the agent gave up) or aborted (e.g. context overflow), or the server could not start\n"
    "or refused the session; 3 it stopped before done: max steps, or it waits for the\n"
    "person (needs_user_input, waiting_human); 130 interrupted with Ctrl-C, 143 stopped by\n"
    "SIGTERM (the session is cancelled first; --output json still prints its object)."
)
"""The epilog of ``cadenza run --help`` (the statuses of ``cadenza.client.cli.exit_status``)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="cadenza", description="An LLM coding agent server.")
    parser.add_argument("--version", action="version", version=f"cadenza {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="speak LSP-framed JSON-RPC on stdio (or TCP)")
    serve.add_argument(
        "--tcp",
        metavar="HOST:PORT",
        help="listen on TCP instead of stdio; loopback only unless --allow-remote; "
        "CADENZA_SERVE_TOKEN set: clients must pass initializationOptions.token",
    )
    serve.add_argument(
        "--ws",
        metavar="HOST:PORT",
        help="listen on a WebSocket (browser editors); loopback only unless --allow-remote; "
        "CADENZA_SERVE_TOKEN set: clients must pass ?token=",
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow --tcp or --ws on a non-loopback address (needs CADENZA_SERVE_TOKEN)",
    )
    serve.add_argument(
        "--ws-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a page origin allowed besides loopback pages (repeatable)",
    )
    # vscode-languageclient and others append --stdio by default; stdio is already the default.
    serve.add_argument("--stdio", action="store_true", help="speak on stdio (the default)")
    serve.add_argument(
        "--log-level",
        default="WARNING",
        help="logging level on stderr (default WARNING; INFO, DEBUG for more)",
    )
    serve.add_argument(
        "--trust-workspace",
        metavar="FOLDER",
        help="trust this workspace folder for the server's life: its cadenza.toml may choose "
        "the model and programs to run; nothing is recorded (cadenza run --trust-workspace)",
    )

    for rule_flag, effect in (("--allow", "run without asking"), ("--deny", "are refused unasked")):
        serve.add_argument(
            rule_flag,
            action="append",
            default=[],
            metavar="RULE",
            help=f"calls that {effect} for the server's life, as cadenza.toml's [permissions] "
            f"{rule_flag[2:]} (repeatable; cadenza run {rule_flag} passes its own)",
        )

    run = sub.add_parser(
        "run",
        help="run one agent task headlessly on a workspace",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=RUN_EPILOG,
    )
    run.add_argument("task", help="what the agent should do")
    run.add_argument(
        "--continue",
        dest="continue_id",
        metavar="ID",
        help="send the task as the next turn of session ID (same conversation); --model and "
        "--workflow switch them from this turn on",
    )
    run.add_argument(
        "-i",
        "--interactive",
        action="store_true",
        help="after each turn that ends well, ask on the terminal for the next message and send "
        "it to the same session; an empty line or Ctrl-D ends the run (not with --output json)",
    )
    run.add_argument("--workspace", default=".", help="workspace folder (default: current)")
    run.add_argument("--model", help="PROVIDER/MODEL, e.g. local/qwen2.5-coder-1.5b")
    run.add_argument(
        "--provider",
        help="provider for a --model given without one (or alone: PROVIDER/default), "
        "e.g. --provider openai --base-url http://127.0.0.1:8080/v1",
    )
    run.add_argument(
        "--base-url",
        metavar="URL",
        help="base URL of the model's HTTP server, e.g. http://127.0.0.1:8080/v1 "
        "(sets CADENZA_BASE_URL for the server)",
    )
    run.add_argument(
        "--workflow",
        metavar="NAME",
        help="workflow to run: default, plan-implement-review, or one of the workspace's "
        ".cadenza/workflows/*.toml (default: default)",
    )
    run.add_argument(
        "--events",
        metavar="FILE",
        help="append every request and notification from the server to FILE as JSON lines",
    )
    run.add_argument(
        "--yes",
        action="store_true",
        help="never prompt: apply every change without asking, decline questions and permission "
        "prompts (gated tools such as run_command do not run, except what --allow rules allow)",
    )
    run.add_argument(
        "--max-steps",
        type=_step_count,
        help="model requests allowed in the session (1 to 1000; default 25)",
    )
    run.add_argument(
        "--time-budget",
        type=_time_budget,
        metavar="SECONDS",
        help="wall time the session may take, e.g. 600, 90s or 10m (0: none; default: 10m for "
        "local models, none for the others); then it stops and says what it reached (exit "
        "status 3, as at the step limit)",
    )
    run.add_argument(
        "--review",
        choices=["auto", "confirm"],
        help="confirm: show each change as a diff and ask y/n before writing it; auto: write "
        "at once (default: the server's review setting, auto)",
    )
    add_headless_flags(run)

    reply = sub.add_parser(
        "reply",
        help="answer a session that waits for you (needs_user_input, waiting_human) and run it on",
    )
    reply.add_argument("session_id", help="the session's id (printed by cadenza run)")
    reply.add_argument(
        "task", metavar="text", help="the answer (after waiting_human: what you did, or '')"
    )
    reply.add_argument("--workspace", default=".", help="workspace folder (default: current)")
    reply.add_argument(
        "--yes", action="store_true", help="never prompt: apply every change, decline questions"
    )
    reply.add_argument("--events", metavar="FILE", help="as for cadenza run")
    add_headless_flags(reply)
    reply.set_defaults(model=None, workflow=None, max_steps=None, review=None, time_budget=None)

    acp = sub.add_parser(
        "acp", help="speak the Agent Client Protocol on stdio (Zed, Neovim ACP clients)"
    )
    acp.add_argument(
        "--log-level",
        default="WARNING",
        help="logging level on stderr (default WARNING; INFO, DEBUG for more)",
    )

    undo = sub.add_parser(
        "undo", help="put back every file a session changed (files changed since are refused)"
    )
    undo.add_argument("session_id", help="the session's id (printed at the end of cadenza run)")
    undo.add_argument("--workspace", default=".", help="workspace folder (default: current)")

    trust = sub.add_parser(
        "trust",
        help="trust a workspace folder: its cadenza.toml may then choose the model and programs",
    )
    trust.add_argument("folder", nargs="?", default=".", help="the folder (default: current)")
    what = trust.add_mutually_exclusive_group()
    what.add_argument(
        "--revoke", action="store_true", help="do not trust it (its settings are ignored)"
    )
    what.add_argument(
        "--forget", action="store_true", help="forget the decision (Cadenza asks again)"
    )
    what.add_argument("--list", action="store_true", help="list every decision")

    complete = sub.add_parser(
        "complete", help="print the inline completion at a position of a file (headless)"
    )
    complete.add_argument("path", help="the file")
    complete.add_argument("line", type=int, help="line, from 1")
    complete.add_argument("column", type=int, help="column, from 1 (the cursor is before it)")
    complete.add_argument(
        "--workspace", default=None, help="workspace folder (default: current, if it holds PATH)"
    )

    add_batch_parser(sub)
    models = sub.add_parser("models", help="manage the embedded local models")
    models_sub = models.add_subparsers(dest="models_command", required=True)
    pull = models_sub.add_parser("pull", help="download, assemble and verify a model")
    pull.add_argument(
        "name",
        nargs="?",
        help="a model name (default: the default local model) or hf:ORG/REPO[:FILE or QUANT]",
    )
    models_sub.add_parser("list", help="list the known models and whether they are pulled")
    sub.add_parser(
        "doctor",
        help="check the setup (local model, llama-server, language servers, browser, editors)",
    )
    return parser


def _step_count(text: str) -> int:
    """``--max-steps``: an integer from 1 to 1000 (the server's own bounds)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"{value} is not between 1 and 1000")
    return value


def _time_budget(text: str) -> float:
    """``--time-budget``: seconds (``600``, ``90s``) or minutes (``10m``), 0 to 86,400 s."""
    value = text.strip().lower()
    scale = 60.0 if value.endswith("m") else 1.0
    try:
        seconds = float(value.removesuffix("m").removesuffix("s")) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration (seconds, e.g. 600 or 90s, or minutes, e.g. 10m)"
        ) from None
    if not 0 <= seconds <= 86_400:
        raise argparse.ArgumentTypeError(f"{text!r} is not between 0 and 24 hours")
    return seconds


def model_with_provider(model: str | None, provider: str | None) -> str | None:
    """``--provider P --model M`` → ``P/M``; ``--provider P`` alone → ``P/default``."""
    if provider is None or (model is not None and "/" in model):
        return model
    return f"{provider}/{model or 'default'}"


def unpulled_model(args: argparse.Namespace) -> str | None:
    """Why ``cadenza run`` cannot start: its local model is known but not pulled (None: it can).

    Said before a server starts, so that no session is opened for a model that cannot answer.
    The model is ``--model``, else the one a session in the workspace would use (``cadenza.toml``,
    ``CADENZA_MODEL``, the default). Nothing is checked when the session's own model goes on
    (``--continue`` without ``--model``), when a shared model server serves local models, or
    while the folder's trust question is open (its ``cadenza.toml`` may choose another model).
    """
    from cadenza.providers.local import ENV_SHARED_SERVER
    from cadenza.providers.model_catalog import ModelError
    from cadenza.providers.model_sources import known_models
    from cadenza.providers.models import model_path

    if os.environ.get(ENV_SHARED_SERVER):
        return None
    model = args.model or (None if args.continue_id else _workspace_model(args))
    provider, _, name = (model or "").partition("/")
    try:
        spec = known_models().get(name) if provider == "local" else None
    except ModelError:  # a broken catalog file: the session says what is wrong
        return None
    if spec is None or model_path(spec) is not None:
        return None
    return (
        f"the model {model} is not downloaded yet: run `cadenza models pull {name}` first, "
        "or choose a model that is (`cadenza models list`)"
    )


def _workspace_model(args: argparse.Namespace) -> str | None:
    """The model a session in ``--workspace`` would use; None while that depends on trust."""
    from cadenza.config import ConfigError, load_config
    from cadenza.host.trust import folder_trust
    from cadenza.providers.registry import resolve_model_name

    folder = Path(args.workspace)
    trust = folder_trust(folder, granted=bool(args.trust_workspace))
    if trust.undecided:
        return None
    try:
        return resolve_model_name(None, load_config(folder, [], trusted=trust.trusted))
    except ConfigError:  # the session says what is wrong
        return None


def _one_request(args: argparse.Namespace) -> int:
    """``cadenza undo`` and ``cadenza complete``: one request to a server they start."""
    if args.command == "undo":
        from cadenza.client.undo import undo_main

        return undo_main(args)
    from cadenza.client.complete import complete_main

    return complete_main(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``cadenza`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        from cadenza.lsp.main import serve_main

        return serve_main(args)
    if args.command == "run":
        from cadenza.client.cli import run_main

        if args.base_url:
            # The spawned server inherits the environment; the provider registry reads it.
            os.environ["CADENZA_BASE_URL"] = args.base_url
        args.model = model_with_provider(args.model, args.provider)

        return run_main(args, before_start=unpulled_model)
    if args.command == "reply":
        from cadenza.client.cli import run_main

        return run_main(args)
    if args.command == "acp":
        from cadenza.acp.main import acp_main

        return acp_main(args)
    if args.command in ("undo", "complete"):
        return _one_request(args)
    if args.command == "trust":
        from cadenza.host.trust import trust_command

        print(trust_command(args.folder, args.revoke, args.forget, args.list))
        return 0
    if args.command == "doctor":
        from cadenza.doctor import doctor_main

        return doctor_main()
    if args.command == "batch":
        from cadenza.batch.main import batch_main

        return batch_main(args)
    from cadenza.providers.models_cli import models_main

    return models_main(args)


if __name__ == "__main__":
    sys.exit(main())
