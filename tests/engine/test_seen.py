"""The files the model knows whole, carried to the next turn while their text is unchanged."""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.events import FilesSeen
from cadenza.engine.seen import seen_files, still_seen
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.variants import LOCAL_LOOP
from tests.doubles import MemoryEditor, ScriptedProvider, reply

TEXT = LOCAL_LOOP.replace(edit="text", ending="empty", checks="off", candidates=0)


def test_a_file_changed_since_is_not_seen_any_more(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "a.py").write_text("a = 1\n")
    (root / "b.py").write_text("b = 1\n")
    editor = MemoryEditor()
    files = seen_files(root, editor, {root / "a.py", root / "b.py", root / "gone.py"})
    assert sorted(files) == ["a.py", "b.py"]
    (root / "b.py").write_text("b = 2\n")
    assert still_seen(root, editor, files) == {root / "a.py"}
    assert still_seen(root, editor, {"../out.py": files["a.py"]}) == set()


async def test_a_resumed_turn_keeps_the_files_shown_and_unchanged(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "a.py").write_text("a = 1\n")
    (root / "b.py").write_text("b = 1\n")
    editor = MemoryEditor()
    provider = ScriptedProvider([reply(content="Looked."), reply(content="Again.")])
    session = Session(
        session_id="s1",
        task="look at a.py and b.py",
        root=root,
        provider=provider,
        editor=editor,
        settings=SessionSettings(loop=TEXT, max_steps=4),
    )  # type: ignore[arg-type]
    assert (await session.run()).stop_reason == "end_turn"
    [seen] = [e for e in editor.events if isinstance(e, FilesSeen)]
    assert sorted(seen.files) == ["a.py", "b.py"]  # both primed whole
    (root / "b.py").write_text("b = 2\n")  # the person changes one between turns
    assert (await session.resume("and now?")).stop_reason == "end_turn"
    assert session.rt.shown == {root / "a.py"}
