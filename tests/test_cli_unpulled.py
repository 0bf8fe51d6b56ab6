"""``cadenza run`` with a known local model that is not pulled: said before a server starts."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import pytest

from cadenza.cli import unpulled_model
from cadenza.config import DEFAULT_LOCAL_MODEL
from cadenza.providers import models
from cadenza.providers.model_catalog import MODELS, ModelSpec, WheelPart
from cadenza.providers.models import model_path

DATA = b"GGUF a tiny fake model"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty models folder, and the person's config, trust and state folders of this test."""
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    for name in ("CADENZA_MODEL", "CADENZA_MODEL_CATALOG", "CADENZA_LOCAL_SERVER_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CADENZA_MODELS_DIR", str(tmp_path / "models"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def run_args(workspace: Path, *, model: str | None = None, **more: object) -> argparse.Namespace:
    values: dict[str, object] = {"continue_id": None, "trust_workspace": None, **more}
    return argparse.Namespace(model=model, workspace=str(workspace), **values)


def pulled_fake(monkeypatch: pytest.MonkeyPatch) -> None:
    """A known model ``cz-pulled`` whose verified file is in the models folder."""
    part = WheelPart(requirement="cz-pulled==1.0", member="cz_pulled/model.gguf")
    spec = ModelSpec(
        name="cz-pulled",
        description="a fake",
        parts=(part,),
        size=len(DATA),
        sha256=hashlib.sha256(DATA).hexdigest(),
    )
    monkeypatch.setitem(MODELS, spec.name, spec)
    folder = models.models_dir()
    folder.mkdir(parents=True)
    (folder / spec.file_name).write_bytes(DATA)
    models._write_stamp(folder / spec.file_name, spec)
    assert model_path(spec) is not None


def test_a_known_model_not_pulled_says_how_to_pull_it(isolated: Path) -> None:
    said = unpulled_model(run_args(isolated, model="local/smollm2-135m"))
    assert said == (
        "the model local/smollm2-135m is not downloaded yet: run `cadenza models pull "
        "smollm2-135m` first, or choose a model that is (`cadenza models list`)"
    )


def test_the_configured_or_default_model_is_checked_too(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = DEFAULT_LOCAL_MODEL.removeprefix("local/")
    said = unpulled_model(run_args(isolated))
    assert said is not None and f"`cadenza models pull {default}`" in said
    monkeypatch.setenv("CADENZA_MODEL", "local/smollm2-135m")
    said = unpulled_model(run_args(isolated))
    assert said is not None and "`cadenza models pull smollm2-135m`" in said
    monkeypatch.setenv("CADENZA_MODEL", "openai/gpt-4.1")
    assert unpulled_model(run_args(isolated)) is None


def test_what_can_run_is_not_stopped(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pulled_fake(monkeypatch)
    assert unpulled_model(run_args(isolated, model="local/cz-pulled")) is None
    assert unpulled_model(run_args(isolated, model="openai/test")) is None
    assert unpulled_model(run_args(isolated, model="local/no-such-model")) is None  # its own error
    assert unpulled_model(run_args(isolated, model="local/" + str(isolated / "m.gguf"))) is None
    # --continue without --model: the session's own model goes on.
    assert unpulled_model(run_args(isolated, continue_id="abc")) is None
    # A shared model server serves the local model: no file is needed here.
    monkeypatch.setenv("CADENZA_LOCAL_SERVER_URL", "http://127.0.0.1:9")
    assert unpulled_model(run_args(isolated, model="local/smollm2-135m")) is None


def test_a_folder_whose_trust_is_not_decided_may_choose_its_model(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pulled_fake(monkeypatch)
    user = isolated.parent / "xdg_config_home" / "cadenza"
    user.mkdir(parents=True)
    (user / "cadenza.toml").write_text('model = "local/cz-pulled"\n', encoding="utf-8")
    (isolated / "cadenza.toml").write_text('model = "local/smollm2-135m"\n', encoding="utf-8")
    assert unpulled_model(run_args(isolated)) is None  # asked in the run, then the server says
    trusted = unpulled_model(run_args(isolated, trust_workspace=True))
    assert trusted is not None and "`cadenza models pull smollm2-135m`" in trusted
