"""Build small, valid wheel files for pull tests (no network, no real model)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def make_wheel(directory: Path, dist: str, version: str, files: dict[str, bytes]) -> Path:
    """Write ``{dist}-{version}-py3-none-any.whl`` holding ``files`` plus its dist-info."""
    norm = dist.replace("-", "_")
    info = f"{norm}-{version}.dist-info"
    contents = dict(files)
    contents[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode()
    )
    contents[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: cadenza-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = "".join(
        f"{name},{_record_hash(data)},{len(data)}\n" for name, data in contents.items()
    )
    contents[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    path = directory / f"{norm}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in contents.items():
            archive.writestr(name, data)
    return path
