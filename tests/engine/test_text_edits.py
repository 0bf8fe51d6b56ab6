"""The text edit format through the loop: blocks read into calls, run by the same edit path."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from cadenza.engine.events import ContractRepaired, FileEdited, ToolCallFinished, ToolCallStarted
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.testsuite import PYTEST_ARGS
from cadenza.engine.variants import LOCAL_LOOP, LoopSettings
from cadenza.messages import AssistantReply, FinishReason
from cadenza.providers.base import ModelRequest
from cadenza.providers.text_format import map_messages
from tests.doubles import MemoryEditor, ScriptedProvider

FENCE = "```"
TEXT = LOCAL_LOOP.replace(edit="text", ending="empty")


def text(content: str, finish: FinishReason = "stop") -> AssistantReply:
    """A plain-text reply, as a provider returns one in the text format (no calls read yet)."""
    return AssistantReply(content=content, finish_reason=finish)


def sr(path: str, search: str, replace: str) -> str:
    return (
        f"{path}\n{FENCE}python\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n"
        f">>>>>>> REPLACE\n{FENCE}\n"
    )


def make(
    root: Path, script: list[AssistantReply], loop: LoopSettings = TEXT, task: str = "do it"
) -> tuple[Session, MemoryEditor, ScriptedProvider]:
    provider = ScriptedProvider(script)
    editor = MemoryEditor()
    session = Session(
        session_id="s1",
        task=task,
        root=root,
        provider=provider,
        editor=editor,
        settings=SessionSettings(loop=loop, max_steps=6),
    )  # type: ignore[arg-type]
    return session, editor, provider


def seen(request: ModelRequest) -> str:
    """The conversation as the model of the text format reads it."""
    return "\n".join(m["content"] for m in map_messages(request.messages, request.tools))


def finished(editor: MemoryEditor) -> list[ToolCallFinished]:
    return [e for e in editor.events if isinstance(e, ToolCallFinished)]


async def test_a_search_replace_block_edits_through_the_edit_path_and_ends_done(
    tmp_path: Path,
) -> None:
    (tmp_path / "util.py").write_text("def scale(x):\n    return x\n")
    session, editor, provider = make(
        tmp_path,
        [
            text("I double it.\n\n" + sr("util.py", "    return x", "    return 2 * x")),
            text("scale in util.py now returns twice its argument."),
        ],
        task="in util.py make scale return twice its argument",
    )
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert outcome.message == "scale in util.py now returns twice its argument."
    assert (tmp_path / "util.py").read_text() == "def scale(x):\n    return 2 * x\n"
    # The editor got the edit as edit_file makes it (versions, review, undo: the same path).
    [edit] = editor.edits
    assert edit.label == "edit_file util.py" and edit.kind == "change"
    started = [e for e in editor.events if isinstance(e, ToolCallStarted)]
    assert [e.name for e in started] == ["edit_file"]
    assert [e.path for e in editor.events if isinstance(e, FileEdited)] == ["util.py"]
    assert [r.reply_format for r in provider.requests] == ["text", "text"]
    # The history keeps the text as the model wrote it; the file was shown fenced.
    second = seen(provider.requests[1])
    assert "I double it.\n\nutil.py\n```python\n<<<<<<< SEARCH" in second
    assert "util.py\n```python\ndef scale(x):\n    return x\n```" in second
    assert "[block for util.py: result]\nedited util.py: 1 replacement(s)" in second
    assert "reply with one sentence saying what you did, and no block" in second


async def test_the_blocks_are_shown_on_a_file_of_the_workspace(tmp_path: Path) -> None:
    # A small model wrote its blocks to the instructions' placeholder path (path/to/...).
    (tmp_path / ".editorconfig").write_text("root = true\n")
    (tmp_path / "inventory.py").write_text("def calc_total():\n    return 1\n")
    (tmp_path / "report.py").write_text("from inventory import calc_total\n")
    session, _, provider = make(tmp_path, [text("Nothing to do.")], task="rename calc_total")
    await session.run()
    request = provider.requests[0]
    assert request.example_file == ("inventory.py", "python")
    system = map_messages(request.messages, request.tools, "empty", request.example_file)[0]
    assert "For example, for inventory.py:\n\ninventory.py\n```python\n" in system["content"]
    assert "path/to" not in system["content"]
    # The file the task names comes first.
    session, _, provider = make(tmp_path, [text("Nothing to do.")], task="fix report.py")
    await session.run()
    assert provider.requests[0].example_file == ("report.py", "python")
    # Code before its tests: the model writes to the example's path.
    (tmp_path / "test_report.py").write_text("from report import calc_total\n")
    task = "the tests in test_report.py fail"
    session, _, provider = make(tmp_path, [text("Nothing to do.")], task=task)
    await session.run()
    assert provider.requests[0].example_file == ("report.py", "python")
    # Only tests in play: a test is the example.
    (tmp_path / "test_alone.py").write_text("def test_one():\n    assert True\n")
    session, _, provider = make(tmp_path, [text("Nothing to do.")], task="fix test_alone.py")
    await session.run()
    assert provider.requests[0].example_file == ("test_alone.py", "python")


async def test_a_whole_file_block_creates_a_file(tmp_path: Path) -> None:
    session, editor, _ = make(
        tmp_path,
        [
            text(f"pkg/new.py\n{FENCE}python\ndef f():\n    return 1\n{FENCE}\n"),
            text("Created pkg/new.py."),
        ],
    )
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert (tmp_path / "pkg" / "new.py").read_text() == "def f():\n    return 1\n"
    assert [e.kind for e in editor.edits] == ["create"]


async def test_a_search_text_found_twice_writes_nothing_and_asks_for_more_lines(
    tmp_path: Path,
) -> None:
    original = "def a():\n    x = 1\n    return x\n\n\ndef b():\n    x = 1\n    return x\n"
    (tmp_path / "m.py").write_text(original)
    session, editor, provider = make(
        tmp_path,
        [
            text(sr("m.py", "    x = 1", "    x = 2")),
            text(sr("m.py", "def b():\n    x = 1", "def b():\n    x = 2")),
            text("b now sets x to 2."),
        ],
    )
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert (tmp_path / "m.py").read_text() == original.replace("b():\n    x = 1", "b():\n    x = 2")
    assert [f.status for f in finished(editor)] == ["failed", "completed"]
    told = seen(provider.requests[1])
    assert "[block for m.py: error]\nthe SEARCH text occurs 2 times in m.py" in told
    assert "include more surrounding lines to make it unique" in told
    assert "replace_all" not in told and "old_string" not in told


async def test_a_search_text_found_nowhere_quotes_the_file(tmp_path: Path) -> None:
    (tmp_path / "q.py").write_text("def greet():\n    return 'hi'\n")
    session, editor, provider = make(
        tmp_path,
        [text(sr("q.py", '    return "hi"\n    # done', '    return "hello"')), text("ok")],
        loop=TEXT.replace(checks="off"),
    )
    await session.run()
    assert editor.edits == []
    told = seen(provider.requests[1])
    assert "[block for q.py: error]" in told and "return 'hi'" in told.split("error]")[-1]


async def test_a_malformed_block_is_an_error_result_and_the_turn_goes_on(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    session, editor, provider = make(
        tmp_path,
        [
            text(f"a.py\n{FENCE}\n<<<<<<< SEARCH\nx = 1\n>>>>>>> REPLACE\n{FENCE}\n"),
            text(sr("a.py", "x = 1", "x = 2")),
            text("x is 2."),
        ],
    )
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert (tmp_path / "a.py").read_text() == "x = 2\n"
    assert finished(editor)[0].status == "failed"
    assert finished(editor)[0].observation == "invalid"
    assert "no ======= line" in seen(provider.requests[1])


async def test_a_path_outside_the_workspace_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    session, editor, provider = make(
        root,
        [text(f"../evil.py\n{FENCE}\nx = 1\n{FENCE}\n"), text("ok")],
        loop=TEXT.replace(checks="off"),
    )
    await session.run()
    assert not (tmp_path / "evil.py").exists() and editor.edits == []
    assert "[block for ../evil.py: error]" in seen(provider.requests[1])


async def test_a_crlf_file_keeps_its_line_endings(tmp_path: Path) -> None:
    (tmp_path / "w.py").write_bytes(b"a = 1\r\nb = 2\r\nc = 3\r\n")
    session, _, _ = make(tmp_path, [text(sr("w.py", "b = 2", "b = 20\nb2 = 21")), text("done")])
    await session.run()
    assert (tmp_path / "w.py").read_bytes() == b"a = 1\r\nb = 20\r\nb2 = 21\r\nc = 3\r\n"


async def test_several_files_in_one_reply_are_one_batch(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("A = 1\n")
    (tmp_path / "b.py").write_text("from a import A\n")
    reply = sr("a.py", "A = 1", "B = 1") + "\n" + sr("b.py", "from a import A", "from a import B")
    session, editor, provider = make(tmp_path, [text(reply), text("Renamed A to B.")])
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and len(provider.requests) == 2
    assert [e.label for e in editor.edits] == ["edit_file a.py", "edit_file b.py"]
    told = seen(provider.requests[1])
    assert told.count("[block for") == 2  # both results in one message, in call order


async def test_a_cut_block_writes_nothing_and_is_asked_for_again(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    session, editor, provider = make(
        tmp_path,
        [
            text(f"a.py\n{FENCE}python\nx = 2\ny = ", finish="length"),
            text(sr("a.py", "x = 1", "x = 2")),
            text("x is 2."),
        ],
    )
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert [e.recovered for e in editor.events if isinstance(e, ContractRepaired)] == [True]
    assert provider.requests[1].reply_format == "text"  # the repair asks for text too
    assert "SEARCH/REPLACE sections instead of the whole file" in seen(provider.requests[1])
    assert [e.label for e in editor.edits] == ["edit_file a.py"]


async def test_a_tool_block_runs_the_tool(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    session, _, provider = make(
        tmp_path,
        [
            text(
                f'{FENCE}tool\n{{"name": "read_file", "arguments": {{"path": "notes.txt"}}}}\n'
                f"{FENCE}"
            ),
            text("It says to remember the milk."),
        ],
        loop=TEXT.replace(checks="off"),
    )
    outcome = await session.run()
    assert outcome.message == "It says to remember the milk."
    assert "[read_file result]\nnotes.txt\n```txt\nremember the milk\n```" in seen(
        provider.requests[1]
    )


async def test_a_claim_without_a_change_is_refused_in_block_terms(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text("def f():\n    raise NotImplementedError\n")
    session, _, provider = make(
        tmp_path,
        [
            text("Implemented f in s.py."),
            text(sr("s.py", "    raise NotImplementedError", "    return 1")),
            text("f returns 1."),
        ],
        task="implement f in s.py",
    )
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    told = seen(provider.requests[1])
    assert "make it now with a SEARCH/REPLACE block" in told and "edit_file" not in told


async def test_a_file_block_replaces_only_a_file_whose_text_was_shown(tmp_path: Path) -> None:
    """Read before overwrite: a whole-file block of a file never shown is a guess.

    The refusal shows the file (fenced, its words not rewritten), so the next block can be
    made from it.
    """
    (tmp_path / "inventory.py").write_text("def calc_total(items):  # old_string\n    return 1\n")
    guess = f"inventory.py\n{FENCE}python\ndef compute_total(items):\n    return 0\n{FENCE}\n"
    right = f"inventory.py\n{FENCE}python\ndef compute_total(items):\n    return 1\n{FENCE}"
    session, editor, provider = make(
        tmp_path,
        [text(guess), text(right), text("Renamed calc_total to compute_total.")],
        task="rename the total function to compute_total",  # names no code the file uses
    )
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert (tmp_path / "inventory.py").read_text() == "def compute_total(items):\n    return 1\n"
    assert [f.status for f in finished(editor)] == ["failed", "completed"]
    told = seen(provider.requests[1])
    assert "[block for inventory.py: error]\ninventory.py exists, and this conversation" in told
    assert "a file block replaces the whole file, so nothing was written" in told
    assert "inventory.py\n```python\ndef calc_total(items):  # old_string\n" in told
    assert len(editor.edits) == 1


async def test_a_whole_read_counts_as_shown(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    read = f'{FENCE}tool\n{{"name": "read_file", "arguments": {{"path": "a.py"}}}}\n{FENCE}'
    session, editor, _ = make(
        tmp_path,
        [text(read), text(f"a.py\n{FENCE}\nx = 2\n{FENCE}"), text("x is 2.")],
        task="set x to 2",
    )
    await session.run()
    assert [f.status for f in finished(editor)] == ["completed", "completed"]
    assert (tmp_path / "a.py").read_text() == "x = 2\n"


async def test_a_primed_file_counts_as_shown(tmp_path: Path) -> None:
    (tmp_path / "cfg.py").write_text("DEBUG = True\n")
    session, _, _ = make(
        tmp_path,
        [text(f"cfg.py\n{FENCE}python\nDEBUG = False\n{FENCE}"), text("DEBUG is off.")],
        task="turn DEBUG off in cfg.py",
    )
    await session.run()
    assert (tmp_path / "cfg.py").read_text() == "DEBUG = False\n"


async def test_the_person_reads_the_answer_without_blocks_or_result_heads(tmp_path: Path) -> None:
    """The final answer a small model wrote after its history's heads is shown without them."""
    (tmp_path / "util.py").write_text("def scale(x):\n    return x\n")
    session, _, _ = make(
        tmp_path,
        [
            text(sr("util.py", "    return x", "    return 2 * x")),
            text("[block for util.py: result]\nscale now returns twice its argument."),
        ],
        task="in util.py make scale return twice its argument",
    )
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert outcome.message == "scale now returns twice its argument."
    # The history keeps what the model wrote: it reads its own replies.
    assert session.messages[-1].content.startswith("[block for util.py: result]")


async def test_a_change_the_tests_accept_ends_with_the_words_not_the_block(
    tmp_path: Path,
) -> None:
    """The reply of edits after which the tests pass is the answer: its block is summarised."""
    (tmp_path / "util.py").write_text("def scale(x):\n    return x\n")
    (tmp_path / "test_util.py").write_text(
        "from util import scale\n\n\ndef test_scale():\n    assert scale(2) == 4\n"
    )
    change = "I double it.\n\n" + sr("util.py", "    return x", "    return 2 * x")
    provider = ScriptedProvider([text(change)])
    session = Session(
        session_id="s1",
        task="the test in test_util.py fails: fix util.py",
        root=tmp_path,
        provider=provider,
        editor=MemoryEditor(),
        settings=SessionSettings(
            loop=TEXT.replace(candidates=0),
            max_steps=4,
            test_command=f"{sys.executable} -m pytest {PYTEST_ARGS}",
        ),
    )  # type: ignore[arg-type]
    with anyio.fail_after(120):
        outcome = await session.run()
    assert outcome.stop_reason == "end_turn", outcome
    assert outcome.message == "I double it.\n\n(edited util.py)\n\nThe tests pass: 1 passed."
