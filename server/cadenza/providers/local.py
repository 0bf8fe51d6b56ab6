"""The embedded local provider: a pinned GGUF model behind a llama-server Cadenza runs itself.

On the first call it checks the model is pulled, starts ``llama-server`` on a free loopback port and
delegates to ``OpenAIProvider`` in JSON-envelope mode: llama.cpp turns the envelope's JSON schema
into a grammar, so every reply is a well-formed envelope, while small models never return native
``tool_calls`` through llama.cpp (measured: docs/local-model.md). A private server restores the
saved KV of the system prompt and tool list before its first request (``prompt_cache``).
Under ``[loop] candidates = N`` the server gets N agent slots, and a request's
``ModelRequest.lane`` picks its slot, so the N candidate replies of a step are written at once.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path

import anyio

from cadenza.config import CadenzaConfig
from cadenza.messages import AssistantReply
from cadenza.providers.base import ModelRequest, ProviderError, TextSink
from cadenza.providers.hardware import list_devices
from cadenza.providers.hub import gguf_size
from cadenza.providers.infill import InfillClient
from cadenza.providers.llama_command import (
    AGENT_SLOT,
    COMPLETION_SLOT,
    LlamaServerError,
    lane_slot,
)
from cadenza.providers.llama_server import LlamaServer
from cadenza.providers.model_catalog import ModelError
from cadenza.providers.model_sources import known_models
from cadenza.providers.models import model_path
from cadenza.providers.openai import OpenAIProvider
from cadenza.providers.prompt_cache import SlotCache, cache_folder, file_identity
from cadenza.providers.recommend import offload_args

log = logging.getLogger(__name__)

DEFAULT_TEMPERATURE = 0.0
"""Greedy decoding unless the request says otherwise: small models wander when sampled."""
DEFAULT_MAX_TOKENS = 1024
"""Completion tokens per request when neither the request nor the config bounds them."""
ENV_SHARED_SERVER = "CADENZA_LOCAL_SERVER_URL"
"""A running llama-server (``http://HOST:PORT``) serving the model, shared with other sessions
(``cadenza batch`` runs one per node): used instead of starting a private one."""


class LocalProvider:
    """``local/MODEL``: a pinned model (or a ``.gguf`` path) served by a private llama-server.

    Args:
        name: ``PROVIDER/MODEL`` as the person named it (e.g. ``local/qwen2.5-coder-1.5b``).
        model: A pinned model name (``cadenza models list``) or the path of a GGUF file.
        config: Gives ``context_size`` (tokens), ``temperature`` / ``max_tokens`` defaults, and
            ``[loop] candidates`` (the agent slots the server gets).
    """

    def __init__(self, *, name: str, model: str, config: CadenzaConfig) -> None:
        self._name = name
        self.model = model
        self._config = config
        self._lock = anyio.Lock()
        self._server: LlamaServer | None = None
        self._delegate: OpenAIProvider | None = None
        self._slots: SlotCache | None = None
        self._infill: InfillClient | None = None
        self._lanes: dict[int, OpenAIProvider] = {}
        """Clients of the other lanes' slots (``ModelRequest.lane`` > 0), made on first use."""

    @property
    def agent_slots(self) -> int:
        """The slots a private server gets for agent requests: one per candidate reply."""
        return self._config.loop.agent_slots()

    @property
    def name(self) -> str:
        """``PROVIDER/MODEL``."""
        return self._name

    @property
    def server(self) -> LlamaServer | None:
        """The running llama-server, once the first call started it."""
        return self._server

    @property
    def slot_cache(self) -> SlotCache | None:
        """The prompt cache kept across processes (None: shared server, or turned off)."""
        return self._slots

    def _resolve_model(self) -> Path:
        """The GGUF file to serve.

        Raises:
            ProviderError: Unknown name, a known model that is not pulled yet, or a malformed
                catalog file.
        """
        try:
            models = known_models()
        except ModelError as exc:
            raise ProviderError(str(exc)) from None
        if self.model in models:
            path = model_path(self.model)
            if path is None:
                raise ProviderError(
                    f"model {self.model} is not pulled; run `cadenza models pull {self.model}`"
                )
            return path
        candidate = Path(self.model).expanduser()
        if candidate.suffix == ".gguf" and candidate.is_file():
            return candidate
        known = ", ".join(models)
        raise ProviderError(
            f"unknown local model {self.model!r}; known: {known} (or the path of a .gguf file)"
        )

    async def _ensure_started(self) -> OpenAIProvider:
        """Start the server on first use, or again if it died (one start at a time)."""
        async with self._lock:
            shared = os.environ.get(ENV_SHARED_SERVER)
            if shared:
                self._delegate = self._delegate or self._client(shared.rstrip("/"), slot=None)
                return self._delegate
            if self._delegate is not None and self._server is not None and self._server.running:
                return self._delegate
            if self._server is not None:
                log.warning("llama-server (pid %d) exited; starting it again", self._server.pid)
                await self._shutdown()
            path = self._resolve_model()
            folder = _usable_folder(cache_folder(path))
            extra: tuple[str, ...] = ("--slot-save-path", str(folder)) if folder else ()
            # The KV cache holds a context per agent slot (``server_command``).
            kv_tokens = self._config.context_size * self.agent_slots
            extra += await anyio.to_thread.run_sync(_gpu_offload, path, kv_tokens)
            try:
                server = await LlamaServer.start(
                    path,
                    ctx_size=self._config.context_size,
                    agent_slots=self.agent_slots,
                    extra_args=extra,
                )
            except LlamaServerError as exc:
                raise ProviderError(f"{self._name}: {exc}") from None
            self._server = server
            self._slots = None
            if folder is not None:
                # Builds from source may all say "b0-unknown": the binary file tells them apart.
                binary = file_identity(server.binary) if server.binary else "?"
                built = f"{server.build}|{binary}"
                self._slots = SlotCache(
                    folder,
                    base_url=server.base_url,
                    model=file_identity(path),
                    server=built,
                    n_ctx=server.n_ctx,
                )
            self._delegate = self._client(server.base_url, slot=AGENT_SLOT)
            return self._delegate

    def _client(self, base_url: str, *, slot: int | None) -> OpenAIProvider:
        """The OpenAI-compatible client of the llama-server at ``base_url``.

        ``slot``: the server slot every agent request uses (a private server's agent slot,
        whose KV the prompt cache saves and restores), or None to let the server pick.
        """
        extra: dict[str, object] = {"cache_prompt": True}
        if slot is not None:
            extra["id_slot"] = slot
        return OpenAIProvider(
            name=self._name,
            base_url=base_url + "/v1",
            model=self.model,
            envelope=True,
            # Streamed, so a cancel stops generation at once; the envelope's JSON is never
            # shown as it is typed (its content is, once parsed).
            stream=True,
            extra_body=extra,
            # One call per reply: small models then see each result before the next call.
            parallel_tool_calls=False,
        )

    async def infill_client(self) -> InfillClient:
        """The ``/infill`` client of this model's llama-server (started if need be).

        A private server keeps a slot for completions (``COMPLETION_SLOT``), so they never
        wait behind an agent step nor evict the agent's cached prompt; a shared server picks.

        Raises:
            ProviderError: The model is not pulled or the server cannot start.
        """
        await self._ensure_started()
        server = self._server
        base_url = server.base_url if server is not None else self._delegate_url()
        if self._infill is None or self._infill.base_url != base_url:
            if self._infill is not None:
                await self._infill.aclose()
            slot = COMPLETION_SLOT if server is not None else None
            self._infill = InfillClient(base_url, slot=slot)
        return self._infill

    def _delegate_url(self) -> str:
        return os.environ.get(ENV_SHARED_SERVER, "").rstrip("/")

    def _with_defaults(self, request: ModelRequest) -> ModelRequest:
        temperature = request.temperature
        if temperature is None:
            temperature = (
                self._config.temperature
                if self._config.temperature is not None
                else DEFAULT_TEMPERATURE
            )
        max_tokens = request.max_tokens or self._config.max_tokens or DEFAULT_MAX_TOKENS
        return dataclasses.replace(request, temperature=temperature, max_tokens=max_tokens)

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        """Run one model call (see ``Provider.complete``); starts the server on first use.

        Raises:
            ProviderError: The model is not pulled, the server cannot start, or the call failed.
        """
        delegate = await self._ensure_started()
        request = self._with_defaults(request)
        if request.lane:
            return await self._lane_client(request.lane, delegate).complete(request, on_text)
        slots = self._slots
        if slots is not None and not slots.started:
            await slots.before_first(delegate.build_body(request))
        reply = await delegate.complete(request, on_text)
        if slots is not None and slots.save_pending:
            await slots.after_first()
        return reply

    def _lane_client(self, lane: int, delegate: OpenAIProvider) -> OpenAIProvider:
        """The client of ``lane``'s slot (a shared server: the agent's client, it picks).

        A lane the server has no slot for (more requests at once than ``agent_slots``) lets
        the server pick an idle slot.
        """
        server = self._server
        if server is None:
            return delegate
        client = self._lanes.get(lane)
        if client is None:
            slot = lane_slot(lane) if lane < self.agent_slots else None
            client = self._lanes[lane] = self._client(server.base_url, slot=slot)
        return client

    async def _shutdown(self) -> None:
        delegate, server, infill = self._delegate, self._server, self._infill
        lanes, self._lanes = list(self._lanes.values()), {}
        self._delegate = self._server = self._slots = self._infill = None
        try:
            for lane in lanes:
                await lane.aclose()
            if infill is not None:
                await infill.aclose()
            if delegate is not None:
                await delegate.aclose()
        finally:
            if server is not None:
                await server.stop()

    async def aclose(self) -> None:
        """Close the HTTP client and stop llama-server (waits until it has exited)."""
        with anyio.CancelScope(shield=True):
            async with self._lock:
                await self._shutdown()


def _usable_folder(folder: Path | None) -> Path | None:
    """``folder``, created; None (no prompt cache) when turned off or it cannot be made."""
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        log.warning("no prompt cache across processes: cannot create %s: %s", folder, exc)
        return None
    return folder


def _gpu_offload(path: Path, context: int) -> tuple[str, ...]:
    """``-ngl`` for llama-server when an accelerator holds the whole model with its context."""
    try:
        size = gguf_size(path)
    except OSError:
        return ()
    args = offload_args(size, context, list_devices())
    if args:
        log.info("llama-server: every layer of %s on the GPU (%s)", path.name, " ".join(args))
    return args
