"""llama-server's prompt cache kept across processes: one slot's KV saved to disk, then restored.

Each new llama-server evaluates the system prompt and tool list again (about 1,200 tokens, half
of a short task's time on 2 cores). llama-server can write a slot's KV cache to a file in its
``--slot-save-path`` folder and load it into a fresh process (``POST /slots/0?action=save`` and
``?action=restore``); with ``cache_prompt`` it then reuses the tokens the next prompt shares with
the restored ones, and evaluates only the rest.

A file is named by a key of everything that decides the KV: the model file (name, size, mtime),
the llama-server build, the context size and the prompt prefix (the system message, which
carries the tool list in envelope mode). A file of another key is never loaded. A save or
restore that fails (an old llama-server, a full disk, a corrupt file) is logged and ignored: the
request evaluates its prompt as it would without the cache.

API: https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md (``/slots``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import platformdirs

from cadenza.config import APP_NAME
from cadenza.providers.llama_command import AGENT_SLOT

log = logging.getLogger(__name__)

ENV_FOLDER = "CADENZA_PROMPT_CACHE"
"""The folder for saved prompt caches instead of the user cache folder's; ``off`` turns it off."""
SLOT_ID = AGENT_SLOT
"""The slot saved and restored: the agent's (completions use another)."""
KEEP_FILES = 4
"""Saved files kept per model folder (the newest by use); older ones are deleted."""
SAVE_TIMEOUT_S = 60.0
"""Bound of one save or restore request (seconds); they take well under one on a local disk."""
STALE_TMP_S = 3600.0
"""A half-written file older than this (seconds) is left over from a killed process."""
SUFFIX = ".slot"
TMP_SUFFIX = ".tmp"


def cache_folder(model_path: Path) -> Path | None:
    """The folder for ``model_path``'s saved caches, or None when turned off."""
    override = os.environ.get(ENV_FOLDER, "").strip()
    if override.lower() == "off":
        return None
    base = (
        Path(override).expanduser()
        if override
        else Path(platformdirs.user_cache_dir(APP_NAME)) / "prompt-cache"
    )
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in model_path.stem)
    return base / (name or "model")


def file_identity(path: Path) -> str:
    """``name:size:mtime_ns`` of a file (``?`` when it cannot be read): changes when it does."""
    try:
        st = path.stat()
    except OSError:
        return f"{path.name}:?"
    return f"{path.name}:{st.st_size}:{st.st_mtime_ns}"


def prompt_prefix(body: Mapping[str, Any]) -> bytes | None:
    """The part of a chat request every session of the same settings shares: its system message.

    None when the first message is not a system message (nothing worth keeping).
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return None
    first = messages[0]
    if not isinstance(first, dict) or first.get("role") != "system":
        return None
    return json.dumps(first, sort_keys=True, ensure_ascii=False).encode()


def cache_key(*, model: str, server: str, n_ctx: int | None, prefix: bytes) -> str:
    """The file stem for one model, llama-server build, context size and prompt prefix."""
    digest = hashlib.sha256()
    for part in (model.encode(), server.encode(), str(n_ctx).encode(), prefix):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()[:40]


def prune(folder: Path, keep: int = KEEP_FILES) -> None:
    """Keep the ``keep`` newest saved files (by mtime) and drop stale half-written ones."""
    try:
        entries = [(p, p.stat().st_mtime) for p in folder.iterdir() if p.is_file()]
    except OSError:
        return
    saved = sorted((e for e in entries if e[0].suffix == SUFFIX), key=lambda e: e[1], reverse=True)
    now = time.time()
    stale = [p for p, m in entries if p.suffix == TMP_SUFFIX and now - m > STALE_TMP_S]
    for path in [p for p, _ in saved[keep:]] + stale:
        with contextlib.suppress(OSError):
            path.unlink()


class SlotCache:
    """Restores the saved KV of a prompt prefix before a server's first request, or saves it.

    Args:
        folder: The server's ``--slot-save-path`` (one folder per model).
        base_url: The llama-server (``http://127.0.0.1:PORT``).
        model: ``file_identity`` of the model file.
        server: The llama-server build (``/props`` ``build_info``, else the binary's identity).
        n_ctx: The server's context size (tokens).
        keep: Saved files kept in ``folder``.
    """

    def __init__(
        self,
        folder: Path,
        *,
        base_url: str,
        model: str,
        server: str,
        n_ctx: int | None,
        keep: int = KEEP_FILES,
    ) -> None:
        self.folder = folder
        self._base_url = base_url
        self._model = model
        self._server = server
        self._n_ctx = n_ctx
        self._keep = keep
        self._started = False
        self._save_key: str | None = None
        self.restored_tokens: int | None = None
        """Tokens the restore loaded (None: nothing was restored)."""
        self.saved_key: str | None = None
        """The key this process saved (None: nothing saved)."""

    @property
    def started(self) -> bool:
        """Whether ``before_first`` ran (only the server's first request may restore)."""
        return self._started

    @property
    def save_pending(self) -> bool:
        """Whether a reply should be followed by ``after_first`` (a save not yet made)."""
        return self._save_key is not None

    async def before_first(self, body: Mapping[str, Any]) -> None:
        """Before the server's first request: restore the prefix's file, or plan to save it.

        Later calls do nothing: the slot then holds this process's own prompts.
        """
        if self._started:
            return
        self._started = True
        prefix = prompt_prefix(body)
        if prefix is None:
            return
        key = cache_key(model=self._model, server=self._server, n_ctx=self._n_ctx, prefix=prefix)
        path = self.folder / (key + SUFFIX)
        if path.is_file():
            restored = await self._post("restore", path.name)
            n_restored = restored.get("n_restored") if restored else None
            if isinstance(n_restored, int) and n_restored > 0:
                self.restored_tokens = n_restored
                with contextlib.suppress(OSError):
                    os.utime(path)  # newest by use: pruned last
                log.info("restored %d prompt tokens from %s", n_restored, path)
                return
            log.warning("could not restore the prompt cache %s; deleting it", path)
            with contextlib.suppress(OSError):
                path.unlink()
        self._save_key = key

    async def after_first(self) -> None:
        """After the first reply: save the slot once when no file had its key.

        Awaited, not left running: llama-server runs the save before the next request anyway,
        and it takes well under a second once per key.
        """
        key, self._save_key = self._save_key, None
        if key is None:
            return
        # llama-server writes the file itself; a name of our own, renamed once the save
        # succeeded, keeps a half-written file (killed process, full disk) from being restored.
        tmp = f"{key}.{os.getpid()}{TMP_SUFFIX}"
        saved = await self._post("save", tmp)
        target = self.folder / (key + SUFFIX)
        try:
            if not saved or not isinstance(saved.get("n_saved"), int):
                raise OSError("llama-server did not save the slot")
            os.replace(self.folder / tmp, target)
        except OSError as exc:
            log.warning("could not save the prompt cache to %s: %s", target, exc)
            with contextlib.suppress(OSError):
                (self.folder / tmp).unlink()
            return
        self.saved_key = key
        log.info("saved %s prompt tokens to %s", saved.get("n_saved"), target)
        prune(self.folder, self._keep)

    async def _post(self, action: str, filename: str) -> dict[str, Any] | None:
        """``POST /slots/0?action=ACTION``; the JSON answer, or None (logged) on any failure."""
        try:
            async with httpx.AsyncClient(base_url=self._base_url, trust_env=False) as client:
                response = await client.post(
                    f"/slots/{SLOT_ID}",
                    params={"action": action},
                    json={"filename": filename},
                    timeout=SAVE_TIMEOUT_S,
                )
            data = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("llama-server slot %s failed: %s", action, exc)
            return None
        if response.status_code != 200 or not isinstance(data, dict):
            log.warning("llama-server slot %s answered %d: %s", action, response.status_code, data)
            return None
        return data
