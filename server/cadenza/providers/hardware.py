"""What this machine offers a local model: memory, cores, and llama.cpp's accelerators.

Accelerators are what the installed ``llama-server --list-devices`` reports (CUDA, Metal,
Vulkan, ... as the build supports them), one line per device::

    Available devices:
      CUDA0: NVIDIA GeForce RTX 4090 (24080 MiB, 23664 MiB free)

A build without GPU support lists none; a missing or failing binary reads as none too.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cadenza.providers.llama_command import LlamaServerError, child_env, find_binary, usable_cores

LIST_TIMEOUT_S = 20.0
"""Bound on ``llama-server --list-devices`` (seconds): it loads the GPU drivers."""
MIB = 1 << 20

_DEVICE = re.compile(
    r"^\s*(?P<id>[A-Za-z][\w-]*?)(?P<index>\d*):\s*(?P<name>.*?)\s*"
    r"\((?P<total>\d+) MiB,\s*(?P<free>\d+) MiB free\)\s*$"
)


@dataclass(frozen=True, kw_only=True)
class Device:
    """One accelerator llama.cpp can offload to.

    Attributes:
        id: llama.cpp's device name (``CUDA0``, ``Metal``, ``Vulkan1``).
        backend: The backend (``CUDA``, ``Metal``, ``Vulkan``, ...).
        name: The device's own name.
        memory: Its memory (bytes).
        free: Its free memory when listed (bytes).
    """

    id: str
    backend: str
    name: str
    memory: int
    free: int


@dataclass(frozen=True, kw_only=True)
class Hardware:
    """A reading of the machine (memory in bytes)."""

    memory: int
    cores: int
    devices: tuple[Device, ...] = ()


def parse_devices(text: str) -> tuple[Device, ...]:
    """The devices of ``llama-server --list-devices`` output (other lines are ignored)."""
    devices = []
    for line in text.splitlines():
        match = _DEVICE.match(line)
        if match is None:
            continue
        backend = match["id"]
        devices.append(
            Device(
                id=backend + match["index"],
                backend=backend,
                name=match["name"],
                memory=int(match["total"]) * MIB,
                free=int(match["free"]) * MIB,
            )
        )
    return tuple(devices)


def total_memory() -> int:
    """The machine's physical memory (bytes); 0 where the platform does not tell."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0


@lru_cache(maxsize=4)
def _list_devices(binary: Path) -> tuple[Device, ...]:
    try:
        done = subprocess.run(
            [str(binary), "--list-devices"],
            capture_output=True,
            text=True,
            timeout=LIST_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            env=child_env(),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return parse_devices(done.stdout + "\n" + done.stderr)


def list_devices(binary: Path | None = None) -> tuple[Device, ...]:
    """The accelerators the installed llama-server can use (read once per binary)."""
    try:
        return _list_devices(binary or find_binary())
    except LlamaServerError:
        return ()


def read_hardware(binary: Path | None = None) -> Hardware:
    """Memory, usable cores and llama.cpp's devices of this machine."""
    return Hardware(memory=total_memory(), cores=usable_cores(), devices=list_devices(binary))
