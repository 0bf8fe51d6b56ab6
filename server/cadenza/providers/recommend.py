"""Which Qwen2.5-Coder model and quantization a machine can run, and why.

The rule, from a ``hardware.Hardware`` reading and the context size (tokens):

- With an accelerator whose free memory holds the whole model (file, KV cache for the
  context, ``OVERHEAD`` for compute buffers), the largest model that fits there, at the
  highest quantization of that model that still fits (Q4_K_M up to Q8_0): a GPU's speed comes
  from holding every layer, so more parameters win over more bits.
- On the CPU alone, generation is bound by cores and memory bandwidth: at most
  ``PARAMS_PER_CORE`` billion parameters per usable core (a 2-core machine keeps the 1.5B, whose
  steps took 5-15 s here), within ``CPU_MEMORY_SHARE`` of the memory (the editor, language
  servers and the rest need the others), at Q4_K_M, the fastest of the usual quantizations.

File sizes are those of Qwen's GGUF repositories, rounded (the pinned 0.5B and 1.5B exact); the
KV cache per token follows each model's attention shape (layers x KV heads x head size x 2 x 2
bytes, f16). The recommendation only names a model: nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass

from cadenza.providers.hardware import Device, Hardware

GB = 1_000_000_000
GIB = 1 << 30
OVERHEAD = 512 << 20
"""Compute buffers and the server's own memory beside the weights and the KV cache (bytes)."""
PARAMS_PER_CORE = 1.0
"""Billions of parameters per usable core for a model run on the CPU alone."""
CPU_MEMORY_SHARE = 0.5
"""Share of the machine's memory a model on the CPU may take."""
QUANTS = ("q8_0", "q6_k", "q5_k_m", "q4_k_m")
"""Quantizations considered, best first; Q4_K_M is the floor."""


@dataclass(frozen=True, kw_only=True)
class Size:
    """One Qwen2.5-Coder instruct model.

    Attributes:
        label: ``0.5B``, ``1.5B``, ...
        params: Parameters (billions).
        kv_per_token: KV cache per token of context, f16 (bytes).
        files: GGUF file size per quantization (bytes).
        aider: Its score on aider's code-editing benchmark (percent), where known.
    """

    label: str
    params: float
    kv_per_token: int
    files: dict[str, int]
    aider: float | None = None

    def pull_name(self, quant: str) -> str:
        """What ``cadenza models pull`` takes for this model at ``quant``."""
        if quant == "q4_k_m":
            return f"qwen2.5-coder-{self.label.lower()}"
        return f"hf:Qwen/Qwen2.5-Coder-{self.label}-Instruct-GGUF:{quant}"

    def local_name(self, quant: str) -> str:
        """The ``local/NAME`` it has once pulled (a Hub reference: its file's name)."""
        if quant == "q4_k_m":
            return f"qwen2.5-coder-{self.label.lower()}"
        return f"qwen2.5-coder-{self.label.lower()}-instruct-{quant}"

    def need(self, quant: str, context: int) -> int:
        """Memory to run it at ``quant`` with ``context`` tokens (bytes)."""
        return self.files[quant] + self.kv_per_token * context + OVERHEAD


def _files(q8: float, q6: float, q5: float, q4: float) -> dict[str, int]:
    return {
        "q8_0": int(q8 * GB),
        "q6_k": int(q6 * GB),
        "q5_k_m": int(q5 * GB),
        "q4_k_m": int(q4 * GB),
    }


SIZES: tuple[Size, ...] = (
    Size(
        label="0.5B",
        params=0.49,
        kv_per_token=24 * 2 * 64 * 4,
        files=_files(0.68, 0.65, 0.52, 0.491400064),
    ),
    Size(
        label="1.5B",
        params=1.54,
        kv_per_token=28 * 2 * 128 * 4,
        files=_files(1.89, 1.46, 1.29, 1.117320768),
        aider=31.6,
    ),
    Size(
        label="3B",
        params=3.09,
        kv_per_token=36 * 2 * 128 * 4,
        files=_files(3.62, 2.79, 2.44, 2.10),
        aider=39.1,
    ),
    Size(
        label="7B",
        params=7.62,
        kv_per_token=28 * 4 * 128 * 4,
        files=_files(8.10, 6.25, 5.44, 4.68),
        aider=57.9,
    ),
    Size(
        label="14B",
        params=14.7,
        kv_per_token=48 * 8 * 128 * 4,
        files=_files(15.7, 12.1, 10.5, 8.99),
    ),
)
"""Smallest first."""


@dataclass(frozen=True, kw_only=True)
class Recommendation:
    """The model to suggest, and why.

    Attributes:
        size: The model.
        quant: Its quantization.
        name: What to pass to ``cadenza models pull``.
        device: The accelerator that holds it, or None for the CPU.
        need: Memory it needs with the context (bytes).
        why: One or two sentences a person reads.
    """

    size: Size
    quant: str
    name: str
    device: Device | None
    need: int
    why: str

    @property
    def model(self) -> str:
        """``local/NAME`` once pulled."""
        return f"local/{self.size.local_name(self.quant)}"


def recommend(hardware: Hardware, context: int) -> Recommendation:
    """The largest Qwen2.5-Coder model (and quantization) ``hardware`` runs with ``context``."""
    device = max(hardware.devices, key=lambda d: d.free, default=None)
    if device is not None:
        on_device = _largest(device.free, context, QUANTS)
        if on_device is not None:
            size, quant = on_device
            return _made(size, quant, context, device, _gpu_why(size, quant, context, device))
    budget = int(hardware.memory * CPU_MEMORY_SHARE)
    bound = max(hardware.cores, 1) * PARAMS_PER_CORE
    fitting = [s for s in SIZES if s.params <= bound and s.need("q4_k_m", context) <= budget]
    size = fitting[-1] if fitting else SIZES[0]
    return _made(
        size, "q4_k_m", context, None, _cpu_why(size, context, hardware, budget, bool(fitting))
    )


def offload_fits(device: Device, file_size: int, context: int, kv_per_token: int | None) -> bool:
    """Whether ``device``'s free memory holds a whole model of ``file_size`` bytes.

    ``kv_per_token`` None (a model not in ``SIZES``): the KV cache is taken as a quarter of the
    file at 8192 tokens, scaled to ``context``, a margin over the Qwen2.5 models' own.
    """
    kv = kv_per_token * context if kv_per_token is not None else file_size // 4 * context // 8192
    return file_size + kv + OVERHEAD <= device.free


def size_of_file(file_size: int) -> Size | None:
    """The model of ``SIZES`` whose file at some quantization has (about) this size."""
    for size in SIZES:
        if any(abs(f - file_size) <= f * 0.03 for f in size.files.values()):
            return size
    return None


def _largest(free: int, context: int, quants: tuple[str, ...]) -> tuple[Size, str] | None:
    for size in reversed(SIZES):
        if size.need("q4_k_m", context) > free:
            continue
        for quant in quants:
            if size.need(quant, context) <= free:
                return size, quant
    return None


def _made(size: Size, quant: str, context: int, device: Device | None, why: str) -> Recommendation:
    return Recommendation(
        size=size,
        quant=quant,
        name=size.pull_name(quant),
        device=device,
        need=size.need(quant, context),
        why=why,
    )


def _score(size: Size) -> str:
    known = [s for s in SIZES if s.aider is not None]
    if size.aider is None:
        return ""
    others = ", ".join(f"{s.aider}% at {s.label}" for s in known if s is not size)
    return f" On aider's code-editing benchmark it scores {size.aider}% ({others})."


def _gpu_why(size: Size, quant: str, context: int, device: Device) -> str:
    return (
        f"{device.id} ({device.name}) has {device.free / GIB:.1f} GiB free: Qwen2.5-Coder-"
        f"{size.label} {quant.upper()} with a {context}-token context needs "
        f"{size.need(quant, context) / GIB:.1f} GiB, so every layer runs on it." + _score(size)
    )


def _cpu_why(size: Size, context: int, hardware: Hardware, budget: int, fits: bool) -> str:
    if not fits:
        return (
            f"{hardware.memory / GIB:.1f} GiB of memory is little: even the smallest model "
            f"needs {size.need('q4_k_m', context) / GIB:.1f} GiB with a {context}-token context."
        )
    devices = "no GPU llama.cpp can use" if not hardware.devices else "no GPU with room for it"
    return (
        f"{hardware.cores} cores and {devices}: on the CPU alone, about "
        f"{PARAMS_PER_CORE:g} billion parameters per core keeps each step short, and "
        f"Qwen2.5-Coder-{size.label} Q4_K_M needs {size.need('q4_k_m', context) / GIB:.1f} GiB "
        f"of the {budget / GIB:.1f} GiB a model may take here." + _score(size)
    )


def offload_args(files_size: int, context: int, devices: tuple[Device, ...]) -> tuple[str, ...]:
    """llama-server flags that put every layer on the roomiest device, when the model fits it.

    Args:
        files_size: The model's GGUF bytes (all parts of a split file).
        context: The context size (tokens).
        devices: The accelerators (``hardware.list_devices``).

    Returns:
        ``("-ngl", "all")`` when the device holds the whole model, else nothing (llama.cpp's
        own default then, ``auto``: as many layers as fit).
    """
    device = max(devices, key=lambda d: d.free, default=None)
    if device is None:
        return ()
    known = size_of_file(files_size)
    kv = known.kv_per_token if known is not None else None
    return ("-ngl", "all") if offload_fits(device, files_size, context, kv) else ()
