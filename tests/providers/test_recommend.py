"""The model a machine can run, from given hardware readings; llama.cpp's device list; the
GPU offload flags; and ``cadenza doctor``'s line about it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cadenza.doctor import check_recommendation
from cadenza.providers.hardware import Device, Hardware, parse_devices
from cadenza.providers.recommend import SIZES, offload_args, recommend

GIB = 1 << 30
MIB = 1 << 20
CTX = 8192

LISTED = """\
ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes
Available devices:
  CUDA0: NVIDIA GeForce RTX 4090 (24080 MiB, 23664 MiB free)
  Vulkan1: AMD Radeon Graphics (RADV REMBRANDT) (8192 MiB, 7800 MiB free)
  Metal: Apple M2 Pro (21845 MiB, 21845 MiB free)
"""


def gpu(free_mib: int, backend: str = "CUDA") -> Device:
    return Device(
        id=f"{backend}0", backend=backend, name="a GPU", memory=free_mib * MIB, free=free_mib * MIB
    )


def test_llama_servers_device_list_is_read() -> None:
    devices = parse_devices(LISTED)
    assert [(d.id, d.backend) for d in devices] == [
        ("CUDA0", "CUDA"),
        ("Vulkan1", "Vulkan"),
        ("Metal", "Metal"),
    ]
    assert devices[0].name == "NVIDIA GeForce RTX 4090"
    assert devices[0].free == 23664 * MIB and devices[0].memory == 24080 * MIB
    assert devices[1].name == "AMD Radeon Graphics (RADV REMBRANDT)"
    assert parse_devices("Available devices:\n") == ()


def test_this_two_core_machine_keeps_the_pinned_default() -> None:
    choice = recommend(Hardware(memory=23 * GIB, cores=2), CTX)
    assert choice.name == "qwen2.5-coder-1.5b" and choice.device is None
    assert choice.model == "local/qwen2.5-coder-1.5b"
    assert "2 cores and no GPU" in choice.why
    assert "31.6% (39.1% at 3B, 57.9% at 7B)" in choice.why


def test_more_cores_on_the_cpu_allow_larger_models_at_q4_k_m() -> None:
    assert recommend(Hardware(memory=16 * GIB, cores=4), CTX).name == "qwen2.5-coder-3b"
    eight = recommend(Hardware(memory=32 * GIB, cores=8), CTX)
    assert (eight.name, eight.quant) == ("qwen2.5-coder-7b", "q4_k_m")
    assert "57.9%" in eight.why
    # Memory bounds it too: 7B needs about 5.3 GiB with its context, half of 8 GiB is 4.
    assert recommend(Hardware(memory=8 * GIB, cores=16), CTX).name == "qwen2.5-coder-3b"
    assert recommend(Hardware(memory=64 * GIB, cores=16), CTX).name == "qwen2.5-coder-14b"


def test_a_gpu_that_holds_the_model_gets_the_largest_and_best_quantization() -> None:
    big = recommend(Hardware(memory=32 * GIB, cores=2, devices=(gpu(23664),)), CTX)
    assert (big.name, big.device) == ("hf:Qwen/Qwen2.5-Coder-14B-Instruct-GGUF:q8_0", gpu(23664))
    assert "every layer runs on it" in big.why
    assert big.model == "local/qwen2.5-coder-14b-instruct-q8_0"
    eight = recommend(Hardware(memory=16 * GIB, cores=2, devices=(gpu(7800, "Vulkan"),)), CTX)
    assert eight.name == "hf:Qwen/Qwen2.5-Coder-7B-Instruct-GGUF:q6_k"
    metal = recommend(Hardware(memory=8 * GIB, cores=8, devices=(gpu(5000, "Metal"),)), CTX)
    assert metal.name == "hf:Qwen/Qwen2.5-Coder-3B-Instruct-GGUF:q8_0"
    # A longer context takes room: at 32k tokens the 14B's KV cache alone is 6 GiB.
    long = recommend(Hardware(memory=32 * GIB, cores=2, devices=(gpu(12000),)), 32768)
    assert long.name == "hf:Qwen/Qwen2.5-Coder-7B-Instruct-GGUF:q8_0"


def test_a_gpu_too_small_for_any_model_leaves_the_cpu_rule() -> None:
    choice = recommend(Hardware(memory=23 * GIB, cores=2, devices=(gpu(900),)), CTX)
    assert choice.name == "qwen2.5-coder-1.5b" and choice.device is None
    assert "no GPU with room for it" in choice.why


def test_too_little_memory_names_the_smallest_and_says_so() -> None:
    choice = recommend(Hardware(memory=1 * GIB, cores=1), CTX)
    assert choice.name == "qwen2.5-coder-0.5b"
    assert "is little" in choice.why


def test_llama_server_offloads_only_what_fits_whole() -> None:
    seven = next(s for s in SIZES if s.label == "7B").files["q4_k_m"]
    assert offload_args(seven, CTX, (gpu(8000),)) == ("-ngl", "all")
    assert offload_args(seven, CTX, (gpu(4000),)) == ()
    assert offload_args(seven, CTX, ()) == ()
    # An unknown file: its KV cache is taken as a quarter of it, at 8192 tokens.
    assert offload_args(4 * GIB, CTX, (gpu(5700),)) == ("-ngl", "all")
    assert offload_args(4 * GIB, CTX, (gpu(5500),)) == ()


def test_doctor_names_the_model_and_how_to_pull_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CADENZA_MODELS_DIR", str(tmp_path))
    check = check_recommendation(Hardware(memory=32 * GIB, cores=8), CTX)
    assert check.ok and not check.required
    assert check.detail.startswith(
        "this machine can run qwen2.5-coder-7b; "
        "pull it with `cadenza models pull qwen2.5-coder-7b`."
    )
    assert "57.9%" in check.detail
