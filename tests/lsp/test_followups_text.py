"""The text a follow-up prompt reaches the model as (``lsp.followups.prompt_text``)."""

from __future__ import annotations

from pathlib import Path

from pygls.workspace import Workspace

from cadenza.lsp.followups import MAX_CONTEXT_CHARS, MAX_FILE_CHARS, prompt_text
from cadenza.schema.commands import PromptContext, PromptSessionArgs
from tests.lsp.harness import file_uri


def args(**context: object) -> tuple[str, PromptContext | None]:
    parsed = PromptSessionArgs.model_validate(
        {"sessionId": "s", "text": "go", "context": context or None}
    )
    return parsed.text, parsed.context


def test_no_context_is_the_text_alone(tmp_path: Path) -> None:
    assert prompt_text(Workspace(file_uri(tmp_path)), tmp_path, *args()) == "go"


def test_files_are_bounded_fenced_and_kept_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("y" * (MAX_FILE_CHARS + 10))
    (tmp_path / "fence.md").write_text("```\ncode\n```\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    files = [file_uri(p) for p in (tmp_path / "big.txt", tmp_path / "fence.md", outside)]
    sent = prompt_text(Workspace(file_uri(tmp_path)), tmp_path, *args(files=files))
    assert f"File big.txt (its first {MAX_FILE_CHARS} characters; read_file for the rest)" in sent
    assert "y" * (MAX_FILE_CHARS + 1) not in sent
    assert "File fence.md:\n````\n```\ncode\n```\n````" in sent
    assert "not read (not in the workspace)" in sent


def test_the_whole_context_is_bounded(tmp_path: Path) -> None:
    files = []
    for index in range(5):
        (tmp_path / f"f{index}.txt").write_text("z" * MAX_FILE_CHARS)
        files.append(file_uri(tmp_path / f"f{index}.txt"))
    sent = prompt_text(Workspace(file_uri(tmp_path)), tmp_path, *args(files=files))
    assert len(sent) < MAX_CONTEXT_CHARS + 200
    assert sent.endswith("[the context was cut here: it is too long]")


def test_a_symbol_is_its_whole_lines(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("import os\n\ndef total(xs):\n    return sum(xs)\n\nx = 1\n")
    where = {"start": {"line": 2, "character": 4}, "end": {"line": 3, "character": 18}}
    symbol = {"name": "total", "uri": file_uri(tmp_path / "app.py"), "range": where}
    sent = prompt_text(Workspace(file_uri(tmp_path)), tmp_path, *args(symbols=[symbol]))
    assert sent == (
        "go\n\nContext from the editor:\n\n"
        "Symbol total in app.py, lines 3-4:\n```\ndef total(xs):\n    return sum(xs)\n```"
    )
