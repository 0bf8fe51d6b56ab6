"""``file_edited``: whole texts for a small file, hunks for a large one, on both faces and on disk.

A change of a large file is published and recorded as its hunks: the update and the
transcript record are the size of the change, and the hunks rebuild the new text from the old
one. Records written before hunks existed (whole texts only) still load and replay the same.
"""

from __future__ import annotations

import json
from pathlib import Path

from cadenza.acp.updates import UpdateMapper
from cadenza.engine.events import WHOLE_TEXT_CHARS, FileEdited, ToolCallFinished, file_edited
from cadenza.engine.transcript import EventRecord, decode_record, encode_record
from cadenza.lsp.replay import replay_updates
from cadenza.lsp.updates import session_update
from cadenza.tools.textfile import lines_with_ends

LARGE = "".join(f"value_{n} = compute({n})\n" for n in range(10_000))  # ~240,000 characters
CHANGED = LARGE.replace("value_5000 = compute(5000)\n", "value_5000 = compute(5001)\n")


def rebuilt(old: str, diffs: list[dict]) -> str:
    """The new text from the old one and the wire's hunks (as a client would apply them)."""
    lines = lines_with_ends(old)
    for diff in reversed(diffs):
        count = len(lines_with_ends(diff["oldText"]))
        lines[diff["oldLine"] : diff["oldLine"] + count] = [diff["newText"]]
    return "".join(lines)


def test_small_files_created_deleted_and_renamed_files_keep_whole_texts() -> None:
    small = file_edited("c", "a.py", "x = 1\n", "x = 2\n")
    assert (small.old_text, small.new_text, small.hunks) == ("x = 1\n", "x = 2\n", None)
    created = file_edited("c", "big.txt", None, LARGE)
    assert (created.old_text, created.new_text, created.hunks) == (None, LARGE, None)
    deleted = file_edited("c", "big.txt", LARGE, "")
    assert (deleted.old_text, deleted.new_text, deleted.hunks) == (LARGE, "", None)
    renamed = file_edited("c", "big.txt", LARGE, LARGE)
    assert renamed.hunks is None
    at_bound = "a" * (WHOLE_TEXT_CHARS // 2)
    assert file_edited("c", "a", at_bound, at_bound[:-1] + "b").hunks is None


def test_a_large_file_carries_its_hunks_only() -> None:
    event = file_edited("c", "big.py", LARGE, CHANGED)
    assert (event.old_text, event.new_text) == ("", "")
    assert event.hunks is not None
    [hunk] = event.hunks
    assert (hunk.old_line, hunk.new_line) == (4997, 4997)
    assert hunk.old_text.splitlines()[3] == "value_5000 = compute(5000)"
    assert hunk.new_text.splitlines()[3] == "value_5000 = compute(5001)"
    record = encode_record(EventRecord(event=event))
    assert len(record) < 1_000, "the transcript record is the size of the change"
    assert decode_record(record) == EventRecord(event=event)


def test_lsp_update_has_one_diff_per_hunk_with_its_lines(tmp_path: Path) -> None:
    far = CHANGED.replace("value_100 = compute(100)\n", "")
    event = file_edited("c", "big.py", LARGE, far)
    update = session_update(event, tmp_path)
    assert update is not None
    wire = update.wire()
    diffs = wire["content"]
    assert [(d["type"], d["path"], d["oldLine"], d["newLine"]) for d in diffs] == [
        ("diff", str(tmp_path / "big.py"), 97, 97),
        ("diff", str(tmp_path / "big.py"), 4997, 4996),
    ]
    assert rebuilt(LARGE, diffs) == far
    assert len(json.dumps(wire)) < 2_000
    # Whole texts: no line fields at all (not null), a created file's oldText stays null.
    created = session_update(file_edited("c", "n.py", None, "x\n"), tmp_path)
    assert created is not None
    assert created.wire()["content"] == [
        {"type": "diff", "path": str(tmp_path / "n.py"), "oldText": None, "newText": "x\n"}
    ]


def test_acp_diffs_carry_the_lines_in_meta_and_stay_with_the_result(tmp_path: Path) -> None:
    mapper = UpdateMapper(tmp_path)
    edited = mapper.update(file_edited("c1", "big.py", LARGE, CHANGED))
    assert edited is not None
    [diff] = edited.model_dump(mode="json", by_alias=True, exclude_none=True)["content"]
    assert diff["_meta"] == {"cadenza": {"oldLine": 4997, "newLine": 4997}}
    assert diff["path"] == str(tmp_path / "big.py")
    assert rebuilt(LARGE, [{**diff, **diff["_meta"]["cadenza"]}]) == CHANGED
    done = mapper.update(ToolCallFinished(tool_call_id="c1", status="completed", content="ok"))
    assert done is not None
    content = done.model_dump(mode="json", by_alias=True, exclude_none=True)["content"]
    assert content[0] == diff


def test_a_record_from_before_hunks_replays_with_whole_texts(tmp_path: Path) -> None:
    line = json.dumps(
        {
            "type": "event",
            "event": {
                "kind": "edit",
                "tool_call_id": "c",
                "path": "a.py",
                "old_text": "x = 1\n",
                "new_text": "x = 2\n",
            },
        }
    )
    record = decode_record(line)
    assert isinstance(record, EventRecord) and isinstance(record.event, FileEdited)
    assert record.event.hunks is None
    [update] = replay_updates([record], tmp_path)
    assert update.wire()["content"] == [
        {"type": "diff", "path": str(tmp_path / "a.py"), "oldText": "x = 1\n", "newText": "x = 2\n"}
    ]
