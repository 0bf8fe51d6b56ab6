"""The editor face's pure parts: line splitting, minimal edits, positions, updates, options."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cadenza.engine.events import (
    Activity,
    CheckpointWritten,
    ContextCompacted,
    ContractRepaired,
    FileEdited,
    ModelReplied,
    MovementStarted,
    SessionFinished,
    StepStarted,
    ToolCacheLookup,
    ToolCallFinished,
    ToolCallStarted,
    WorkspaceWaited,
)
from cadenza.engine.transcript import read_transcript
from cadenza.host.transcripts import GuardedRecorder, open_transcript
from cadenza.host.trust import TrustStore
from cadenza.lsp.capabilities import ClientFeatures
from cadenza.lsp.edits import (
    minimal_replacement,
    offset_to_position,
    split_lines,
    text_edits,
)
from cadenza.lsp.options import load_server_config
from cadenza.lsp.params import InvalidArguments, arguments_error, parse_command_args
from cadenza.lsp.updates import log_line, progress_end, progress_report, session_update
from cadenza.messages import UserMessage
from cadenza.schema.commands import StartSessionArgs
from tests.lsp.harness import apply_text_edits

ENCODINGS = ["utf-8", "utf-16", "utf-32"]


def codec(encoding: str) -> PositionCodec:
    return PositionCodec(encoding=types.PositionEncodingKind(encoding))


def test_split_lines_uses_only_lsp_terminators() -> None:
    text = "a\x0bb\x0c\u2028c\x85\r\nd\re\n"
    assert split_lines(text) == ["a\x0bb\x0c\u2028c\x85\r\n", "d\r", "e\n", ""]
    assert split_lines("") == [""]
    assert split_lines("no newline") == ["no newline"]


def test_offset_to_position_counts_code_units() -> None:
    text = 's = "😀"; x = 1\nnext\n'
    lines = split_lines(text)
    x = text.index("x")
    assert offset_to_position(lines, x, codec("utf-16")) == types.Position(line=0, character=10)
    assert offset_to_position(lines, x, codec("utf-8")) == types.Position(line=0, character=12)
    assert offset_to_position(lines, x, codec("utf-32")) == types.Position(line=0, character=9)
    end = len(text)
    assert offset_to_position(lines, end, codec("utf-16")) == types.Position(line=2, character=0)


def test_offset_inside_a_crlf_is_rejected() -> None:
    lines = split_lines("ab\r\ncd")
    with pytest.raises(ValueError, match="splits the CRLF"):
        offset_to_position(lines, 3, codec("utf-16"))
    with pytest.raises(ValueError, match="outside the text"):
        offset_to_position(lines, 7, codec("utf-16"))


@pytest.mark.parametrize(
    ("old", "new", "start", "end", "text"),
    [
        ("x = 1\n", "x = 1\n", 6, 6, ""),
        ("x = 1\n", "x = 10\n", 5, 5, "0"),
        ("aaa", "aa", 2, 3, ""),
        ("abc", "xyz", 0, 3, "xyz"),
        ("a\r\nb", "a\nb", 1, 3, "\n"),  # never starts between \r and \n
        ("a\r\nb", "a\rb", 1, 3, "\r"),
        ("a\r\n", "a\r\nb\r\n", 3, 3, "b\r\n"),
    ],
)
def test_minimal_replacement(old: str, new: str, start: int, end: int, text: str) -> None:
    change = minimal_replacement(old, new)
    assert (change.start, change.end, change.text) == (start, end, text)
    assert old[: change.start] + change.text + old[change.end :] == new


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_text_edits_round_trip_random_texts(encoding: str) -> None:
    rng = random.Random(20240501)
    alphabet = ["a", "b", "\r", "\n", "\r\n", "😀", "é", "\u2028", "\x0b", " "]
    for _ in range(400):
        old = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        new = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        edits = [e for e in text_edits(old, new, codec(encoding)) if isinstance(e, types.TextEdit)]
        assert apply_text_edits(old, edits, encoding) == new, (old, new)


def test_session_update_paths_are_absolute_and_steps_are_progress_only(tmp_path: Path) -> None:
    edited = FileEdited(tool_call_id="c", path="src/a.py", old_text=None, new_text="x")
    update = session_update(edited, tmp_path)
    assert update is not None
    assert update.wire() == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "content": [
            {"type": "diff", "path": str(tmp_path / "src/a.py"), "oldText": None, "newText": "x"}
        ],
    }
    step = StepStarted(step=3, max_steps=25)
    assert session_update(step, tmp_path) is None
    assert progress_report(step) == "step 3/25"
    started = ToolCallStarted(
        tool_call_id="c", name="read_file", title="reading a.py", tool_kind="read", raw_input="{"
    )
    assert progress_report(started) == "reading a.py"
    start_update = session_update(started, tmp_path)
    assert start_update is not None
    assert start_update.wire()["rawInput"] == "{"  # not JSON: passed on as written
    waited = WorkspaceWaited(tool_call_id="c", holder="session x (process 7) is running `make`")
    text = "waiting for the workspace: session x (process 7) is running `make`"
    assert progress_report(waited) == text
    wait_update = session_update(waited, tmp_path)
    assert wait_update is not None
    assert wait_update.wire() == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "content": [{"type": "content", "content": {"type": "text", "text": text}}],
    }


def test_progress_end_is_bounded() -> None:
    assert progress_end(SessionFinished(stop_reason="cancelled")) == "cancelled"
    long = progress_end(SessionFinished(stop_reason="end_turn", message="x" * 1000))
    assert len(long) == 300
    assert long.startswith("end_turn: xxx")


@pytest.mark.parametrize(
    ("experimental", "expected"),
    [
        ({"cadenza": {"askUser": True}}, True),
        ({"cadenza": {"askUser": "yes"}}, False),
        ({"cadenza": True}, False),
        ({"other": {}}, False),
        (None, False),
    ],
)
def test_ask_user_capability(experimental: object, expected: bool) -> None:
    caps = types.ClientCapabilities(experimental=experimental)
    features = ClientFeatures.of(caps)
    assert features.ask_user is expected
    assert features.apply_edit is False
    assert features.work_done_progress is False


def test_config_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("CADENZA_MODEL", raising=False)
    (tmp_path / "cadenza.toml").write_text('model = "openai/toml"\nmaxSteps = 7\n')

    untrusted = load_server_config(tmp_path, None)  # the model waits for the trust question
    assert untrusted.config.model is None and untrusted.config.max_steps == 7
    assert untrusted.trust is not None and untrusted.trust.undecided
    assert load_server_config(tmp_path, None, granted=True).config.model == "openai/toml"
    monkeypatch.setenv("CADENZA_MODEL", "openai/env")
    assert load_server_config(tmp_path, None, granted=True).config.model == "openai/env"
    loaded = load_server_config(tmp_path, {"model": "openai/init"}, granted=True)
    assert loaded.config.model == "openai/init"
    assert loaded.config.max_steps == 7
    assert loaded.warnings == []


def test_invalid_settings_become_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CADENZA_MODEL", "openai/env")
    (tmp_path / "cadenza.toml").write_text("model = [broken\n")

    loaded = load_server_config(tmp_path, {"maxSteps": 0})
    assert loaded.config.model == "openai/env"
    assert loaded.config.max_steps == 25
    assert len(loaded.warnings) == 2
    assert "ignored" in loaded.warnings[0] and "cadenza.toml" in loaded.warnings[0]
    assert "maxSteps" in loaded.warnings[1]

    not_object = load_server_config(None, ["maxSteps", 3])
    assert not_object.warnings == ["Cadenza ignored initializationOptions: expected a JSON object"]


def test_movement_compaction_and_end_updates(tmp_path: Path) -> None:
    movement = MovementStarted(workflow="pir", movement="implement", index=2, reason="the plan")
    update = session_update(movement, tmp_path)
    assert update is not None
    assert update.wire() == {
        "sessionUpdate": "movement",
        "workflow": "pir",
        "movement": "implement",
        "index": 2,
        "reason": "the plan",
    }
    compacted = ContextCompacted(tokens_before=3000, tokens_after=1200, messages_summarized=6)
    update = session_update(compacted, tmp_path)
    assert update is not None
    assert update.wire() == {
        "sessionUpdate": "compaction",
        "tokensBefore": 3000,
        "tokensAfter": 1200,
        "messagesSummarized": 6,
    }
    asked = SessionFinished(
        stop_reason="needs_user_input",
        message="Which name?",
        steps=3,
        missing_info="the name",
        why_no_default="two fit",
    )
    update = session_update(asked, tmp_path)
    assert update is not None
    assert update.wire() == {
        "sessionUpdate": "session_end",
        "stopReason": "needs_user_input",
        "message": "Which name?",
        "steps": 3,
        "missingInfo": "the name",
        "whyNoDefault": "two fit",
    }
    update = session_update(SessionFinished(stop_reason="aborted", message="overflow"), tmp_path)
    assert update is not None
    assert update.wire() == {
        "sessionUpdate": "session_end",
        "stopReason": "aborted",
        "message": "overflow",
        "steps": 0,
    }


def test_bookkeeping_goes_to_the_log_only(tmp_path: Path) -> None:
    hit = ToolCacheLookup(tool_call_id="c3", name="read_file", hit=True)
    checkpoint = CheckpointWritten(movement="plan", note="read a.py. Next: implement.")
    compacted = ContextCompacted(tokens_before=3000, tokens_after=1200, messages_summarized=6)
    assert session_update(hit, tmp_path) is None
    assert session_update(checkpoint, tmp_path) is None
    assert log_line(hit) == "tool cache hit: read_file (call c3)"
    assert log_line(ToolCacheLookup(tool_call_id="c1", name="search", hit=False)) == (
        "tool cache miss: search (call c1)"
    )
    assert log_line(checkpoint) == "checkpoint after movement plan: read a.py. Next: implement."
    assert log_line(compacted) == "context compacted: 6 messages summarized, 3000 → 1200 tokens"
    assert log_line(StepStarted(step=1, max_steps=2)) is None


def test_step_reports_name_the_movement() -> None:
    step = StepStarted(step=2, max_steps=25)
    assert progress_report(step, "plan") == "plan · step 2/25"
    assert progress_report(step) == "step 2/25"
    movement = MovementStarted(workflow="w", movement="plan", index=1)
    assert progress_report(movement, "plan") is None
    timed = StepStarted(step=9, run_step=4, max_steps=25, elapsed_s=130.4, budget_s=600)
    assert progress_report(timed, "implement") == "implement · step 4/25 · 2 min 10 s of 10 min"
    writing = Activity(step=4, max_steps=25, doing="writing an edit", tokens=180, elapsed_s=75)
    assert progress_report(writing) == "step 4/25 · writing an edit, 180 tokens"
    one = writing.model_copy(update={"tokens": 1})
    assert progress_report(one) == "step 4/25 · writing an edit, 1 token"
    reading = writing.model_copy(update={"doing": "reading the conversation", "tokens": 0})
    assert progress_report(reading) == "step 4/25 · reading the conversation"
    assert session_update(writing, Path("/w")) is None  # a progress line, not an update
    asked = progress_end(SessionFinished(stop_reason="needs_user_input", message="Which name?"))
    assert asked == "needs_user_input: Which name?"


def test_loop_updates_name_the_tool_and_mark_what_the_engine_answered(tmp_path: Path) -> None:
    started = ToolCallStarted(
        tool_call_id="c", name="read_file", title="reading a.py", tool_kind="read", raw_input="{}"
    )
    start = session_update(started, tmp_path)
    assert start is not None and start.wire()["name"] == "read_file"
    noted = ToolCallFinished(
        tool_call_id="c", status="failed", content="You already called", observation="repeat"
    )
    note = session_update(noted, tmp_path)
    assert note is not None and note.wire()["observation"] == "repeat"
    ran = session_update(
        ToolCallFinished(tool_call_id="c", status="completed", content="x"), tmp_path
    )
    assert ran is not None and "observation" not in ran.wire()
    reply = session_update(
        ModelReplied(step=2, tool_calls=1, finish_reason="length", completion_tokens=64), tmp_path
    )
    assert reply is not None and reply.wire() == {
        "sessionUpdate": "model_reply",
        "step": 2,
        "toolCalls": 1,
        "finishReason": "length",
        "completionTokens": 64,
    }
    repair = session_update(ContractRepaired(step=2, reason="cut", recovered=True), tmp_path)
    assert repair is not None and repair.wire() == {
        "sessionUpdate": "repair",
        "step": 2,
        "reason": "cut",
        "recovered": True,
    }


def test_start_session_text_document_argument() -> None:
    args = parse_command_args(
        StartSessionArgs, [{"task": "t", "textDocument": {"uri": "file:///w/a.py"}}]
    )
    assert args.text_document is not None and args.text_document.uri == "file:///w/a.py"
    with pytest.raises(InvalidArguments):
        parse_command_args(StartSessionArgs, [{"task": "t", "textDocument": {"uri": 3}}])


@pytest.mark.parametrize(
    ("arguments", "kind"), [("notalist", "a string"), ({"task": "t"}, "an object"), (5, "a number")]
)
def test_command_arguments_that_are_no_array_say_what_they_are(
    arguments: object, kind: str
) -> None:
    # The converter made a string's characters the arguments: "... got 8" for "notalist".
    error = arguments_error({"command": "cadenza.startSession", "arguments": arguments})
    assert error is not None and error.code == -32602
    assert error.message == (
        "Invalid Params: cadenza.startSession: "
        f"arguments must be an array (of one object), got {kind}"
    )
    for fine in ({"command": "x"}, {"command": "x", "arguments": None}, {"arguments": "s"}, []):
        assert arguments_error(fine) is None
    assert arguments_error({"command": "x", "arguments": [{"task": "t"}]}) is None


def test_start_session_workflow_argument() -> None:
    assert parse_command_args(StartSessionArgs, [{"task": "t"}]).workflow == "default"
    args = parse_command_args(
        StartSessionArgs, [{"task": "t", "workflow": "plan-implement-review"}]
    )
    assert args.workflow == "plan-implement-review"


def test_a_failing_transcript_stops_quietly(tmp_path: Path) -> None:
    warnings: list[str] = []
    recorder = open_transcript(
        session_id="s1",
        task="t",
        root=tmp_path,
        workflow="default",
        model="openai/x",
        warn=warnings.append,
        directory=tmp_path / "sessions",
    )
    assert isinstance(recorder, GuardedRecorder)
    recorder.on_message(UserMessage(content="t", tag="task"))
    recorder.recorder.writer.close()  # as if the disk went away: every write now fails
    recorder.on_event(StepStarted(step=1, max_steps=2))
    recorder.on_checkpoint("work", "note")
    recorder.on_event(SessionFinished(stop_reason="end_turn"))
    assert recorder.failed
    assert len(warnings) == 1 and "stopped" in warnings[0]
    assert [r.type for r in read_transcript(recorder.path)] == ["session_start", "turn", "message"]
    recorder.close()

    unusable = tmp_path / "file"
    unusable.write_text("")
    refused = open_transcript(
        session_id="s2",
        task="t",
        root=tmp_path,
        workflow="default",
        model="openai/x",
        warn=warnings.append,
        directory=unusable / "sessions",
    )
    assert refused is None
    assert warnings[1].startswith("the session runs without a transcript: ")


def test_edit_capabilities() -> None:
    caps = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[types.ResourceOperationKind.Delete],
                change_annotation_support=types.ChangeAnnotationsSupportOptions(),
            ),
        ),
        experimental={"cadenza": {"exactEncodings": True}},
    )
    features = ClientFeatures.of(caps)
    assert (features.create_files, features.rename_files, features.delete_files) == (
        False,
        False,
        True,
    )
    assert features.change_annotations and features.exact_encodings
    bare = ClientFeatures.of(types.ClientCapabilities())
    assert not (bare.delete_files or bare.change_annotations or bare.exact_encodings)


def test_workspace_toml_cannot_set_permissions_providers_or_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("CADENZA_MODEL", raising=False)
    (tmp_path / "cadenza.toml").write_text(
        'model = "evil/x"\nmaxSteps = 7\n'
        "[permissions]\ngated = []\n"
        '[providers.evil]\nkind = "openai"\nbase_url = "http://attacker/v1"\n'
        'api_key_env = "OPENAI_API_KEY"\n'
        '[browser]\nexecutable_path = "/tmp/evil"\n'
    )
    loaded = load_server_config(tmp_path, None)
    assert loaded.config.max_steps == 7
    assert loaded.config.model is None  # held until the person trusts the folder
    assert loaded.config.providers == {}
    assert "run_command" in loaded.config.permissions.gated
    assert loaded.config.browser.executable_path is None
    [warning] = loaded.warnings  # the held ones are asked about first (lsp.trust)
    assert "ignored permissions" in warning
    # Trusted, the folder chooses its model, provider and browser, never the permissions.
    trusted = load_server_config(tmp_path, None, granted=True)
    assert trusted.config.model == "evil/x"
    assert trusted.config.providers["evil"].base_url == "http://attacker/v1"
    assert trusted.config.browser.executable_path == "/tmp/evil"
    assert "run_command" in trusted.config.permissions.gated


def test_init_options_only_tighten_permissions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("CADENZA_MODEL", raising=False)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "cadenza.toml").write_text('model = "evil/x"\n')
    loaded = load_server_config(
        tmp_path / "ws",
        {
            "permissions": {"gated": ["edit_file"], "timeoutS": 9},
            "mcp": {"gated": False, "servers": [{"name": "s", "url": "http://h", "gated": False}]},
            "trustWorkspace": True,
        },
    )
    permissions = loaded.config.permissions
    assert permissions.gated == ["run_command", "delete_file", "browse_interactive", "edit_file"]
    assert permissions.timeout_s == 9  # not a permission: taken
    assert loaded.config.mcp.gated and loaded.config.mcp.servers == []  # held: not trusted
    assert loaded.config.model is None  # the folder is not trusted by the options
    assert loaded.trust is not None and loaded.trust.undecided
    assert len(loaded.warnings) == 4, loaded.warnings
    # Nothing to warn about when the options only add prompts or repeat the person's choice.
    assert (
        load_server_config(
            None,
            {
                "permissions": {
                    "gated": ["run_command", "delete_file", "browse_interactive", "edit_file"]
                },
                "trustWorkspace": False,
            },
        ).warnings
        == []
    )


HELD = {
    "model": "openai/x",
    "providers": {"openai": {"baseUrl": "http://198.51.100.1/v1", "headers": {"A": "b"}}},
    "mcp": {"servers": [{"name": "x", "command": "sh", "args": ["-c", "touch marker"]}]},
    "checks": {"test": "touch marker", "testTimeoutS": 9},
    "browser": {"executablePath": "/tmp/evil"},
    "loop": {"prime": True},
}
"""``initializationOptions`` a repository's own editor settings could carry."""


def test_init_options_start_no_program_nor_move_requests_in_an_untrusted_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user" / "cadenza"
    user.mkdir(parents=True)
    (user / "cadenza.toml").write_text('[[mcp.servers]]\nname = "mine"\nurl = "http://h"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user"))
    monkeypatch.delenv("CADENZA_MODEL", raising=False)
    (tmp_path / "ws").mkdir()
    store = TrustStore(tmp_path / "trust.json")
    loaded = load_server_config(tmp_path / "ws", HELD, store=store)
    config = loaded.config
    assert config.model is None  # another provider than the person's (local): held too
    assert config.providers == {} and config.browser.executable_path is None
    assert [s.name for s in config.mcp.servers] == ["mine"]  # the person's own stay
    assert config.checks.test is None and config.checks.test_timeout_s == 9
    assert config.loop.prime is None
    model_warning, warning = loaded.warnings
    assert "initializationOptions.model = 'openai/x'" in model_warning, model_warning
    assert "providers, mcp.servers, checks.test, browser, loop" in warning, warning
    assert "cadenza trust" in warning

    # The person trusts the folder: the same options apply.
    store.record(tmp_path / "ws", "trusted")
    trusted = load_server_config(tmp_path / "ws", HELD, store=store)
    assert trusted.warnings == [] and trusted.config.model == "openai/x"
    assert trusted.config.providers["openai"].base_url == "http://198.51.100.1/v1"
    assert [s.name for s in trusted.config.mcp.servers] == ["x"]
    assert trusted.config.checks.test == "touch marker" and trusted.config.loop.prime is True


def test_init_options_may_repeat_the_persons_held_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user" / "cadenza"
    user.mkdir(parents=True)
    (user / "cadenza.toml").write_text(
        '[providers.openai]\nbase_url = "http://127.0.0.1:9/v1"\n[checks]\ntest = "pytest"\n'
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user"))
    monkeypatch.delenv("CADENZA_MODEL", raising=False)
    options = {
        "providers": {"openai": {"baseUrl": "http://127.0.0.1:9/v1"}},
        "checks": {"test": "pytest"},
    }
    loaded = load_server_config(None, options)
    assert loaded.warnings == []
    assert loaded.config.providers["openai"].base_url == "http://127.0.0.1:9/v1"
    assert loaded.config.checks.test == "pytest"


def test_init_options_may_repeat_what_the_person_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user" / "cadenza"
    user.mkdir(parents=True)
    (user / "cadenza.toml").write_text(
        "[permissions]\ngated = []\n[mcp]\ngated = false\n"
        '[[mcp.servers]]\nname = "s"\nurl = "http://h"\n'
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user"))
    monkeypatch.delenv("CADENZA_MODEL", raising=False)
    loaded = load_server_config(
        None,
        {
            "permissions": {"gated": []},
            "mcp": {"gated": False, "servers": [{"name": "s", "url": "http://h", "gated": False}]},
            "review": "auto",
        },
    )
    assert loaded.warnings == []
    assert loaded.config.permissions.gated == [] and not loaded.config.mcp.gated
    assert loaded.config.mcp.servers[0].gated is False


def test_init_options_override_the_same_key_from_the_user_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user" / "cadenza"
    user.mkdir(parents=True)
    (user / "cadenza.toml").write_text("maxTokens = 256\nmaxSteps = 9\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user"))
    monkeypatch.delenv("CADENZA_MODEL", raising=False)
    loaded = load_server_config(None, {"maxSteps": 4, "max_tokens": 200})
    assert loaded.warnings == []
    assert (loaded.config.max_steps, loaded.config.max_tokens) == (4, 200)
