"""The conversation in Neovim (:CadenzaChat, :CadenzaModel, the review of a turn's changes) in
real headless Neovim against the real ``cadenza serve`` and the scripted model server.

Each test scripts the fake OpenAI model, runs one Lua scenario from ``scenarios/`` (it asserts
what Neovim shows), then asserts what the model was sent and what is on disk.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.nvim.harness import Outcome, isolated_env, run_scenario
from tests.support.fake_openai import FakeOpenAI, Reply, call, is_workspace, text, tool_call

APP = "def greet():\n    return 'hi'\n"


def passed(outcome: Outcome) -> None:
    assert outcome.ok, outcome.report()


def messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    found = request["messages"]
    assert isinstance(found, list)
    return found


def user_texts(request: dict[str, Any]) -> list[str]:
    return [
        str(m["content"]) for m in messages(request) if m["role"] == "user" and not is_workspace(m)
    ]


def assistant_texts(request: dict[str, Any]) -> list[str]:
    return [str(m.get("content") or "") for m in messages(request) if m["role"] == "assistant"]


def edit(old: str, new: str, call_id: str) -> Reply:
    return call("edit_file", {"path": "app.py", "old_string": old, "new_string": new}, call_id)


def test_unit_mentions_review_and_wording(workspace: Path, env: dict[str, str]) -> None:
    """Lua unit tests, no server: mention parsing and completion, drawing a review and its
    keys, error wording, the model picker's lines, the review options' validation."""
    passed(run_scenario("unit_chat", workspace=workspace, env=env))


def test_three_turn_chat_with_a_file_mention_and_a_command(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    (workspace / "app.py").write_text(APP)
    commands = workspace / ".cadenza" / "commands"
    commands.mkdir(parents=True)
    (commands / "explain.md").write_text(
        "---\ndescription: Explain something simply\nargument-hint: what to explain\n---\n"
        "Explain $ARGUMENTS to a beginner, in two sentences.\n"
    )
    # A price table: each call's cost comes in model_reply, the statusline shows the turn's.
    user_config = Path(env["XDG_CONFIG_HOME"]) / "cadenza"
    user_config.mkdir(parents=True, exist_ok=True)
    (user_config / "cadenza.toml").write_text(
        '[providers.openai.prices."test"]\ninput = 1000.0\noutput = 2000.0\ncurrency = "USD"\n'
    )
    fake.script(
        text("Nice to meet you, Ada."),
        text("It returns 'hi', and you are Ada."),
        text("You are welcome."),
        text("Checked."),
    )
    passed(run_scenario("chat", workspace=workspace, env=env))

    assert len(fake.requests) == 4
    first, second, third, fourth = fake.requests
    assert user_texts(first) == ["My name is Ada.\nPlease remember it."]
    # Turn 2 reaches the model with turn 1 before it (the model can answer "my name").
    assert user_texts(second)[0] == "My name is Ada.\nPlease remember it."
    assert "Nice to meet you, Ada." in assistant_texts(second)
    follow_up = user_texts(second)[-1]
    assert follow_up.startswith("What does @app.py return, and what is my name?")
    # The @mention went as context.files: the file's text is in the message.
    assert "File app.py" in follow_up
    assert "return 'hi'" in follow_up
    # Turn 3, a /command, reached the model expanded, after both earlier turns.
    assert user_texts(third)[-1].startswith(
        "Explain the greeting to a beginner, in two sentences."
    ), user_texts(third)
    assert {"Nice to meet you, Ada.", "It returns 'hi', and you are Ada."} <= set(
        assistant_texts(third)
    )
    # A new conversation's first message: its @mention went as startSession's context.
    (task,) = user_texts(fourth)
    assert task.startswith("Check @app.py please\n\nContext from the editor:"), task
    assert "File app.py" in task
    assert "return 'hi'" in task


def test_model_switch_between_turns(fake: FakeOpenAI, workspace: Path, env: dict[str, str]) -> None:
    fake.script(text("Hello!"), text("Hello again, from the other model."))
    env = {**env, "CADENZA_TEST_OTHER_MODEL": "openai/other"}
    passed(run_scenario("model_switch", workspace=workspace, env=env))
    assert [r["model"] for r in fake.requests] == ["test", "other"]
    # The same conversation: turn 2 carries turn 1.
    assert user_texts(fake.requests[1]) == ["Say hello", "And again"]


CONSTANTS = "a = 1\n" + "".join(f"m{i} = {i}\n" for i in range(2, 9)) + "z = 9\n"


def test_review_keep_one_hunk_undo_the_other_by_keymap(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    (workspace / "app.py").write_text(CONSTANTS)
    fake.script(
        edit("a = 1", "FIRST = 10", "c1"),
        edit("z = 9", "LAST = 90", "c2"),
        text("Renamed both."),
        text("Nothing else."),
    )
    passed(run_scenario("review", workspace=workspace, env=env))
    assert len(fake.requests) == 4
    # The next turn tells the model which of its changes the person undid (and not the kept one).
    told = user_texts(fake.requests[3])[-1]
    note, said, _ = told.partition("Anything else?")
    assert said, told
    assert note.startswith("The person undid these changes you made in the previous turn"), told
    assert "z = 9" in note and "LAST = 90" in note, told
    assert "FIRST = 10" not in note, told  # the kept change is not said to be undone
    assert (workspace / "app.py").read_text() == CONSTANTS  # the buffer is not written


def test_a_missing_local_model_offers_to_pull_it(workspace: Path, tmp_path: Path) -> None:
    models = tmp_path / "no-models"
    models.mkdir()
    env = isolated_env(tmp_path / "home-pull", CADENZA_MODELS_DIR=str(models))
    passed(run_scenario("pull_fix", workspace=workspace, env=env))
    assert list(models.iterdir()) == []  # "Not now": nothing was fetched


def test_typing_at_and_slash_opens_the_completion_menu(
    workspace: Path, env: dict[str, str]
) -> None:
    (workspace / "app.py").write_text(APP)
    commands = workspace / ".cadenza" / "commands"
    commands.mkdir(parents=True)
    (commands / "explain.md").write_text("Explain $ARGUMENTS.\n")
    passed(run_scenario("completion_popup", workspace=workspace, env=env))


def plan(*entries: tuple[str, str], call_id: str, delay_s: float = 0.0) -> Reply:
    """A reply holding one ``update_plan`` call with ``(content, status)`` entries."""
    items = [{"content": c, "status": s} for c, s in entries]
    return Reply(
        tool_calls=[tool_call("update_plan", {"entries": items}, call_id)], delay_s=delay_s
    )


def test_messages_queued_steered_and_dropped_while_a_turn_runs(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    (workspace / "app.py").write_text(APP)
    fake.script(
        plan(("Quote style", "in_progress"), ("Docstring", "pending"), call_id="p1"),
        # Held back while the person queues, drops and steers.
        plan(("Quote style", "completed"), ("Docstring", "in_progress"), call_id="p2", delay_s=4),
        text("Tidied."),
        text("Added the test."),
    )
    passed(run_scenario("queue", workspace=workspace, env=env))

    assert len(fake.requests) == 4
    # The steer reached the running turn: a user message after the second step's result.
    third = messages(fake.requests[2])
    assert [third[-1]["role"], third[-1]["content"]] == ["user", "Use single quotes"], third[-2:]
    assert third[-2]["role"] == "tool"
    assert "Use single quotes" not in json.dumps(fake.requests[1])
    # The dropped message went nowhere; the queued one is the next turn's prompt.
    everything = json.dumps(fake.requests)
    assert "drop me" not in everything
    assert user_texts(fake.requests[3])[-1] == "Now add a test"
    # The plan tool was offered (a hosted model's default).
    assert "update_plan" in {t["function"]["name"] for t in fake.requests[0]["tools"]}


def test_restore_to_before_a_message_puts_the_file_and_the_message_back(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    """:CadenzaRestore on the second of three messages, then :CadenzaRestore 1 (the scenario
    asserts the buffer and the prompt); the model then sees the conversation before it."""
    (workspace / "app.py").write_text(APP)
    fake.script(
        edit("'hi'", "'hello'", "c1"),
        text("Says hello."),
        edit("'hello'", "'bye'", "c2"),
        text("Says bye."),
        edit("'bye'", "'BYE'", "c3"),
        text("Shouts."),
        edit("'hello'", "'bye'", "c4"),
        text("Says bye now."),
    )
    passed(run_scenario("restore", workspace=workspace, env=env))

    assert len(fake.requests) == 8
    fourth_turn = fake.requests[6]
    texts = user_texts(fourth_turn)
    assert texts[0] == "Say hello instead." and texts[-1] == "Say bye."
    assert not any("Now say bye" in t or "Shout it" in t for t in texts)
    assert "Says bye." not in assistant_texts(fourth_turn)
    assert (workspace / "app.py").read_text() == APP  # never saved: the buffers changed
