"""Workspace trust: the person's one recorded decision per folder, as VS Code's Workspace Trust.

A workspace's ``cadenza.toml`` may choose the model or provider, where requests and keys go,
or a program Cadenza runs, or raise a limit of the person's own settings (its *held* settings,
``config.workspace``) only in a folder the person trusted. The decision is theirs, asked once
through the editor when a folder's config has such settings (``lsp.trust``, ``acp.trust``),
set on the command line (``cadenza trust FOLDER``), or given for one headless run (``cadenza
run --trust-workspace``, sent as ``initializationOptions.trustWorkspace``; nothing is recorded
then).

Decisions live outside every workspace, in ``<user state dir>/trust.json``:
``{"folders": {"/abs/resolved/folder": "trusted" | "untrusted"}}``, written atomically. A
decision covers the folder and its sub-folders; the nearest decided folder wins.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import BaseModel, ValidationError

from cadenza.config import APP_NAME, workspace_settings
from cadenza.config.workspace import WorkspaceSettings
from cadenza.secrets import redact
from cadenza.textio import write_atomic

log = logging.getLogger(__name__)

Decision = Literal["trusted", "untrusted"]

TRUST = "Trust this folder"
DISTRUST = "Don't trust"
TRUST_ACTIONS = (TRUST, DISTRUST)
"""The answers the trust question offers, in order (``window/showMessageRequest`` titles)."""


class _Decisions(BaseModel):
    folders: dict[str, Decision] = {}


class TrustStore:
    """The person's trust decisions, by folder (see the module).

    Args:
        path: The file (default: ``<user state dir>/trust.json``).
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or Path(platformdirs.user_state_dir(APP_NAME)) / "trust.json"

    def _load(self) -> _Decisions:
        try:
            return _Decisions.model_validate_json(self.path.read_bytes())
        except FileNotFoundError:
            return _Decisions()
        except (OSError, ValidationError) as exc:
            log.warning("ignoring unreadable trust decisions %s: %s", self.path, exc)
            return _Decisions()

    def decision(self, folder: Path) -> Decision | None:
        """The decision covering ``folder`` (its own, else its nearest decided parent's)."""
        folders = self._load().folders
        resolved = folder.resolve()
        for candidate in (resolved, *resolved.parents):
            found = folders.get(str(candidate))
            if found is not None:
                return found
        return None

    def decisions(self) -> dict[str, Decision]:
        """Every recorded decision, by folder."""
        return dict(self._load().folders)

    def record(self, folder: Path, decision: Decision | None) -> None:
        """Record ``decision`` for ``folder`` (None forgets it).

        Raises:
            OSError: The file cannot be written.
        """
        decisions = self._load()
        key = str(folder.resolve())
        if decision is None:
            decisions.folders.pop(key, None)
        else:
            decisions.folders[key] = decision
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps(decisions.model_dump(), indent=2).encode("utf-8"))


@dataclass(frozen=True, kw_only=True)
class FolderTrust:
    """Where one folder stands: its config's held settings and the person's decision.

    Attributes:
        folder: The workspace folder.
        settings: Its ``cadenza.toml``, classified (None: none, or unusable).
        decision: The recorded decision covering it.
        granted: Trusted for this server only (``initializationOptions.trustWorkspace``).
    """

    folder: Path
    settings: WorkspaceSettings | None
    decision: Decision | None
    granted: bool = False

    @property
    def trusted(self) -> bool:
        """Whether the folder's held settings apply."""
        return self.granted or self.decision == "trusted"

    @property
    def has_held(self) -> bool:
        """Whether the folder's config has settings that need trust."""
        return self.settings is not None and bool(self.settings.held)

    @property
    def undecided(self) -> bool:
        """The person should be asked: held settings, no decision, not granted."""
        return self.has_held and self.decision is None and not self.granted

    def question(self) -> str:
        """The trust question, naming the file and each held setting (what runs, in full)."""
        assert self.settings is not None
        return redact(  # a URL's password or a token in an argument is not shown
            f"{self.settings.path} sets {self.settings.describe_held()}. These settings choose "
            "the model, where requests go, or programs Cadenza runs on this computer, or raise "
            "the limits your own settings set. Trust "
            f"this folder to use them? (Trust only a project you know; you can change it with "
            f"`cadenza trust`.)"
        )


def folder_trust(
    folder: Path, *, granted: bool = False, store: TrustStore | None = None
) -> FolderTrust:
    """Where ``folder`` stands (its config read again, the decision looked up)."""
    try:
        settings = workspace_settings(folder)
    except ValueError:  # unusable: load_config says why; nothing of it applies
        settings = None
    decision = (store or TrustStore()).decision(folder)
    return FolderTrust(folder=folder, settings=settings, decision=decision, granted=granted)


def trust_command(folder: str, revoke: bool, forget: bool, listing: bool) -> str:
    """``cadenza trust [FOLDER] [--revoke | --forget | --list]``: what to print.

    Raises:
        OSError: The decision cannot be written.
    """
    store = TrustStore()
    if listing:
        decisions = store.decisions()
        lines = [f"{decision:9}  {path}" for path, decision in sorted(decisions.items())]
        return "\n".join(lines) if lines else "no trust decisions recorded"
    path = Path(folder).resolve()
    if forget:
        store.record(path, None)
        return f"forgot the decision about {path}: Cadenza asks again when its config needs it"
    store.record(path, "untrusted" if revoke else "trusted")
    if revoke:
        return f"{path} is not trusted: its cadenza.toml cannot choose the model or programs"
    return (
        f"{path} is trusted: its cadenza.toml (and its sub-folders') may choose the model, "
        "the provider and programs Cadenza runs"
    )
