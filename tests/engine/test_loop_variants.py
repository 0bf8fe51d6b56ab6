"""Loop variants: ending by ``complete``, priming, repeats, repair, edit styles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cadenza.config import CadenzaConfig, ConfigError, load_config
from cadenza.engine.events import ContractRepaired, ModelReplied, ToolCallFinished
from cadenza.engine.prime import code_names, named_files, priming_message, task_files
from cadenza.engine.session import CUT_ARGUMENTS, Session, SessionSettings
from cadenza.engine.variants import API_LOOP, LOCAL_LOOP, LoopSettings
from cadenza.host.settings import loop_settings, session_settings
from cadenza.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from cadenza.providers.envelope import envelope_instructions, envelope_schema
from cadenza.tools.base import ToolContext
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.registry import default_tools
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply

TOOL_LOOP = LOCAL_LOOP.replace(edit="old_string", ending="complete")
"""The small-model profile speaking tool calls, as these scripted models do."""


def make_session(
    tmp_path: Path, provider: ScriptedProvider, loop: LoopSettings, task: str = "do it"
) -> tuple[Session, MemoryEditor]:
    editor = MemoryEditor()
    session = Session(
        session_id="s1",
        task=task,
        root=tmp_path,
        provider=provider,
        editor=editor,
        settings=SessionSettings(loop=loop, max_steps=10),
    )  # type: ignore[arg-type]
    return session, editor


def events(editor: MemoryEditor, kind: type) -> list:  # type: ignore[type-arg]
    return [e for e in editor.events if isinstance(e, kind)]


def test_loop_settings_by_provider_and_config() -> None:
    config = CadenzaConfig()
    assert loop_settings(config, "local/qwen2.5-coder-1.5b") == LOCAL_LOOP
    assert loop_settings(config, "openai/gpt-4.1") == API_LOOP
    tuned = config.merged({"loop": {"ending": "empty", "edit": "write_file"}}, "test")
    local = loop_settings(tuned, "local/x")
    assert local.ending == "empty" and local.edit == "write_file"
    assert local.prime == TOOL_LOOP.prime  # unset keys keep the provider's default
    assert loop_settings(tuned, "anthropic/claude").edit == "write_file"
    # The engine knows the local completion bound, so the cut repair can double it: sized
    # per step from the task under reply_budget (None here), else the provider's default.
    assert session_settings(config, "local/x").max_tokens is None
    flat = config.merged({"loop": {"replyBudget": False}}, "t")
    assert session_settings(flat, "local/x").max_tokens == 1024
    assert session_settings(config, "openai/x").max_tokens is None
    assert session_settings(config.merged({"maxTokens": 300}, "t"), "local/x").max_tokens == 300
    # Local models get a time budget unless the configuration sets one (0: none).
    assert session_settings(config, "local/x").time_budget_s == 600
    assert session_settings(config, "openai/x").time_budget_s is None
    assert session_settings(config.merged({"timeBudgetS": 0}, "t"), "local/x").time_budget_s is None
    assert session_settings(config.merged({"timeBudgetS": 90}, "t"), "openai/x").time_budget_s == 90


def test_offers_core_tools_and_one_edit_style() -> None:
    local = TOOL_LOOP
    assert local.offers("read_file") and local.offers("edit_file")
    assert not local.offers("write_file") and local.offers("run_command")
    assert not local.offers("replace_lines")
    lines = local.replace(edit="line_range")
    assert lines.offers("replace_lines") and not lines.offers("edit_file")
    assert API_LOOP.offers("run_command") and API_LOOP.offers("write_file")
    assert not API_LOOP.offers("replace_lines")  # it needs numbered reads


async def test_complete_ending_requires_a_call_every_step(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    provider = ScriptedProvider(
        [
            reply(call("read_file", path="a.py")),
            reply(call("complete", status="done", summary="read it")),
        ]
    )
    session, _ = make_session(tmp_path, provider, TOOL_LOOP.replace(prime=False, checks="rename"))
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and outcome.message == "read it"
    assert [r.tool_choice for r in provider.requests] == ["required", "required"]
    assert {r.ending for r in provider.requests} == {"complete"}
    names = [t.name for t in provider.requests[0].tools]
    assert names == [
        *("read_file", "list_files", "search", "edit_file", "create_file", "run_command"),
        *("transition", "complete"),
    ]
    system = session.messages[0].content
    assert "call\n   complete" in system and "empty tool_calls" not in system


def test_envelope_schema_and_instructions_follow_the_ending() -> None:
    from cadenza.tools.registry import default_tools

    specs = [s for s in default_tools().specs() if s.name in ("read_file", "edit_file")]
    schema = envelope_schema(specs, require_call=True)
    assert schema["properties"]["tool_calls"]["minItems"] == 1
    complete = envelope_instructions(specs, "complete")
    assert '"name": "complete"' in complete and '"tool_calls": []' not in complete
    empty = envelope_instructions(specs, "empty")
    assert '"tool_calls": []' in empty
    writes = [s for s in default_tools().specs() if s.name == "write_file"]
    assert '"name": "write_file"' in envelope_instructions(writes, "complete")


async def test_repair_asks_once_more_and_keeps_the_cut_reply_out(tmp_path: Path) -> None:
    cut = ToolCall(id="c0", name="edit_file", arguments='{"path": "a.py", "old_str')
    provider = ScriptedProvider(
        [
            reply(cut, finish="length"),
            reply(call("complete", status="done", summary="ok")),
        ]
    )
    session, editor = make_session(
        tmp_path, provider, TOOL_LOOP.replace(prime=False, checks="rename")
    )
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    repairs = events(editor, ContractRepaired)
    assert [(r.reason, r.recovered) for r in repairs] == [("cut", True)]
    retry = provider.requests[1]
    assert isinstance(retry.messages[-1], UserMessage) and retry.messages[-1].tag == "repair"
    # The retry changes what produced the runaway, not only the token bound.
    first = provider.requests[0]
    assert first.temperature is None and first.frequency_penalty is None
    assert retry.temperature == 0.5 and retry.frequency_penalty == 0.3
    assert not any(
        isinstance(m, AssistantMessage) and m.tool_calls and m.tool_calls[0].id == "c0"
        for m in session.messages
    )
    replies = events(editor, ModelReplied)
    assert [r.finish_reason for r in replies] == ["length", "tool_calls"]


async def test_a_second_cut_goes_on_as_a_miss(tmp_path: Path) -> None:
    cut = ToolCall(id="c0", name="edit_file", arguments='{"path": "a')
    provider = ScriptedProvider(
        [
            reply(cut, finish="length"),
            reply(cut, finish="length"),
            reply(call("complete", status="done", summary="ok")),
        ]
    )
    session, editor = make_session(tmp_path, provider, TOOL_LOOP.replace(prime=False))
    await session.run()
    assert [r.recovered for r in events(editor, ContractRepaired)] == [False]
    finished = [e for e in events(editor, ToolCallFinished) if e.observation == "cut"]
    assert finished and finished[0].content == CUT_ARGUMENTS


async def test_stuck_limit_stops_with_a_question(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    same = call("read_file", path="a.py")
    provider = ScriptedProvider([reply(same)] * 5)
    session, editor = make_session(tmp_path, provider, TOOL_LOOP.replace(prime=False))
    outcome = await session.run()
    assert outcome.stop_reason == "needs_user_input"
    assert "read_file" in (outcome.missing_info or "") and outcome.why_no_default
    assert outcome.steps == 4  # the first call and three noted repeats
    notes = [e for e in events(editor, ToolCallFinished) if e.observation == "repeat"]
    assert len(notes) == 3
    assert "edit_file" in notes[0].content and "call complete" in notes[0].content


async def test_repeats_run_when_told(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    same = call("read_file", path="a.py")
    provider = ScriptedProvider(
        [reply(same), reply(same), reply(call("complete", status="done", summary="ok"))]
    )
    loop = TOOL_LOOP.replace(prime=False, repeats="run", stuck_limit=0)
    session, _ = make_session(tmp_path, provider, loop)
    await session.run()
    results = [m.content for m in session.messages if isinstance(m, ToolMessage)]
    assert results[0] == results[1] and "x = 1" in results[1]


def test_code_names_and_the_files_that_use_them(tmp_path: Path) -> None:
    task = "Rename the function calc_total to compute_total everywhere (and `Item`)."
    assert code_names(task) == ["calc_total", "compute_total", "Item"]
    assert code_names("Fix parseArgs in the module and make the tests pass") == ["parseArgs"]
    assert code_names("make the total right") == []
    (tmp_path / "inventory.py").write_text("def calc_total(items):\n    return 0\n")
    (tmp_path / "report.py").write_text("from inventory import calc_total\n")
    (tmp_path / "other.py").write_text("calc_totals = 1  # another name\n")
    (tmp_path / "big.py").write_text("calc_total\n" + "#" * 3_000_000)
    assert task_files(tmp_path, task) == []  # only under the text edit format
    assert task_files(tmp_path, task, by_code_name=True) == ["inventory.py", "report.py"]
    assert task_files(tmp_path, "in report.py rename calc_total", by_code_name=True) == [
        "report.py",
        "inventory.py",
    ]


def test_the_modules_a_named_file_imports_are_its_subject(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_prices.py").write_text(
        "import os\nfrom prices import apply_discount\nfrom . import helpers\n"
    )
    (tmp_path / "tests" / "helpers.py").write_text("")
    (tmp_path / "prices.py").write_text("def apply_discount(p, d):\n    return p\n")
    (tmp_path / "unrelated.py").write_text("")
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "view.test.js").write_text(
        "const { chunk } = require('./chunk');\nimport x from '../lib/nowhere';\n"
    )
    (tmp_path / "web" / "chunk.js").write_text("module.exports = {}\n")
    (tmp_path / "broken.py").write_text("from prices import (\n")
    task = "The tests in tests/test_prices.py fail; fix the code."
    assert task_files(tmp_path, task) == ["tests/test_prices.py"]  # text edit format only
    assert task_files(tmp_path, task, by_code_name=True) == [
        "tests/test_prices.py",
        "prices.py",
        "tests/helpers.py",
    ]
    assert task_files(tmp_path, "fix web/view.test.js", by_code_name=True) == [
        "web/view.test.js",
        "web/chunk.js",
    ]
    assert task_files(tmp_path, "fix broken.py", by_code_name=True) == ["broken.py"]


def test_named_files_are_whole_words() -> None:
    names = ["util.py", "myutil.py", "pkg/main.py", "README.md"]
    assert named_files("Fix util.py and pkg/main.py.", names) == ["util.py", "pkg/main.py"]
    assert named_files("rename in main.py", names) == ["pkg/main.py"]
    assert named_files("nothing named", names) == []


def test_priming_message_reads_the_named_and_open_files(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    (tmp_path / "b.py").write_text("z = 3\n")
    editor = MemoryEditor()
    paths = task_files(tmp_path, "change a.py", tmp_path / "b.py")
    primed = priming_message(tmp_path, paths, editor)
    assert primed is not None and primed.tag == "files"
    assert primed.content.index("b.py (lines") < primed.content.index("a.py (lines")
    assert "x = 1\ny = 2" in primed.content
    numbered = priming_message(tmp_path, task_files(tmp_path, "change a.py"), editor, numbered=True)
    assert numbered is not None and "1| x = 1" in numbered.content
    assert task_files(tmp_path, "no file", Path("/etc/passwd")) == []


async def test_primed_session_and_edit_echo(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("A = 1\nB = 2\nC = 3\n")
    provider = ScriptedProvider(
        [
            reply(call("edit_file", path="a.py", old_string="B = 2", new_string="B = 5")),
            reply(call("complete", status="done", summary="ok")),
        ]
    )
    session, _ = make_session(tmp_path, provider, TOOL_LOOP, task="Set B in a.py to 5.")
    await session.run()
    first = provider.requests[0].messages
    assert isinstance(first[3], UserMessage) and "B = 2" in first[3].content
    result = next(m for m in session.messages if isinstance(m, ToolMessage)).content
    assert result.startswith("edited a.py: 1 replacement(s)")
    assert "a.py now reads (around the change, 3 lines in all):\nA = 1\nB = 5\nC = 3" in result
    assert "call complete" in result


async def test_redone_edit_says_it_is_already_made(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("B = 2\n")
    edit = call("edit_file", path="a.py", old_string="B = 2", new_string="B = 5")
    provider = ScriptedProvider(
        [reply(edit), reply(edit), reply(call("complete", status="done", summary="ok"))]
    )
    session, _ = make_session(tmp_path, provider, TOOL_LOOP.replace(prime=False))
    await session.run()
    second = [m for m in session.messages if isinstance(m, ToolMessage)][1]
    assert second.is_error and "already made" in second.content


def test_builtin_tools_are_the_registry_s() -> None:
    from cadenza.engine.variants import BUILTIN_TOOLS
    from cadenza.tools.registry import default_tools

    assert frozenset(default_tools().names) == BUILTIN_TOOLS


def test_movement_tool_lists_keep_an_edit_tool_and_what_they_name() -> None:
    names = ["read_file", "search", "edit_file", "write_file", "replace_lines", "ask_user"]
    lines = TOOL_LOOP.replace(edit="line_range")
    listed = ("read_file", "edit_file", "write_file", "ask_user")
    assert lines.movement_tools(listed, names) == ["read_file", "replace_lines", "ask_user"]
    assert lines.movement_tools(("read_file", "search"), names) == ["read_file", "search"]
    assert TOOL_LOOP.movement_tools(None, [*names, "mcp__x__y"]) == [
        "read_file",
        "search",
        "edit_file",
        "mcp__x__y",  # not Cadenza's own: always offered
    ]


def test_user_and_init_loop_tables_merge_key_by_key(tmp_path: Path) -> None:
    config = CadenzaConfig().merged({"loop": {"stuck_limit": 7, "prime": False}}, "user")
    merged = config.merged({"loop": {"edit": "line_range"}}, "init")
    assert (merged.loop.stuck_limit, merged.loop.prime, merged.loop.edit) == (
        7,
        False,
        "line_range",
    )
    assert config.merged({"loop": {"stuckLimit": 2}}, "init").loop.stuck_limit == 2


def test_a_workspace_cannot_change_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "cadenza.toml").write_text("[loop]\nprime = true\n")
    warnings: list[str] = []
    assert load_config(tmp_path, warnings).loop.prime is None
    assert warnings and "loop" in warnings[0]
    with pytest.raises(ConfigError):
        CadenzaConfig().merged({"loop": {"prime": "yes"}}, "init")  # strict booleans


def test_named_files_edge_cases() -> None:
    names = ["a.py", "a/__init__.py", "b/__init__.py", "pkg/only.py"]
    assert named_files("fix a.py.bak", names) == []
    assert named_files("fix __init__.py", names) == []  # two files of that name
    assert named_files("fix only.py.", names) == ["pkg/only.py"]


def test_priming_finds_files_past_the_overview_and_skips_big_ones(tmp_path: Path) -> None:
    for i in range(60):
        (tmp_path / f"f{i:02}.py").write_text("x\n")
    (tmp_path / "zeta.py").write_text("z = 1\n")
    (tmp_path / "big.py").write_text("y = 2\n" * 5000)
    paths = task_files(tmp_path, "fix big.py and zeta.py")
    primed = priming_message(tmp_path, paths, MemoryEditor())
    assert primed is not None and "zeta.py (lines 1-1 of 1)" in primed.content


async def test_stuck_limit_counts_repeated_invalid_calls(tmp_path: Path) -> None:
    bad = ToolCall(id="b", name="read_file", arguments='{"path": 3}')
    provider = ScriptedProvider([reply(bad)] * 6)
    session, editor = make_session(tmp_path, provider, TOOL_LOOP.replace(prime=False))
    outcome = await session.run()
    assert outcome.stop_reason == "needs_user_input" and outcome.steps == 4
    assert {e.observation for e in events(editor, ToolCallFinished)} == {"invalid"}


def test_edit_echo_shows_each_change() -> None:
    from cadenza.engine.echo import edit_echo
    from cadenza.tools.host import FileEdit

    old = "".join(f"l{i}\n" for i in range(1, 101))
    new = old.replace("l1\n", "L1\n").replace("l100\n", "L100\n")
    echo = edit_echo(
        FileEdit(path=Path("/w/a.py"), old_text=old, new_text=new, version=None, label="e"),
        "a.py",
        "complete",
        numbered=True,
    )
    assert "1| L1\n2| l2\n3| l3\n...\n98| l98\n99| l99\n100| L100\n" in echo
    assert echo.endswith(
        'call complete with status "done" and a one-sentence summary; '
        "otherwise make the next change."
    )
    # One result that changed several files (a rename) says what to do next once, at its end.
    inner = edit_echo(
        FileEdit(path=Path("/w/a.py"), old_text=old, new_text=new, version=None, label="e"),
        "a.py",
        "complete",
        closing=False,
    )
    assert inner.endswith("L100") and "If the task is done" not in inner


async def test_done_gate_refuses_done_right_after_a_failure_once(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    bad = call("edit_file", path="a.py", old_string="y = 1", new_string="y = 2")
    done = call("complete", status="done", summary="changed y")
    provider = ScriptedProvider([reply(bad), reply(done), reply(done)])
    session, _ = make_session(tmp_path, provider, TOOL_LOOP.replace(prime=False, checks="rename"))
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and outcome.steps == 3  # the second one counts
    refused = [m for m in session.messages if isinstance(m, ToolMessage)][1]
    assert refused.is_error and refused.content.startswith("not accepted yet")
    assert "old_string was not found" in refused.content


async def test_done_gate_lets_done_after_a_success_and_failed_through(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    ok = call("edit_file", path="a.py", old_string="x = 1", new_string="x = 2")
    provider = ScriptedProvider([reply(ok), reply(call("complete", status="done", summary="s"))])
    session, _ = make_session(tmp_path, provider, TOOL_LOOP.replace(prime=False))
    assert (await session.run()).steps == 2
    bad = call("read_file", path="missing.py")
    give_up = call("complete", status="failed", summary="no such file")
    provider = ScriptedProvider([reply(bad), reply(give_up)])
    session, _ = make_session(tmp_path, provider, TOOL_LOOP.replace(prime=False))
    assert (await session.run()).stop_reason == "failed"


def test_renamed_recognizes_a_rename_shaped_change() -> None:
    from cadenza.engine.echo import renamed

    assert renamed("def calc_area(w):\n", "def compute_area(w):\n") == ("calc_area", "compute_area")
    assert renamed("let cnt = 0;\nf(cnt)\n", "let count = 0;\nf(count)\n") == ("cnt", "count")
    assert renamed("x = a + b\n", "x = a * b\n") is None
    assert renamed("print('x')\n", "logger.info('x')\n") is None
    assert renamed("a = 1\n", "a = 2\n") is None


async def test_echo_lists_what_a_rename_left_behind(tmp_path: Path) -> None:
    (tmp_path / "geometry.py").write_text("def calc_area(w, h):\n    return w * h\n")
    (tmp_path / "main.py").write_text("from geometry import calc_area\n\nprint(calc_area(1, 2))\n")
    edit = call(
        "edit_file",
        path="geometry.py",
        old_string="def calc_area(w, h):",
        new_string="def compute_area(w, h):",
    )
    provider = ScriptedProvider([reply(edit), reply(call("complete", status="done", summary="s"))])
    task = "Rename calc_area to compute_area in geometry.py and main.py."
    session, _ = make_session(tmp_path, provider, TOOL_LOOP, task=task)
    await session.run()
    result = next(m for m in session.messages if isinstance(m, ToolMessage)).content
    assert result.endswith(
        "Not done yet if this edit is part of renaming calc_area: calc_area is still used in: "
        "main.py lines 1, 3. Change those next."
    )
    assert "call complete" not in result


async def test_done_gate_judges_the_same_reply_and_settled_errors(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    loop = TOOL_LOOP.replace(prime=False, checks="rename")
    done = call("complete", status="done", summary="s")
    bad = call("edit_file", path="a.py", old_string="nope", new_string="y")
    ok = call("edit_file", path="a.py", old_string="x = 1", new_string="x = 2")
    # A failed edit and done in one reply: refused (and a second done in it too).
    done2 = call("complete", "c2", status="done", summary="s")
    provider = ScriptedProvider([reply(bad, done, done2), reply(done)])
    session, _ = make_session(tmp_path, provider, loop)
    assert (await session.run()).steps == 2
    # A failure fixed in the same reply as done: accepted at once.
    (tmp_path / "a.py").write_text("x = 1\n")
    provider = ScriptedProvider([reply(bad), reply(ok, done)])
    session, _ = make_session(tmp_path, provider, loop)
    assert (await session.run()).steps == 2
    # A redone edit ("already made") is no failure.
    (tmp_path / "a.py").write_text("x = 1\n")
    provider = ScriptedProvider([reply(ok), reply(ok), reply(done)])
    session, _ = make_session(tmp_path, provider, loop)
    assert (await session.run()).steps == 3


def test_keywords_are_no_renames() -> None:
    from cadenza.engine.echo import renamed

    assert renamed("if x:\n    pass\n", "while x:\n    pass\n") is None
    assert renamed("f(self)\n", "f(this)\n") is None


def test_guard_edge_cases() -> None:
    from cadenza.tools.syntax import breaks_syntax

    deep = "x = " + "+".join(["1"] * 100_000) + "\n"
    assert breaks_syntax(Path("a.py"), "x = 1\n", deep) is None  # no crash, no verdict
    zsh = "#!/bin/zsh\necho hi\n"
    assert breaks_syntax(Path("a.sh"), zsh, zsh + "for f (*.txt) echo $f\n") is None
    jsx = "const a = 1;\n"
    assert breaks_syntax(Path("a.js"), jsx, jsx + "const b = <div/>;\n") is None


async def test_the_same_refused_change_made_again_is_written(tmp_path: Path) -> None:
    (tmp_path / "cli.py").write_text("x = 1\n")
    args = {"path": "cli.py", "old_string": "x = 1", "new_string": "x = ("}
    prepared = prepare(
        ToolCall(id="1", name="edit_file", arguments=json.dumps(args)), default_tools()
    )
    assert isinstance(prepared, PreparedCall)
    ctx = ToolContext(root=tmp_path, host=MemoryEditor(), syntax_guard=True)
    assert (await run(prepared, ctx)).is_error
    assert not (await run(prepared, ctx)).is_error
    assert (tmp_path / "cli.py").read_text() == "x = (\n"


def test_the_benchmark_s_local_variant_is_local_loop() -> None:
    from benchmarks.agent_tasks.run import BASELINE, LOCAL

    config = CadenzaConfig()
    assert loop_settings(config.merged({"loop": LOCAL}, "t"), "openai/x") == LOCAL_LOOP
    baseline = loop_settings(config.merged({"loop": BASELINE}, "t"), "local/x")
    assert baseline.checks == "off" and not baseline.rules


def test_a_gate_quotes_a_long_error_up_to_a_sentence_end() -> None:
    from cadenza.engine.gate import refusal

    note = "You already called edit_file at step 1. " + "Do not call it again. " * 20
    text = refusal("edit_file", note)
    quoted = text.split("failed: ", 1)[1].split(" So that change")[0]
    assert quoted.endswith("again.") and len(quoted) <= 300
    assert refusal("edit_file", "x" * 400).count("x") == 300
