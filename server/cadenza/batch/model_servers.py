"""The embedded local model in a batch: one ``llama-server`` per node, shared by its sessions.

Alone, each session of ``local/MODEL`` starts a llama-server of its own (one slot, the whole
model in memory again). In a batch, a Ray actor per node and model
(:class:`NodeModelServer`, pinned to its node) starts one llama-server with ``--parallel
SLOTS`` (each slot gets the configured context), and the sessions that run on that node use
it: the worker hands its URL to the session's server (``CADENZA_LOCAL_SERVER_URL``, read by
the local provider). The driver gives each node at most SLOTS such sessions at once
(:class:`SlotTable`), so no request waits for a slot behind another session's.

The actors stop their servers when the batch ends, also after Ctrl-C; a server also dies with
its actor's process (``PR_SET_PDEATHSIG``, :mod:`cadenza.providers.llama_server`), so an actor
killed by Ray leaves no orphan.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from cadenza.config import load_config
from cadenza.providers.llama_command import LlamaServerError
from cadenza.providers.llama_server import LlamaServer
from cadenza.providers.model_catalog import ModelError
from cadenza.providers.model_sources import known_models
from cadenza.providers.models import model_path

DEFAULT_SLOTS = 2
"""Sessions one node's llama-server serves at once (``--model-slots``)."""
LOCAL_PREFIX = "local/"
ENV_SHARED_SERVER = "CADENZA_LOCAL_SERVER_URL"
"""The variable the local provider reads (:data:`cadenza.providers.local.ENV_SHARED_SERVER`)."""


class ModelServerError(Exception):
    """A node's model server cannot start (not pulled, no binary, it exited); says why."""


class ServedModel(BaseModel):
    """A running shared llama-server, as the driver and the workers see it."""

    model: str
    """``local/NAME`` as the tasks name it."""
    node_id: str
    url: str
    """``http://127.0.0.1:PORT``: reachable from the node it runs on."""
    pid: int
    slots: int


def gguf_path(model: str) -> Path:
    """The GGUF file of ``local/NAME`` (a pinned name or a ``.gguf`` path).

    Raises:
        ModelServerError: Unknown, not pulled on this node, or a malformed catalog file.
    """
    name = model.removeprefix(LOCAL_PREFIX)
    try:
        models = known_models()
    except ModelError as exc:
        raise ModelServerError(str(exc)) from None
    if name in models:
        path = model_path(name)
        if path is None:
            raise ModelServerError(f"model {name} is not pulled: run cadenza models pull {name}")
        return path
    candidate = Path(name).expanduser()
    if candidate.suffix == ".gguf" and candidate.is_file():
        return candidate
    raise ModelServerError(f"unknown local model {name!r}")


class NodeModelServer:
    """The Ray actor's class (Ray-free, so it is testable alone): one llama-server.

    Its methods run on the actor's main thread, which lives as long as the actor process,
    so the server's parent-death signal fires only when the actor dies.
    """

    def __init__(self, model: str, slots: int, node_id: str) -> None:
        self.model = model
        self.slots = slots
        self.node_id = node_id
        self._server: LlamaServer | None = None

    def start(self) -> ServedModel:
        """Start llama-server (once) and describe it.

        Raises:
            ModelServerError: It cannot start.
        """
        if self._server is None or not self._server.running:
            path = gguf_path(self.model)
            ctx = load_config(None).context_size
            try:
                self._server = asyncio.run(
                    LlamaServer.start(
                        path,
                        ctx_size=ctx * self.slots,
                        extra_args=("--parallel", str(self.slots)),
                    )
                )
            except LlamaServerError as exc:
                raise ModelServerError(f"{self.model} on node {self.node_id}: {exc}") from None
        server = self._server
        return ServedModel(
            model=self.model,
            node_id=self.node_id,
            url=server.base_url,
            pid=server.pid,
            slots=self.slots,
        )

    def stop(self) -> None:
        """Stop llama-server and wait until it has exited (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            asyncio.run(server.stop())


@dataclass(kw_only=True)
class SlotTable:
    """Which node may take the next session of a served model: at most its slots at once."""

    served: dict[str, dict[str, ServedModel]] = field(default_factory=dict)
    """By model, then node id."""
    busy: dict[tuple[str, str], int] = field(default_factory=dict)

    def serves(self, model: str | None) -> bool:
        """Whether ``model`` runs on the batch's shared servers."""
        return model is not None and model in self.served

    def take(self, model: str) -> str | None:
        """A node with a free slot for ``model`` (the least busy), now taken; None: all full."""
        free = [
            (self.busy.get((model, node), 0), node)
            for node, server in self.served[model].items()
            if self.busy.get((model, node), 0) < server.slots
        ]
        if not free:
            return None
        _, node = min(free)
        self.busy[(model, node)] = self.busy.get((model, node), 0) + 1
        return node

    def release(self, model: str, node: str) -> None:
        """A session of ``model`` on ``node`` ended."""
        self.busy[(model, node)] = max(0, self.busy.get((model, node), 0) - 1)

    def capacity(self) -> int:
        """Slots of every served model on every node."""
        return sum(s.slots for by_node in self.served.values() for s in by_node.values())

    def urls(self) -> dict[str, dict[str, str]]:
        """``{model: {node_id: url}}`` for the workers."""
        return {m: {n: s.url for n, s in by_node.items()} for m, by_node in self.served.items()}


def shared_server_env(model: str | None, urls: dict[str, dict[str, str]]) -> dict[str, str]:
    """The variable that points a session of ``model`` on this node at its shared server."""
    if model is None or model not in urls:
        return {}
    url = urls[model].get(_this_node())
    return {ENV_SHARED_SERVER: url} if url else {}


def _this_node() -> str:
    try:
        import ray

        if ray.is_initialized():
            return str(ray.get_runtime_context().get_node_id())
    except ImportError:
        pass
    return os.environ.get("RAY_NODE_ID", "")
