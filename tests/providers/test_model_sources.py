"""``CADENZA_MODEL_CATALOG``: a catalog file of models at URLs (a mirror, an air-gapped copy).

The download host is a real HTTP server on 127.0.0.1 serving a folder; the pull is the real one
(``models.pull``, ``cadenza models pull``), as are the picker's list and ``cadenza doctor``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cadenza.config import CadenzaConfig
from cadenza.doctor import check_catalog
from cadenza.host.catalog import missing_local_model, model_choices
from cadenza.providers import models_cli
from cadenza.providers.model_catalog import MODELS, ModelError, UnknownModelError
from cadenza.providers.model_sources import CATALOG_ENV, get_spec, known_models, load_catalog
from cadenza.providers.models import PullProgress, is_verified, model_path, pull
from tests.support.file_host import serve_folder

DATA = bytes(range(256)) * 12_000  # 3 MB: several chunks of the download
SHA = hashlib.sha256(DATA).hexdigest()


@pytest.fixture
def host(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """``tiny.gguf`` served at ``BASE/files/tiny.gguf``; yields the base URL and requests."""
    www = tmp_path / "www"
    (www / "files").mkdir(parents=True)
    (www / "files" / "tiny.gguf").write_bytes(DATA)
    with serve_folder(www) as served:
        yield served


def write_catalog(path: Path, body: str) -> Path:
    path.write_text(body, encoding="utf-8")
    return path


def entry(name: str, url: str, *, sha256: str = SHA, size: int = len(DATA), extra: str = "") -> str:
    return (
        f'[[model]]\nname = "{name}"\nurl = "{url}"\nsha256 = "{sha256}"\nsize = {size}\n{extra}\n'
    )


@pytest.fixture
def models_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "models"
    monkeypatch.setenv("CADENZA_MODELS_DIR", str(folder))
    return folder


def test_a_catalog_model_is_pulled_from_its_url_and_verified(
    host: tuple[str, list[str]],
    tmp_path: Path,
    models_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base, requested = host
    catalog = write_catalog(
        tmp_path / "catalog.toml",
        entry("tiny-test", f"{base}/files/tiny.gguf", extra='description = "a test file"'),
    )
    monkeypatch.setenv(CATALOG_ENV, str(catalog))
    spec = get_spec("local/tiny-test")
    assert (spec.url, spec.size, spec.sha256, spec.description) == (
        f"{base}/files/tiny.gguf",
        len(DATA),
        SHA,
        "a test file",
    )
    assert set(MODELS) < set(known_models())  # added to the pinned ones
    assert model_path("tiny-test") is None
    assert missing_local_model("local/tiny-test") == "tiny-test"

    events: list[PullProgress] = []
    path = pull("tiny-test", progress=events.append)
    assert path == models_dir / "tiny-test.gguf"
    assert path.read_bytes() == DATA
    assert is_verified(path, spec)
    assert model_path("tiny-test") == path
    assert missing_local_model("local/tiny-test") is None
    assert requested == ["/files/tiny.gguf"]
    downloads = [e.bytes_done for e in events if e.phase == "download"]
    assert downloads[0] == 0 and downloads[-1] == len(DATA) and len(downloads) > 2
    assert events[-1].phase == "done"
    assert {(e.part, e.parts) for e in events} == {(1, 1)}
    assert sorted(p.name for p in models_dir.iterdir()) == [
        "tiny-test.gguf",
        "tiny-test.gguf.sha256",
    ]

    pull("tiny-test")  # present and verified: nothing downloaded again
    assert requested == ["/files/tiny.gguf"]
    choice = next(c for c in model_choices(CadenzaConfig()) if c.id == "local/tiny-test")
    assert (choice.local, choice.pulled, choice.label) == (
        True,
        True,
        "tiny-test (local)",
    )
    assert models_cli.models_main(argparse.Namespace(models_command="list", name=None)) == 0
    listed = capsys.readouterr().out
    assert "tiny-test" in listed and "a test file" in listed


def test_a_pinned_name_in_the_catalog_is_a_mirror(
    host: tuple[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, _ = host
    catalog = write_catalog(tmp_path / "mirror.toml", entry("smollm2-135m", f"{base}/x.gguf"))
    monkeypatch.setenv(CATALOG_ENV, str(catalog))
    spec = get_spec("smollm2-135m")
    assert spec.url == f"{base}/x.gguf" and spec.parts == ()
    assert spec.description == "from mirror.toml"
    assert set(known_models()) == set(MODELS)
    monkeypatch.delenv(CATALOG_ENV)
    assert get_spec("smollm2-135m").url is None  # the pinned wheels again


def test_a_download_that_does_not_match_keeps_nothing(
    host: tuple[str, list[str]], tmp_path: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, _ = host
    url = f"{base}/files/tiny.gguf"
    catalog = write_catalog(
        tmp_path / "catalog.toml",
        entry("wrong-hash", url, sha256="0" * 64)
        + entry("too-small", url, size=len(DATA) - 1)
        + entry("too-large", url, size=len(DATA) + 1)
        + entry("absent", f"{base}/files/nope.gguf"),
    )
    monkeypatch.setenv(CATALOG_ENV, str(catalog))
    with pytest.raises(ModelError, match="SHA-256 mismatch"):
        pull("wrong-hash")
    with pytest.raises(ModelError, match="larger than the pinned size"):
        pull("too-small")
    with pytest.raises(ModelError, match=r"assembled \d+ bytes, expected"):
        pull("too-large")
    with pytest.raises(ModelError, match=r"downloading .*/files/nope\.gguf failed: HTTP 404"):
        pull("absent")
    assert list(models_dir.iterdir()) == []


def test_an_unreachable_host_is_a_clear_error(
    tmp_path: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve_folder(tmp_path) as (base, _):
        pass  # the port is closed again: nothing listens there now
    catalog = write_catalog(tmp_path / "catalog.toml", entry("gone", f"{base}/m.gguf"))
    monkeypatch.setenv(CATALOG_ENV, str(catalog))
    with pytest.raises(ModelError, match=r"downloading http://127\.0\.0\.1:\d+/m\.gguf failed: "):
        pull("gone")
    assert list(models_dir.iterdir()) == []


GOOD = entry("ok", "https://example.invalid/ok.gguf")


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("[[model]\nname = 1", "is not valid TOML"),
        (
            '[[model]]\nname = "m"\nurl = "https://h/m.gguf"\nsize = 3\n',
            r"model #1 sha256: Field required",
        ),
        (
            entry("m", "ftp://h/m.gguf"),
            r"model #1 url: Value error, must be an http:// or https:// URL",
        ),
        (entry("m", "https://h/m", sha256="abc"), r"model #1 sha256: String should match pattern"),
        (entry("m", "https://h/m", size=0), r"model #1 size: Input should be greater than 0"),
        (entry("../m", "https://h/m"), r"model #1 name: String should match pattern"),
        (GOOD + entry("m", "https://h/m", extra="sha = 1"), r"model #2 sha: Extra inputs"),
        (GOOD + GOOD, "a model is listed twice: ok"),
        ('models = "x"\n', r"model: Field required; models: Extra inputs"),
        (
            '[[model]]\nname = "m"\nurl = "https://h/m"\nsha256 = "' + SHA + '"\nsize = "3"\n',
            "size: Input should be a valid integer",
        ),
    ],
)
def test_a_malformed_catalog_is_a_clear_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, problem: str
) -> None:
    catalog = write_catalog(tmp_path / "catalog.toml", body)
    monkeypatch.setenv(CATALOG_ENV, str(catalog))
    where = rf"model catalog {catalog} \({CATALOG_ENV}\)"
    with pytest.raises(ModelError, match=where) as caught:
        get_spec("smollm2-135m")
    assert caught.match(problem)
    # The pickers still list the pinned models; a local model's end names the problem.
    assert {c.id for c in model_choices(CadenzaConfig()) if c.local} >= {
        f"local/{n}" for n in MODELS
    }
    assert missing_local_model("local/ok") is None
    check = check_catalog()[0]
    assert not check.ok and check.detail == str(caught.value)


def test_a_missing_catalog_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere.toml"
    monkeypatch.setenv(CATALOG_ENV, str(missing))
    with pytest.raises(
        ModelError, match=rf"model catalog {missing} \({CATALOG_ENV}\): No such file"
    ):
        known_models()
    args = argparse.Namespace(models_command="list", name=None)
    assert models_cli.models_main(args) == 1
    assert "No such file" in capsys.readouterr().err
    check = check_catalog()[0]
    assert not check.ok and "No such file" in check.detail and CATALOG_ENV in check.fix


def test_the_file_is_read_again_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = write_catalog(tmp_path / "catalog.toml", entry("one", "https://h/1.gguf"))
    monkeypatch.setenv(CATALOG_ENV, str(catalog))
    assert "one" in known_models()
    write_catalog(catalog, entry("two", "https://h/2.gguf") + "# longer, so the size differs\n")
    os.utime(catalog, ns=(1, 1))  # and another modification time
    assert "two" in known_models() and "one" not in known_models()
    assert list(load_catalog(catalog)) == ["two"]
    with pytest.raises(UnknownModelError, match=r"known models: .*two"):
        get_spec("one")


def test_unset_or_blank_means_the_pinned_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CATALOG_ENV, raising=False)
    assert known_models() == MODELS
    assert check_catalog() == []
    monkeypatch.setenv(CATALOG_ENV, "  ")
    assert known_models() == MODELS
