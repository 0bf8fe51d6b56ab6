"""Checkpoint saves write each text once: later saves reuse the blob names of texts seen before."""

from __future__ import annotations

from pathlib import Path

import pytest

from cadenza.host.checkpoints import MEMO_BLOBS, FileState, SessionCheckpoint

ID = "0123456789abcdef0123456789abcdef"


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    written: list[bytes] = []
    original = SessionCheckpoint._write_blob

    def write_blob(self: SessionCheckpoint, data: bytes) -> str:
        written.append(data)
        return original(self, data)

    monkeypatch.setattr(SessionCheckpoint, "_write_blob", write_blob)
    return written


def test_an_edit_encodes_only_its_new_text_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = _counting(monkeypatch)
    checkpoint = SessionCheckpoint.for_session(ID, tmp_path / "ws", base=tmp_path / "cp")
    path = tmp_path / "ws" / "a.txt"
    checkpoint.record_before(path, lambda: FileState(exists=True, text="one\n"))
    for text in ("two\n", "three\n", "two\n"):
        new = (text + "x")[:-1]  # a new object each time, as every edit's text is
        checkpoint.record_pending(path, FileState(exists=True, text=new))
        checkpoint.record_after(path, FileState(exists=True, text=new))
    # one per distinct text object: the before state's, then each edit's (pending and after
    # share it); never the before state again
    assert written == [b"one\n", b"two\n", b"three\n", b"two\n"]

    stored = SessionCheckpoint.load(ID, base=tmp_path / "cp")
    assert stored is not None
    entry = stored.entries["a.txt"]
    assert entry.before == FileState(exists=True, text="one\n")
    assert entry.after == FileState(exists=True, text="two\n")
    assert entry.pending is None


def test_a_blob_removed_since_is_written_again(tmp_path: Path) -> None:
    checkpoint = SessionCheckpoint.for_session(ID, tmp_path / "ws", base=tmp_path / "cp")
    path = tmp_path / "ws" / "a.txt"
    checkpoint.record_before(path, lambda: FileState(exists=True, data=b"\x00\x01"))
    checkpoint.record_after(path, FileState(exists=True, text="new\n"))
    for blob in (tmp_path / "cp" / ID / "blobs").iterdir():
        blob.unlink()
    checkpoint.mark_undone()
    restored = SessionCheckpoint.load(ID, base=tmp_path / "cp")
    assert restored is not None
    entry = restored.entries["a.txt"]
    assert entry.before == FileState(exists=True, data=b"\x00\x01")
    assert entry.after == FileState(exists=True, text="new\n")
    assert restored.undone


def test_the_memo_keeps_at_most_memo_blobs_texts(tmp_path: Path) -> None:
    checkpoint = SessionCheckpoint.for_session(ID, tmp_path / "ws", base=tmp_path / "cp")
    path = tmp_path / "ws" / "a.txt"
    checkpoint.record_before(path, lambda: FileState(exists=True, text="zero\n"))
    for i in range(MEMO_BLOBS + 10):
        checkpoint.record_after(path, FileState(exists=True, text=f"text {i}\n"))
    assert len(checkpoint._blobs) == MEMO_BLOBS
