"""The workspace trust question over LSP, asked once before the first session in the folder.

At ``initialize`` the folder's ``cadenza.toml`` is read; when it has settings that need trust
(``config.workspace``) and the person never decided about the folder (``host.trust``), those
settings are held back and :class:`TrustQuestion` asks with ``window/showMessageRequest``
(every editor shows it; the headless client asks on its terminal or declines) before the first
``cadenza.startSession`` or ``cadenza.promptSession`` runs: ``Trust this folder`` records the
decision and applies the settings at once; ``Don't trust`` records it too; a dismissed or
unanswered question (bounded by the permission timeout) records nothing, and the folder is
asked about again by the next server. Either way but trust, a one-line warning names what was
ignored and how to trust.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import anyio
from lsprotocol import types
from pygls.lsp.server import LanguageServer

from cadenza.config import CadenzaConfig
from cadenza.config.workspace import untrusted_note
from cadenza.host.trust import DISTRUST, TRUST, TRUST_ACTIONS, FolderTrust, TrustStore
from cadenza.lsp import prompts
from cadenza.lsp.options import load_server_config

log = logging.getLogger(__name__)


class TrustQuestion:
    """The pending trust question of the folder of ``initialize`` (see the module).

    Args:
        server: The server (asks the client; shows the warnings).
        trust: Where the folder stands (undecided, with held settings).
        options: ``initializationOptions`` as received (the config is loaded again with them).
        configure: Applies the configuration loaded after the person trusted the folder.
        timeout_s: How long the question waits for an answer (seconds).
        store: The recorded decisions.
    """

    def __init__(
        self,
        server: LanguageServer,
        trust: FolderTrust,
        *,
        options: Any,
        configure: Callable[[CadenzaConfig], None],
        timeout_s: float,
        store: TrustStore | None = None,
    ) -> None:
        self._server = server
        self._trust = trust
        self._options = options
        self._configure = configure
        self._timeout_s = timeout_s
        self._store = store or TrustStore()
        self._lock = asyncio.Lock()
        self.settled = False

    async def settle(self) -> None:
        """Ask once (later callers wait for the first answer); apply a trust at once."""
        async with self._lock:
            if self.settled:
                return
            self.settled = True
            answer = await self._ask()
            folder = self._trust.folder
            if answer in (TRUST, DISTRUST):
                try:
                    self._store.record(folder, "trusted" if answer == TRUST else "untrusted")
                except OSError as exc:
                    log.warning("could not record the trust decision for %s: %s", folder, exc)
            if answer == TRUST:
                loaded = load_server_config(folder, self._options, store=self._store, granted=True)
                self._configure(loaded.config)
                log.info("workspace %s trusted: its cadenza.toml applies in full", folder)
                return
            assert self._trust.settings is not None  # undecided: it has held settings
            self._warn(untrusted_note(self._trust.settings))

    async def _ask(self) -> str | None:
        answer: str | None = None
        with anyio.move_on_after(self._timeout_s):
            try:
                answer = await prompts.choose(
                    self._server, self._trust.question(), list(TRUST_ACTIONS)
                )
            except prompts.PromptError as exc:
                log.warning("the workspace trust question failed: %s", exc)
        return answer

    def _warn(self, message: str) -> None:
        self._server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )
