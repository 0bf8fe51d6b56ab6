"""GGUF models from the Hugging Face Hub: ``hf:ORG/REPO[:FILE or QUANT]`` and the known names.

A pull asks the Hub for the repository's files with their LFS metadata, picks the GGUF file
(or the parts of a split GGUF, ``NAME-00001-of-00003.gguf`` and on) that the reference names,
downloads each with ``huggingface_hub`` (its cache, resumable downloads, ``HF_ENDPOINT``,
``HF_TOKEN`` and ``HF_HOME`` as the library reads them) and checks each file against the
SHA-256 the Hub states for it. A file that does not match is deleted from the cache and the
pull fails; only when every part matches is a record ``NAME.hub.json`` written in the models
folder, which is what makes ``local/NAME`` pulled. The record names the files in the cache
with their size and modification time, so later starts trust them without hashing again.
llama-server is given the first part; it finds the others beside it by their names.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cadenza.providers.model_catalog import ModelError

HUB_PREFIX = "hf:"
"""How a Hub reference is written on the command line: ``hf:ORG/REPO[:FILE or QUANT]``."""
DEFAULT_QUANT = "q4_k_m"
"""The quantization a reference without one gets: the usual balance of size and quality."""
CHUNK_BYTES = 1 << 20
"""Read unit while hashing (bytes)."""

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class HubRef:
    """A model on the Hub: a repository and which GGUF of it.

    Attributes:
        repo: ``ORG/REPO``.
        pick: A file name (ends in ``.gguf``) or a quantization (``q4_k_m``, ``Q8_0``).
    """

    repo: str
    pick: str = DEFAULT_QUANT

    def __str__(self) -> str:
        return f"{HUB_PREFIX}{self.repo}:{self.pick}"


@dataclass(frozen=True, kw_only=True)
class HubFile:
    """One file of a repository as the Hub describes it (size in bytes, LFS SHA-256)."""

    path: str
    size: int
    sha256: str


Progress = Callable[[str, int, int, int, int], None]
"""``(phase, part, parts, bytes_done, bytes_total)``: ``download`` or ``verify`` of ``part``
(1-based) of ``parts``; bytes over all parts."""


def is_hub_ref(text: str) -> bool:
    """Whether ``text`` is written as a Hub reference (``hf:…``)."""
    return text.startswith(HUB_PREFIX)


def parse_ref(text: str) -> HubRef:
    """``hf:ORG/REPO[:FILE or QUANT]`` → ``HubRef`` (no quantization: ``q4_k_m``).

    Raises:
        ModelError: Not of that form.
    """
    body = text.removeprefix(HUB_PREFIX)
    repo, _, pick = body.partition(":")
    if not _REPO.match(repo) or ("/" in pick and not pick.lower().endswith(".gguf")):
        raise ModelError(
            f"{text!r} is not a Hugging Face model; write hf:ORG/REPO or hf:ORG/REPO:QUANT "
            "(e.g. hf:Qwen/Qwen2.5-Coder-7B-Instruct-GGUF:q4_k_m)"
        )
    return HubRef(repo=repo, pick=pick or DEFAULT_QUANT)


def choose_files(ref: HubRef, files: Sequence[HubFile]) -> list[HubFile]:
    """The GGUF file ``ref`` names among ``files``, or all parts of a split one, in order.

    A quantization matches a file whose name ends in ``-QUANT.gguf`` or ``.QUANT.gguf``
    (case-insensitive), or the parts ``-QUANT-0000K-of-0000N.gguf``.

    Raises:
        ModelError: No file matches, several do, or parts of a split file are missing; the
            message lists the quantizations the repository has.
    """
    ggufs = [f for f in files if f.path.lower().endswith(".gguf")]
    if ref.pick.lower().endswith(".gguf"):
        wanted = ref.pick.lower()
        first = [f for f in ggufs if f.path.lower() == wanted]
        if not first:
            raise ModelError(f"{ref.repo} has no file {ref.pick}; {_offer(ggufs)}")
        split = _SPLIT.search(first[0].path)
        stem = first[0].path[: split.start()] if split else None
    else:
        quant = re.escape(ref.pick.lower())
        pattern = re.compile(rf"[-.]{quant}(-\d{{5}}-of-\d{{5}})?\.gguf$")
        matches = [f for f in ggufs if pattern.search(f.path.lower())]
        stems = {_SPLIT.sub("", f.path) if _SPLIT.search(f.path) else f.path for f in matches}
        if not matches:
            raise ModelError(f"{ref.repo} has no {ref.pick} GGUF file; {_offer(ggufs)}")
        if len(stems) > 1:
            names = ", ".join(sorted(stems))
            raise ModelError(f"{ref.repo}: {ref.pick} matches several files ({names}); name one")
        first = matches
        split = _SPLIT.search(matches[0].path)
        stem = _SPLIT.sub("", matches[0].path) if split else None
    if stem is None or split is None:
        return [first[0]]
    count = int(split.group(2))
    by_name = {f.path: f for f in ggufs}
    parts = [f"{stem}-{n:05d}-of-{count:05d}.gguf" for n in range(1, count + 1)]
    missing = [p for p in parts if p not in by_name]
    if missing:
        raise ModelError(f"{ref.repo}: parts of the split file are missing: {', '.join(missing)}")
    return [by_name[p] for p in parts]


def _offer(ggufs: Sequence[HubFile]) -> str:
    quants = sorted({_quant_of(f.path) for f in ggufs} - {""})
    if not quants:
        return "it has no GGUF files"
    return f"it has {', '.join(quants)}"


def _quant_of(path: str) -> str:
    name = _SPLIT.sub(".gguf", path.lower()).removesuffix(".gguf")
    match = re.search(r"[-.]((?:i?q\d[\w]*)|f16|bf16|f32)$", name)
    return match.group(1) if match else ""


def local_name(files: Sequence[HubFile]) -> str:
    """The ``local/NAME`` a pulled reference gets: its first file's name, lower-case, no suffix."""
    base = files[0].path.rsplit("/", 1)[-1]
    return _SPLIT.sub("", base).removesuffix(".gguf").removesuffix(".GGUF").lower()


def record_path(directory: Path, name: str) -> Path:
    """The record of a pulled Hub model in the models folder."""
    return directory / f"{name}.hub.json"


def pulled_path(directory: Path, name: str) -> Path | None:
    """The first file of the pulled Hub model ``name``, or None when it is not (all) there.

    Each file must still have the size and modification time it had when it was verified.
    """
    try:
        record = json.loads(record_path(directory, name).read_text(encoding="utf-8"))
        files = record["files"]
        for entry in files:
            st = Path(entry["path"]).stat()
            if st.st_size != entry["size"] or st.st_mtime_ns != entry["mtime_ns"]:
                return None
        return Path(files[0]["path"])
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def pulled_refs(directory: Path) -> dict[str, str]:
    """The Hub models pulled into ``directory``: ``{name: "hf:ORG/REPO:PICK"}``."""
    out: dict[str, str] = {}
    for path in sorted(directory.glob("*.hub.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            out[path.name.removesuffix(".hub.json")] = str(record["ref"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return out


def hub_files(ref: HubRef) -> tuple[str, list[HubFile]]:
    """The repository's commit and its files with LFS metadata, from the Hub's API.

    Raises:
        ModelError: The Hub cannot be reached, the repository is unknown or gated, or its
            files carry no SHA-256 (not LFS files: nothing to check them against).
    """
    from huggingface_hub import HfApi

    try:
        info = HfApi(endpoint=_endpoint()).model_info(ref.repo, files_metadata=True)
    except Exception as exc:  # the library's HTTP errors and its HTTP client's
        raise ModelError(f"cannot list {ref.repo} on the Hugging Face Hub: {_said(exc)}") from None
    files = []
    for sibling in info.siblings or []:
        lfs: Any = sibling.lfs
        if lfs is not None and sibling.rfilename.lower().endswith(".gguf"):
            files.append(HubFile(path=sibling.rfilename, size=int(lfs.size), sha256=lfs.sha256))
    if not info.sha:
        raise ModelError(f"the Hub did not say which commit of {ref.repo} it lists")
    return info.sha, files


def download(
    ref: HubRef,
    *,
    directory: Path,
    name: str | None = None,
    progress: Progress | None = None,
) -> tuple[str, Path, list[HubFile]]:
    """Pull ``ref`` into the Hub cache and record it as ``local/NAME`` in ``directory``.

    Args:
        ref: The repository and file or quantization.
        directory: The models folder (the record goes there; created if missing).
        name: The local name (default: ``local_name`` of the files).
        progress: Called from this thread as bytes arrive and while each part is checked.

    Returns:
        The local name, the first file, and the files.

    Raises:
        ModelError: The Hub or a download failed, or a file's SHA-256 is not the one the Hub
            states (that file is deleted; no record is written).
    """
    from huggingface_hub import hf_hub_download

    revision, listed = hub_files(ref)
    files = choose_files(ref, listed)
    name = name or local_name(files)
    total = sum(f.size for f in files)

    def report(phase: str, part: int, done: int) -> None:
        if progress is not None:
            progress(phase, part, len(files), done, total)

    paths: list[Path] = []
    done = 0
    for part, file in enumerate(files, start=1):
        bar = _progress_class(report, part, done)
        try:
            got = hf_hub_download(
                ref.repo, file.path, revision=revision, endpoint=_endpoint(), tqdm_class=bar
            )
        except Exception as exc:  # the library's HTTP errors and its HTTP client's
            raise ModelError(
                f"downloading {file.path} from {ref.repo} failed: {_said(exc)}"
            ) from None
        path = Path(str(got))

        def hashed(count: int, part: int = part, before: int = done) -> None:
            report("verify", part, before + count)

        _verify(path, file, hashed)
        paths.append(path)
        done += file.size
    directory.mkdir(parents=True, exist_ok=True)
    entries = [
        {"path": str(p), "size": f.size, "sha256": f.sha256, "mtime_ns": p.stat().st_mtime_ns}
        for p, f in zip(paths, files, strict=True)
    ]
    record = {
        "ref": str(HubRef(repo=ref.repo, pick=ref.pick)),
        "revision": revision,
        "files": entries,
    }
    tmp = record_path(directory, name).with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, record_path(directory, name))
    return name, paths[0], files


def _verify(path: Path, file: HubFile, report: Callable[[int], None]) -> None:
    """Hash ``path``; on a mismatch delete it (the cached blob and its link) and raise."""
    digest = hashlib.sha256()
    hashed = 0
    with path.open("rb") as f:
        while chunk := f.read(CHUNK_BYTES):
            digest.update(chunk)
            hashed += len(chunk)
            report(hashed)
    if hashed == file.size and digest.hexdigest() == file.sha256.lower():
        return
    blob = path.resolve()
    path.unlink(missing_ok=True)
    blob.unlink(missing_ok=True)
    raise ModelError(
        f"{file.path}: SHA-256 mismatch (got {digest.hexdigest()}, the Hub states "
        f"{file.sha256}); the file was deleted and nothing was kept"
    )


def _progress_class(report: Callable[[str, int, int], None], part: int, before: int) -> Any:
    """A tqdm class that reports bytes to ``report`` instead of drawing a bar."""
    from huggingface_hub.utils.tqdm import tqdm

    class Reporter(tqdm):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]
            self.done = int(kwargs.get("initial") or 0)

        def update(self, n: float | None = 1) -> bool | None:
            self.done += int(n or 0)
            report("download", part, before + self.done)
            return None

    return Reporter


def _endpoint() -> str | None:
    """``HF_ENDPOINT`` as it is now (the library reads it once, at import)."""
    return os.environ.get("HF_ENDPOINT") or None


def _said(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def gguf_size(path: Path) -> int:
    """Bytes of a GGUF model: the file, or every part of the split file it is a part of.

    Raises:
        OSError: A part cannot be read.
    """
    split = _SPLIT.search(path.name)
    if split is None:
        return path.stat().st_size
    stem = path.name[: split.start()]
    count = int(split.group(2))
    names = [f"{stem}-{n:05d}-of-{count:05d}{path.suffix}" for n in range(1, count + 1)]
    return sum((path.parent / name).stat().st_size for name in names)
