"""The files the model knows whole, carried to the next turn while their text is unchanged."""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.events import FilesSeen
from cadenza.engine.seen import seen_files, still_seen
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.variants import LOCAL_LOOP
from cadenza.messages import AssistantReply
from cadenza.providers.base import ModelRequest
from cadenza.tools.base import text_digest
from tests.doubles import MemoryEditor, ScriptedProvider, reply

TEXT = LOCAL_LOOP.replace(edit="text", ending="empty", checks="off", candidates=0)


def test_a_file_changed_since_is_not_seen_any_more(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "a.py").write_text("a = 1\n")
    (root / "b.py").write_text("b = 1\n")
    editor = MemoryEditor()
    shown = {root / "a.py": text_digest("a = 1\n"), root / "b.py": text_digest("b = 1\n")}
    files = seen_files(root, {**shown, tmp_path.parent / "out.py": text_digest("")})
    assert sorted(files) == ["a.py", "b.py"]
    (root / "b.py").write_text("b = 2\n")
    assert set(still_seen(root, editor, files)) == {root / "a.py"}
    assert still_seen(root, editor, {"../out.py": files["a.py"]}) == {}


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
    assert set(session.rt.shown) == {root / "a.py"}


class ChangingProvider(ScriptedProvider):
    """Before its first reply, the person changes a file (as in the editor, mid-run)."""

    def __init__(self, script: list[AssistantReply], path: Path, text: str) -> None:
        super().__init__(script)
        self.change: tuple[Path, str] | None = (path, text)

    async def complete(self, request: ModelRequest, on_text: object = None) -> AssistantReply:
        if self.change is not None:
            path, text = self.change
            path.write_text(text)
            self.change = None
        return await super().complete(request)


def session_of(root: Path, provider: ScriptedProvider, editor: MemoryEditor, task: str) -> Session:
    return Session(
        session_id="s1",
        task=task,
        root=root,
        provider=provider,
        editor=editor,
        settings=SessionSettings(loop=TEXT, max_steps=4),
    )  # type: ignore[arg-type]


def files_seen(editor: MemoryEditor) -> dict[str, str]:
    [seen] = [e for e in editor.events if isinstance(e, FilesSeen)]
    return seen.files


async def test_a_file_changed_after_it_was_shown_is_recorded_as_shown(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "a.py").write_text("a = 1\n")
    (root / "b.py").write_text("b = 1\n")
    editor = MemoryEditor()
    provider = ChangingProvider(
        [reply(content="Looked."), reply(content="Again.")], root / "b.py", "b = 2\n"
    )
    session = session_of(root, provider, editor, "look at a.py and b.py")
    assert (await session.run()).stop_reason == "end_turn"
    # b.py was primed as "b = 1" and changed before the run ended: the model knows "b = 1".
    assert files_seen(editor) == {"a.py": text_digest("a = 1\n"), "b.py": text_digest("b = 1\n")}
    assert (await session.resume("and now?")).stop_reason == "end_turn"
    assert set(session.rt.shown) == {root / "a.py"}


FENCE = "```"
EDIT = (
    f"util.py\n{FENCE}python\n<<<<<<< SEARCH\n    return x\n=======\n    return 2 * x\n"
    f">>>>>>> REPLACE\n{FENCE}\n"
)


async def test_its_own_edit_of_a_file_it_knew_keeps_it_known(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "util.py").write_text("def scale(x):\n    return x\n")
    editor = MemoryEditor()
    provider = ScriptedProvider([reply(content=EDIT), reply(content="Doubled.")])
    session = session_of(root, provider, editor, "in util.py make scale double")
    assert (await session.run()).stop_reason == "end_turn"
    assert (root / "util.py").read_text() == "def scale(x):\n    return 2 * x\n"
    assert files_seen(editor) == {"util.py": text_digest("def scale(x):\n    return 2 * x\n")}


async def test_its_edit_of_a_file_the_person_changed_since_does_not_make_it_known(
    tmp_path: Path,
) -> None:
    root = tmp_path.resolve()
    (root / "util.py").write_text("def scale(x):\n    return x\n")
    editor = MemoryEditor()
    mine = "# the person's line\ndef scale(x):\n    return x\n"
    provider = ChangingProvider(
        [reply(content=EDIT), reply(content="Doubled.")], root / "util.py", mine
    )
    session = session_of(root, provider, editor, "in util.py make scale double")
    assert (await session.run()).stop_reason == "end_turn"
    assert "# the person's line\n" in (root / "util.py").read_text()
    assert files_seen(editor) == {"util.py": text_digest("def scale(x):\n    return x\n")}
