"""``cadenza complete`` against hostile input: a bounded read of the file, a clean stdout."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import pytest

import cadenza.client.complete as complete_module
from cadenza.client.complete import Completion, PositionError, complete_main, read_target
from cadenza.client.safe_text import printable


def args_for(path: Path) -> argparse.Namespace:
    return argparse.Namespace(path=str(path), line=1, column=1, workspace=None)


def test_a_file_over_the_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.js"
    with big.open("wb") as out:
        out.truncate(200_000_000)  # sparse: 200 MB that cost nothing to make
    assert complete_main(args_for(big)) == 2
    printed = capsys.readouterr()
    assert printed.out == ""
    assert "file too large (200 MB; the limit is 16 MB)" in printed.err


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: p.mkdir(), "is not a regular file (it is a directory)"),
        (lambda p: os.mkfifo(p), "is not a regular file (it is a FIFO)"),
        (lambda p: None, "file not found"),
        (lambda p: p.symlink_to(p), "symbolic link loop"),
    ],
)
def test_what_is_not_a_readable_file_is_said(tmp_path: Path, make: Any, said: str) -> None:
    path = tmp_path / "target"
    make(path)
    with pytest.raises(PositionError) as refused:
        read_target(str(path), 1, 1)
    assert said in str(refused.value)


def test_the_completion_is_printed_without_control_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.py").write_text("x = \n", encoding="utf-8")

    async def fake(target: Any, options: Any) -> Completion:
        return Completion(text="\x1b]0;owned\x07f(1)\x1b[2J\x9b\n\tg()\r")

    monkeypatch.setattr(complete_module, "complete", fake)
    assert complete_main(args_for(tmp_path / "a.py")) == 0
    assert capsys.readouterr().out == "]0;ownedf(1)[2J\n\tg()\n"


def test_printable_keeps_new_lines_and_tabs_only() -> None:
    controls = "".join(map(chr, [*range(0x20), *range(0x7F, 0xA0)]))
    assert printable(f"a{controls}b\u202ec") == "a\t\nbc"


@pytest.mark.parametrize(("text", "said"), [("x = 1", "it has 1 line)"), ("a\nb\n", "3 lines")])
def test_a_line_outside_the_file_says_how_many_it_has(tmp_path: Path, text: str, said: str) -> None:
    (tmp_path / "a.py").write_text(text, encoding="utf-8")
    with pytest.raises(PositionError) as refused:
        read_target(str(tmp_path / "a.py"), 9, 1)
    assert said in str(refused.value) and "1 lines" not in str(refused.value)
