"""acpx drives ``cadenza acp``: slash commands and the model configuration option.

What acpx 0.19.1 offers: a prompt goes as typed, so ``/NAME args`` reaches Cadenza as the
prompt text (acpx has no command menu of its own; ``--format json`` shows the
``available_commands_update`` it got). ``acpx set KEY VALUE`` sends ``session/set_config_option``
to the session's running agent; ``acpx set model ID`` and ``--model ID`` (applied to a new
session before its first prompt) do the same for the option of category ``model``. acpx refuses
a model the agent did not advertise, so the tests add ``openai/other`` to the user's
``cadenza.toml`` ``models``. (``acpx set-mode`` sends ``session/set_mode``; not tested here.)
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import person_messages, text
from tests.thirdparty import acpx as ax
from tests.thirdparty.scripted_model import ScriptedModel

pytestmark = pytest.mark.skipif(ax.missing() is not None, reason=ax.missing() or "")


def client(tmp_path: Path, workspace: Path, model: ScriptedModel) -> ax.Acpx:
    return ax.Acpx(workspace=workspace, home=tmp_path / "home", model_url=model.base_url)


def offer_another_model(acpx: ax.Acpx) -> None:
    """The user's ``cadenza.toml`` lists ``openai/other``, so the model option offers it."""
    user_config = Path(acpx.env["XDG_CONFIG_HOME"]) / "cadenza"
    user_config.mkdir(parents=True)
    (user_config / "cadenza.toml").write_text('models = ["openai/other"]\n')


def user_texts(request: dict[str, Any]) -> list[str]:
    return person_messages(request)


def test_a_slash_command_reaches_the_model_expanded(tmp_path: Path) -> None:
    """``/explain app.py`` runs the workspace's ``.cadenza/commands/explain.md`` prompt file:
    acpx saw the command announced, and the model got the file's text with the arguments."""
    workspace = tmp_path / "ws"
    folder = workspace / ".cadenza" / "commands"
    folder.mkdir(parents=True)
    (folder / "explain.md").write_text(
        "---\ndescription: Explain a file\nargument-hint: the file\n---\n"
        "Explain $ARGUMENTS in plain words.\n"
    )
    with ScriptedModel(tmp_path / "model", [text("It adds.")]) as model:
        run = client(tmp_path, workspace, model).run("--format", "json", "exec", "/explain app.py")
        assert run.code == 0, run.stderr
        [request] = model.requests()
        assert user_texts(request)[0] == "Explain app.py in plain words."
        assert "/explain" not in " ".join(user_texts(request))
    announced = [
        u for u in ax.updates(run.messages()) if u["sessionUpdate"] == "available_commands_update"
    ]
    assert announced, "acpx got no available_commands_update"
    commands = {c["name"]: c for c in announced[-1]["availableCommands"]}
    assert commands["explain"]["description"] == "Explain a file"
    assert commands["explain"]["input"] == {"hint": "the file"}


def test_acpx_set_model_switches_the_model_between_two_prompts(tmp_path: Path) -> None:
    """``acpx set model openai/other`` between two prompts of one session: the second request
    names the other model and carries the first turn (the same conversation); an unknown mode
    is refused in plain words; a new agent that loads the session keeps the chosen model."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModel(tmp_path / "model", [text("one"), text("two"), text("three")]) as model:
        acpx = client(tmp_path, workspace, model)
        offer_another_model(acpx)
        assert acpx.run("sessions", "new").code == 0
        first = acpx.run("--format", "json", "prompt", "hi")
        assert first.code == 0, first.stderr
        # The prompt's agent loads the session ``sessions new`` made; the answer offers models.
        messages = first.messages()
        [load] = ax.requests(messages, "session/load")
        offered = next(
            o
            for o in ax.response_to(messages, load)["result"]["configOptions"]
            if o["id"] == "model"
        )
        assert offered["currentValue"] == "openai/test"
        assert "openai/other" in [o["value"] for o in offered["options"]]

        chosen = acpx.run("--format", "json", "set", "model", "openai/other")
        assert chosen.code == 0, chosen.stdout + chosen.stderr
        [said] = chosen.messages()
        assert said["action"] == "model_set" and said["modelId"] == "openai/other"

        refused = acpx.run("set", "mode", "nosuch")
        assert refused.code != 0
        assert "unknown workflow" in refused.stdout + refused.stderr

        second = acpx.run("--format", "json", "prompt", "again")
        assert second.code == 0, second.stderr
        requests = model.requests()
        assert [r["model"] for r in requests] == ["test", "other"]
        assert user_texts(requests[1])[0] == "hi"  # the same conversation

        # After the owner's TTL a new agent loads the session: the choice was stored.
        time.sleep(float(ax.OWNER_TTL_S) + 2)
        third = acpx.run("--format", "json", "prompt", "once more")
        assert third.code == 0, third.stderr
        messages = third.messages()
        [load] = ax.requests(messages, "session/load")
        options = ax.response_to(messages, load)["result"]["configOptions"]
        assert next(o for o in options if o["id"] == "model")["currentValue"] == "openai/other"
        assert model.requests()[-1]["model"] == "other"
        acpx.run("sessions", "close")


def test_acpx_model_flag_chooses_the_model_of_a_new_session(tmp_path: Path) -> None:
    """``acpx --model openai/other exec ...``: acpx sets the advertised model option on the new
    session before its prompt, so the model's first request names it."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModel(tmp_path / "model", [text("one")]) as model:
        acpx = client(tmp_path, workspace, model)
        offer_another_model(acpx)
        run = acpx.run("--model", "openai/other", "--format", "json", "exec", "hi")
        assert run.code == 0, run.stderr
        [setting] = ax.requests(run.messages(), "session/set_config_option")
        assert setting["params"] == {
            "sessionId": setting["params"]["sessionId"],
            "configId": "model",
            "value": "openai/other",
        }
        assert [r["model"] for r in model.requests()] == ["other"]
