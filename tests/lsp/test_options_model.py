"""``initializationOptions.model``, ``models`` and ``contextSize``: what the editor's settings
may choose.

Editors merge a workspace's own settings into ``initializationOptions``, so a model file of the
repository or another provider counts only in a trusted folder or repeating the person's config,
as ``model`` and as an entry of ``models`` (what the pickers offer, checked through the real
server).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from cadenza.config import MAX_CONTEXT_SIZE, CadenzaConfig, ConfigError, load_config
from cadenza.host.trust import TrustStore
from cadenza.lsp.options import load_server_config
from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The person's config folder (empty), no CADENZA_MODEL, and a workspace folder ``ws``."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("CADENZA_MODEL", raising=False)
    (tmp_path / "user" / "cadenza").mkdir(parents=True)
    (tmp_path / "ws").mkdir()
    return tmp_path / "user" / "cadenza"


@pytest.mark.parametrize(
    "model",
    [
        "local/evil.gguf",
        "local/models/evil.gguf",
        "local//tmp/evil.gguf",
        "local/~/evil.gguf",
        "local/..\\evil.GGUF",
        "openai/gpt-4o",
        "cli/claude",
    ],
)
def test_a_model_file_or_another_provider_waits_for_trust(
    user: Path, tmp_path: Path, model: str
) -> None:
    store = TrustStore(tmp_path / "trust.json")
    loaded = load_server_config(tmp_path / "ws", {"model": model, "maxSteps": 4}, store=store)
    assert loaded.config.model is None  # the embedded local model
    assert loaded.config.max_steps == 4  # the other options stay
    [warning] = loaded.warnings
    assert "initializationOptions.model" in warning and "cadenza trust" in warning, warning
    # The person trusts the folder: the same option applies.
    store.record(tmp_path / "ws", "trusted")
    trusted = load_server_config(tmp_path / "ws", {"model": model}, store=store)
    assert trusted.config.model == model and trusted.warnings == []


def test_a_file_is_named_as_a_file_and_a_provider_as_a_provider(user: Path, tmp_path: Path) -> None:
    [file] = load_server_config(tmp_path / "ws", {"model": "local/x.gguf"}).warnings
    assert "model file" in file
    [provider] = load_server_config(tmp_path / "ws", {"model": "openai/gpt-4o"}).warnings
    assert "your provider (local)" in provider


@pytest.mark.parametrize(
    "model", ["local/qwen2.5-coder-1.5b", "local/qwen2.5-coder-7b", "local/smollm2-135m"]
)
def test_a_catalogue_model_of_the_persons_provider_stays(
    user: Path, tmp_path: Path, model: str
) -> None:
    """The editors' model pickers send a catalogue name: it needs no trust."""
    loaded = load_server_config(tmp_path / "ws", {"model": model})
    assert loaded.config.model == model and loaded.warnings == []


def test_the_persons_own_model_or_provider_is_kept(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (user / "cadenza.toml").write_text(
        'model = "openai/gpt-4.1"\nmodels = ["local//models/mine.gguf"]\n'
    )
    ws = tmp_path / "ws"
    for model in ("openai/gpt-4.1", "openai/gpt-4o", "local//models/mine.gguf"):
        loaded = load_server_config(ws, {"model": model})
        assert loaded.config.model == model and loaded.warnings == [], model
    [warning] = load_server_config(ws, {"model": "anthropic/claude-sonnet-4-5"}).warnings
    assert "your provider (openai)" in warning
    # CADENZA_MODEL is the person's too (what the VS Code and Neovim clients set).
    monkeypatch.setenv("CADENZA_MODEL", "local/./shipped.gguf")
    loaded = load_server_config(ws, {"model": "local/./shipped.gguf"})
    assert loaded.config.model == "local/./shipped.gguf" and loaded.warnings == []


def test_a_workspace_toml_model_path_waits_for_trust(user: Path, tmp_path: Path) -> None:
    (tmp_path / "ws" / "cadenza.toml").write_text('model = "local/evil.gguf"\n')
    warnings: list[str] = []
    assert load_config(tmp_path / "ws", warnings).model is None
    assert "model" in warnings[0] and "not trusted" in warnings[0]


def test_context_size_is_bounded_from_every_source(user: Path, tmp_path: Path) -> None:
    assert CadenzaConfig(contextSize=MAX_CONTEXT_SIZE).context_size == MAX_CONTEXT_SIZE
    with pytest.raises(ConfigError, match="contextSize"):
        CadenzaConfig().merged({"contextSize": MAX_CONTEXT_SIZE + 1}, "test")

    (tmp_path / "ws" / "cadenza.toml").write_text("contextSize = 100000000\nmaxSteps = 7\n")
    loaded = load_server_config(tmp_path / "ws", None)  # a raise waits for trust
    assert (loaded.config.context_size, loaded.config.max_steps) == (8192, 7)
    assert loaded.trust is not None and "contextSize = 100000000" in loaded.trust.question()
    trusted = load_server_config(tmp_path / "ws", None, granted=True)
    assert trusted.config.context_size == 8192
    [warning] = trusted.warnings
    assert "cadenza.toml" in warning and "contextSize" in warning and "131072" in warning

    options = load_server_config(None, {"contextSize": 100_000_000})
    assert options.config.context_size == 8192
    assert "contextSize" in options.warnings[0]

    (user / "cadenza.toml").write_text("contextSize = 100000000\n")
    with pytest.raises(ConfigError, match="contextSize"):
        load_config(None)


# ``initializationOptions.models``: what the pickers offer, through the real server.


def _warnings(editor: Harness) -> list[str]:
    return [m.message for m in editor.client.messages if m.type == types.MessageType.Warning]


SPOOFS = [
    "local/evil.gguf",
    "local//tmp/evil.gguf",
    "local/models/evil.gguf",
    "openai/gpt-4o",
    "cli/claude",
    "local/qwen2.5-coder-7b (local, default)",
]


async def test_a_model_file_or_another_provider_in_models_is_not_offered(
    connect: Connect,
) -> None:
    editor = await connect(init_options={"models": [*SPOOFS, "local/qwen2.5-coder-7b"]})
    listed = await editor.execute("cadenza.listModels", {})
    ids = [m["id"] for m in listed["models"]]
    assert ids[:2] == ["local/qwen2.5-coder-1.5b", "local/qwen2.5-coder-7b"]  # a catalogue name
    assert not set(SPOOFS) & set(ids), ids
    assert [m["label"] for m in listed["models"] if "default" in m["label"]] == [
        "qwen2.5-coder-1.5b (local, default)"
    ]
    warnings = _warnings(editor)
    for spoof in SPOOFS:
        [said] = [w for w in warnings if repr(spoof) in w]
        assert "initializationOptions.models" in said and "cadenza trust" in said, said
    assert "model file" in next(w for w in warnings if "'local/evil.gguf'" in w)
    assert "your provider (local)" in next(w for w in warnings if "'openai/gpt-4o'" in w)
    assert "not a model name" in next(w for w in warnings if "(local, default)'" in w)


async def test_a_label_on_the_persons_own_provider_is_cadenzas(connect: Connect) -> None:
    editor = await connect(
        init_options={"models": ["openai/gpt-4o (local, default)", "openai/bigger"]},
        user_config={"model": "openai/test"},
    )
    listed = await editor.execute("cadenza.listModels", {})
    assert [(m["id"], m["label"]) for m in listed["models"][:2]] == [
        ("openai/test", "test (openai, default)"),
        ("openai/bigger", "bigger (openai)"),
    ]
    assert not any("(local, default)" in m["id"] for m in listed["models"])
    [said] = _warnings(editor)
    assert "not a model name" in said


async def test_models_the_person_named_or_a_trusted_folder_offers_are_kept(
    connect: Connect, workspace: Path, tmp_path: Path
) -> None:
    theirs = ["local/evil.gguf", "openai/gpt-4o"]
    own = await connect(init_options={"models": theirs}, user_config={"models": theirs})
    ids = [m["id"] for m in (await own.execute("cadenza.listModels", {}))["models"]]
    assert set(theirs) <= set(ids) and _warnings(own) == []

    TrustStore(tmp_path / "home" / "xdg_state_home" / "cadenza" / "trust.json").record(
        workspace, "trusted"
    )
    trusted = await connect(init_options={"models": SPOOFS}, user_config={})
    listed = (await trusted.execute("cadenza.listModels", {}))["models"]
    assert {"local/evil.gguf", "openai/gpt-4o"} <= {m["id"] for m in listed}
    assert _warnings(trusted) == []
