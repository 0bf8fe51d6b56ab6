"""``cadenza models pull [NAME or hf:ORG/REPO[:FILE or QUANT]]`` and ``cadenza models list``."""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)
from rich.table import Table

from cadenza.config import DEFAULT_LOCAL_MODEL
from cadenza.providers.hub import is_hub_ref
from cadenza.providers.model_catalog import ModelError
from cadenza.providers.model_sources import get_spec, known_models
from cadenza.providers.models import PullProgress, model_path, models_dir, pull_named

DEFAULT_MODEL_NAME = DEFAULT_LOCAL_MODEL.removeprefix("local/")
MEASURABLE_S = 0.5
"""A pull's time is said from this many seconds on (a faster one did no real work)."""


def models_main(args: argparse.Namespace) -> int:
    """Run ``cadenza models SUBCOMMAND``; returns the exit status (1 on any failure).

    Args:
        args: Parsed arguments with ``models_command`` (``pull`` or ``list``) and, for ``pull``,
            ``name`` (None: the default local model).
    """
    console = Console(stderr=True)
    if args.models_command == "list":
        return _list(Console())
    return _pull(console, args.name or DEFAULT_MODEL_NAME)


def _list(console: Console) -> int:
    try:
        models = known_models()
    except ModelError as exc:
        Console(stderr=True).print(f"[red]error:[/red] {exc}")
        return 1
    directory = models_dir()
    table = Table(title=f"Local models in {directory}")
    table.add_column("name")
    table.add_column("size", justify="right")
    table.add_column("pulled")
    table.add_column("description")
    for name, spec in models.items():
        pulled = model_path(name, directory=directory) is not None
        default = " (default)" if name == DEFAULT_MODEL_NAME else ""
        table.add_row(
            name + default,
            f"{spec.size / 1e6:,.0f} MB" if spec.size else "Hub",
            "yes" if pulled else "no",
            spec.description,
        )
    console.print(table)
    return 0


def _pull(console: Console, name: str) -> int:
    try:
        hub = is_hub_ref(name)
        label = name if hub else get_spec(name).name
        hub = hub or get_spec(name).hub is not None
    except ModelError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 1
    started = time.monotonic()
    fetched = False  # whether anything was downloaded (not a file already in place)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(f"{label}: starting", total=None)

        def show(event: PullProgress) -> None:
            nonlocal fetched
            fetched = fetched or event.phase in ("download", "assemble")
            _show(bar, task, label, event)

        try:
            local, path = pull_named(name, progress=show)
        except ModelError as exc:
            bar.stop()
            console.print(f"[red]error:[/red] {exc}")
            return 1
        except KeyboardInterrupt:
            bar.stop()
            kept = "pull again to resume" if hub else "nothing was kept"
            console.print(f"[red]interrupted[/red]; {kept}")
            return 1
    console.print(f"local/{local}: {pulled_note(fetched, time.monotonic() - started)}")
    print(path)
    return 0


def pulled_note(fetched: bool, elapsed: float) -> str:
    """What a finished pull says about the file: downloaded now, or there already.

    Args:
        fetched: Bytes were downloaded (and hashed on the way) in this pull.
        elapsed: Seconds the pull took; said only when measurable. A file already in place
            whose stamp vouches for it takes no time; one without a stamp (or a Hub file
            already in the Hub's cache) is hashed again, which takes a while.
    """
    took = f" in {elapsed:.1f} s" if elapsed >= MEASURABLE_S else ""
    if fetched:
        return f"downloaded and verified (SHA-256 ok){took}"
    if took:
        return f"already downloaded; checksum ok (checked{took})"
    return "already downloaded; checksum ok"


def _show(bar: Progress, task: TaskID, name: str, event: PullProgress) -> None:
    if event.phase == "download" and event.parts == 1:
        what = f"{name}: downloading"
    elif event.phase == "download":
        what = f"{name}: downloading part {event.part}/{event.parts}"
    elif event.phase == "assemble":
        what = f"{name}: assembling part {event.part}/{event.parts}"
    elif event.phase == "verify":
        what = f"{name}: checking SHA-256 of part {event.part}/{event.parts}"
    else:
        what = f"{name}: verified"
    bar.update(task, description=what, completed=event.bytes_done, total=event.bytes_total or None)
