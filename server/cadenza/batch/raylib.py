"""The few Ray calls the batch makes, behind typed functions (Ray ships partial stubs).

``import ray`` happens here, lazily, so ``cadenza batch`` without the extra fails with an
install hint rather than a traceback, and the rest of Cadenza never imports Ray.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from collections.abc import Sequence
from typing import Any

from cadenza.batch.model_servers import ModelServerError, NodeModelServer, SlotTable
from cadenza.batch.rate_limit import Limited, RateLimiter
from cadenza.batch.results import TaskOutput
from cadenza.batch.tasks import TaskSpec
from cadenza.batch.worker import WorkerSettings, run_one

TASK_CPUS = 0.25
"""Ray CPUs one task reserves: a session mostly waits for its model, so four share a core."""

MODEL_START_TIMEOUT_S = 300.0
"""Longest the batch waits for its nodes' model servers to start (seconds)."""
MODEL_STOP_TIMEOUT_S = 30.0
Ref = Any
"""A Ray ``ObjectRef`` of a :class:`~cadenza.batch.results.TaskOutput`."""


class RayMissingError(Exception):
    """Ray is not installed (``pip install 'cadenza[batch]'``)."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayMissingError(
            "cadenza batch needs Ray: pip install 'cadenza[batch]' (or pip install ray)"
        ) from None
    return ray


LOOPBACK = "127.0.0.1"


def _private_cluster_environment() -> None:
    """Make the local cluster about to start reachable from this machine's loopback only.

    Ray's processes (GCS, raylet, workers, the driver's core worker, agents) read these from
    the environment they inherit, the first one when Ray is imported: so this runs before
    ``import ray``.

    - ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``: Ray takes this node for a single-machine
      cluster and binds every server to 127.0.0.1 (otherwise ``127.0.0.1`` as the node's
      address is replaced by the machine's network address and servers listen on all
      interfaces);
    - ``RAY_AUTH_MODE=token`` and a fresh ``RAY_AUTH_TOKEN`` for this batch only (kept in
      memory, never written to ``~/.ray``): every call to the cluster must carry it, so other
      users of the machine cannot submit work to it. Ray versions without token
      authentication ignore both.
    """
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN"] = secrets.token_urlsafe(32)
    os.environ.pop("RAY_AUTH_TOKEN_PATH", None)


def start(address: str | None) -> float:
    """Connect to the cluster at ``address``, or start a private local one; returns the seconds.

    The local cluster listens on 127.0.0.1 only, with token authentication where the
    installed Ray has it (``_private_cluster_environment``); ``RAY_ADDRESS`` does not apply
    to it. A cluster at ``address`` is the person's to secure (docs/batch.md).

    Raises:
        RayMissingError: Ray is not installed.
        ConnectionError: No cluster answers at ``address``.
        RuntimeError: The local cluster could not start, or not on loopback only.
    """
    if address is None:
        _private_cluster_environment()
    ray = _ray()
    started = time.monotonic()
    where = {"address": address} if address else {"address": "local", "_node_ip_address": LOOPBACK}
    try:
        ray.init(
            **where,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
            configure_logging=True,
        )
    except (ConnectionError, RuntimeError):
        raise
    except Exception as exc:  # Ray raises a bare Exception when its processes start too slowly
        raise RuntimeError(f"Ray could not start: {exc}") from None
    if address is None:
        _check_loopback(ray)
    return time.monotonic() - started


def _check_loopback(ray: Any) -> None:
    """Stop the local cluster unless its node took the loopback address.

    Raises:
        RuntimeError: It did not (Ray was imported before the environment was set, or this
            Ray version ignores it).
    """
    addresses = {node.get("NodeManagerAddress") for node in ray.nodes() if node.get("Alive")}
    if addresses <= {LOOPBACK}:
        return
    ray.shutdown()
    shown = ", ".join(sorted(str(a) for a in addresses))
    raise RuntimeError(
        f"Ray's local cluster took the address {shown}, not {LOOPBACK}: it would be reachable "
        "from the network, so it was stopped. Start a cluster yourself and pass --address."
    )


def stop() -> None:
    """Disconnect (and stop the local cluster this process started)."""
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()


def cluster_cpus() -> float:
    """CPUs of the whole cluster."""
    return float(_ray().cluster_resources().get("CPU", 1.0))


def alive_nodes() -> int:
    """Nodes of the cluster that are alive."""
    return sum(1 for node in _ray().nodes() if node.get("Alive"))


def submit(
    spec: TaskSpec, settings: WorkerSettings, attempt: int, node_id: str | None = None
) -> Ref:
    """Start :func:`~cadenza.batch.worker.run_one` as a Ray task (no Ray-side retries).

    ``node_id``: run it on that node (where its shared model server is), else anywhere.
    """
    ray = _ray()
    remote = ray.remote(num_cpus=TASK_CPUS, max_retries=0)(run_one)
    if node_id is not None:
        remote = remote.options(scheduling_strategy=_on_node(node_id))
    return remote.remote(spec, settings, attempt)


def _on_node(node_id: str) -> Any:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)


def start_model_servers(models: Sequence[str], slots: int) -> tuple[SlotTable, list[Any]]:
    """One :class:`~cadenza.batch.model_servers.NodeModelServer` actor per alive node and model.

    Returns:
        The served models (for :class:`SlotTable`) and the actors (for
        :func:`stop_model_servers`).

    Raises:
        ModelServerError: A server cannot start (the others are stopped first).
    """
    ray = _ray()
    actor_class = ray.remote(num_cpus=0, max_restarts=0)(NodeModelServer)
    actors, starts = [], []
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        for model in models:
            actor = actor_class.options(scheduling_strategy=_on_node(node["NodeID"])).remote(
                model, slots, node["NodeID"]
            )
            actors.append(actor)
            starts.append(actor.start.remote())
    table = SlotTable()
    try:
        for served in ray.get(starts, timeout=MODEL_START_TIMEOUT_S):
            table.served.setdefault(served.model, {})[served.node_id] = served
    except BaseException as exc:
        stop_model_servers(actors)
        if isinstance(exc, ray.exceptions.RayTaskError):
            raise ModelServerError(str(exc.cause)) from None
        if isinstance(exc, ray.exceptions.GetTimeoutError):
            raise ModelServerError("the local model server did not start in time") from None
        raise
    return table, actors


def start_rate_limiters(upstreams: dict[str, str]) -> dict[str, Limited]:
    """One :class:`~cadenza.batch.rate_limit.RateLimiter` actor per provider (by its name)."""
    actor_class = _ray().remote(num_cpus=0, max_restarts=0)(RateLimiter)
    return {
        provider: Limited(upstream=upstream, limiter=actor_class.remote())
        for provider, upstream in upstreams.items()
    }


def stop_model_servers(actors: Sequence[Any]) -> None:
    """Stop the actors' llama-servers (waiting for them to exit), then the actors."""
    ray = _ray()
    try:
        ray.get([actor.stop.remote() for actor in actors], timeout=MODEL_STOP_TIMEOUT_S)
    except Exception as exc:  # a dead actor took its server with it (parent-death signal)
        logging.getLogger(__name__).debug("stopping model servers: %s", exc)
    for actor in actors:
        ray.kill(actor)


def wait(refs: Sequence[Ref], timeout: float) -> list[Ref]:
    """The refs of ``refs`` that finished within ``timeout`` seconds (maybe none)."""
    if not refs:
        time.sleep(timeout)
        return []
    # All of them or the timeout: whatever finished meanwhile comes back together.
    ready, _ = _ray().wait(list(refs), num_returns=len(refs), timeout=timeout)
    return list(ready)


def get(ref: Ref) -> TaskOutput:
    """The task's output.

    Raises:
        WorkerDied: The worker process (or its node) died.
        Exception: Any other error of the task (a bug: the worker turns task failures into
            results).
    """
    ray = _ray()
    dead = (
        ray.exceptions.WorkerCrashedError,
        ray.exceptions.NodeDiedError,
        ray.exceptions.OutOfMemoryError,
        ray.exceptions.ObjectLostError,
        ray.exceptions.LocalRayletDiedError,
    )
    try:
        output = ray.get(ref)
    except dead as exc:
        raise WorkerDied(str(exc).strip().splitlines()[0] if str(exc).strip() else "") from None
    if not isinstance(output, TaskOutput):
        raise TypeError(f"a worker returned {type(output).__name__}, not TaskOutput")
    return output


def cancel(refs: Sequence[Ref], *, force: bool) -> None:
    """Cancel running tasks: a ``KeyboardInterrupt`` in each (``force``: kill the worker)."""
    ray = _ray()
    for ref in refs:
        try:
            ray.cancel(ref, force=force)
        except Exception as exc:  # a task that just ended cannot be cancelled
            logging.getLogger(__name__).debug("cancel failed: %s", exc)


def settle(refs: Sequence[Ref], timeout: float) -> list[Ref]:
    """Wait up to ``timeout`` seconds for ``refs`` to end; returns those still running."""
    if not refs:
        return []
    _, running = _ray().wait(list(refs), num_returns=len(refs), timeout=timeout)
    return list(running)


class WorkerDied(Exception):
    """The process running a task died (killed, out of memory, node lost)."""
