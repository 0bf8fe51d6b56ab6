"""The local models Cadenza knows: the pinned ones, plus those of a catalog file.

``CADENZA_MODEL_CATALOG`` names a TOML file of ``[[model]]`` tables, each one GGUF file at a URL
with its pinned size and SHA-256::

    [[model]]
    name = "qwen2.5-coder-1.5b"          # local/NAME; a pinned name is replaced (a mirror)
    url = "https://models.example.internal/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    size = 1117320768                    # bytes
    sha256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    description = "Qwen2.5-Coder 1.5B from our mirror"   # optional

so a machine without PyPI (air-gapped, or behind a mirror) pulls from its own host, and tests
stand a loopback server in for the download host. The file is read again when it changes; one
that is missing or malformed is a ``ModelError`` naming the file and the problem.
"""

from __future__ import annotations

import os
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from cadenza.providers.hub import pulled_refs
from cadenza.providers.model_catalog import (
    MODELS,
    ModelError,
    ModelSpec,
    UnknownModelError,
    models_dir,
)

CATALOG_ENV = "CADENZA_MODEL_CATALOG"
"""The environment variable naming the extra catalog file."""


class CatalogEntry(BaseModel):
    """One ``[[model]]`` table of a catalog file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # A file name in the models folder, and the part of ``local/NAME`` after the slash.
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")]
    url: str
    size: Annotated[int, Field(gt=0, strict=True)]
    sha256: Annotated[str, Field(pattern=r"^[0-9a-fA-F]{64}$")]
    description: str = ""

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")) or len(url) < len("http://x"):
            raise ValueError("must be an http:// or https:// URL")
        return url


class CatalogFile(BaseModel):
    """A whole catalog file: its models, each name once."""

    model_config = ConfigDict(extra="forbid")

    model: list[CatalogEntry]

    @field_validator("model")
    @classmethod
    def _unique(cls, entries: list[CatalogEntry]) -> list[CatalogEntry]:
        names = [e.name for e in entries]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"a model is listed twice: {', '.join(twice)}")
        return entries


def _problems(exc: ValidationError) -> str:
    """Pydantic's errors as ``where: what`` lines, with 1-based ``[[model]]`` numbers."""
    lines = []
    for error in exc.errors():
        where = []
        for part in error["loc"]:
            where.append(f"#{part + 1}" if isinstance(part, int) else str(part))
        lines.append(f"{' '.join(where) or 'file'}: {error['msg']}")
    return "; ".join(lines)


def load_catalog(path: Path) -> dict[str, ModelSpec]:
    """The models of the catalog file ``path``, by name.

    Raises:
        ModelError: The file cannot be read, is not TOML, or a table does not fit (the message
            names the file, the table and the field).
    """
    stat = _stat(path)
    return _load(str(path), stat.st_mtime_ns, stat.st_size)


def _stat(path: Path) -> os.stat_result:
    try:
        return path.stat()
    except OSError as exc:
        raise ModelError(f"model catalog {path} ({CATALOG_ENV}): {exc.strerror}") from None


@lru_cache(maxsize=4)
def _load(path: str, mtime_ns: int, size: int) -> dict[str, ModelSpec]:
    """Parse once per version of the file (its path, modification time and size)."""
    where = f"model catalog {path} ({CATALOG_ENV})"
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"{where}: cannot read it: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(f"{where} is not valid TOML: {exc}") from None
    try:
        catalog = CatalogFile.model_validate(data)
    except ValidationError as exc:
        raise ModelError(f"{where}: {_problems(exc)}") from None
    return {
        e.name: ModelSpec(
            name=e.name,
            description=e.description or f"from {Path(path).name}",
            size=e.size,
            sha256=e.sha256.lower(),
            url=e.url,
        )
        for e in catalog.model
    }


def catalog_path() -> Path | None:
    """The catalog file ``CADENZA_MODEL_CATALOG`` names, or None when it is unset."""
    value = os.environ.get(CATALOG_ENV, "").strip()
    return Path(value).expanduser() if value else None


def pulled_hub_models(directory: Path | None = None) -> dict[str, ModelSpec]:
    """The models pulled from the Hub by reference (``hf:…``) into the models folder."""
    return {
        name: ModelSpec(name=name, description=f"{ref} (pulled from the Hugging Face Hub)", hub=ref)
        for name, ref in pulled_refs(directory or models_dir()).items()
        if name not in MODELS
    }


def known_models() -> dict[str, ModelSpec]:
    """The known models: pinned, on the Hub, pulled by Hub reference, and the catalog file's.

    A catalog file's entry replaces a pinned one of the same name.

    Raises:
        ModelError: ``CADENZA_MODEL_CATALOG`` names a file that is missing or malformed.
    """
    path = catalog_path()
    known = {**MODELS, **pulled_hub_models()}
    if path is None:
        return known
    return {**known, **load_catalog(path)}


def get_spec(name: str) -> ModelSpec:
    """The known model called ``name`` (``local/`` prefix allowed).

    Raises:
        UnknownModelError: No such model; the message lists the known names.
        ModelError: The catalog file is missing or malformed.
    """
    key = name.removeprefix("local/")
    models = known_models()
    try:
        return models[key]
    except KeyError:
        known = ", ".join(models)
        raise UnknownModelError(f"unknown model {name!r}; known models: {known}") from None
