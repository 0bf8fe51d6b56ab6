"""The prompt cache across processes: keys, bounds, and save/restore against a fake llama-server."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from cadenza.providers import prompt_cache
from cadenza.providers.prompt_cache import (
    SlotCache,
    cache_folder,
    cache_key,
    file_identity,
    prompt_prefix,
    prune,
)

SYSTEM = {"role": "system", "content": "You are a coding agent. Tools: read_file."}


class FakeSlots:
    """llama-server's ``POST /slots/{id}?action=save|restore`` writing real files in ``folder``.

    ``mode``: ``ok``; ``unsupported`` (501, as without ``--slot-save-path``); ``corrupt`` (a
    restore fails as llama-server does for a file it cannot read).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.mode = "ok"
        self.calls: list[tuple[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                url = urlparse(self.path)
                action = parse_qs(url.query).get("action", [""])[0]
                length = int(self.headers.get("Content-Length", "0"))
                filename = json.loads(self.rfile.read(length))["filename"]
                fake.calls.append((action, filename))
                status, body = fake.answer(url.path, action, filename)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, path: str, action: str, filename: str) -> tuple[int, dict[str, object]]:
        if self.mode == "unsupported":
            return 501, {"error": {"message": "This server does not support slots action."}}
        target = self.folder / filename
        if path != "/slots/0":
            return 400, {"error": {"message": "bad slot"}}
        if action == "save":
            target.write_bytes(b"KV" * 300)
            return 200, {"id_slot": 0, "filename": filename, "n_saved": 300, "n_written": 600}
        if action == "restore":
            if self.mode == "corrupt" or not target.read_bytes().startswith(b"KV"):
                return 400, {"error": {"message": "Unable to restore slot, no available space"}}
            n = len(target.read_bytes()) // 2
            return 200, {"id_slot": 0, "filename": filename, "n_restored": n, "n_read": n * 2}
        return 400, {"error": {"message": "Invalid action"}}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeSlots]:
    folder = tmp_path / "slots"
    folder.mkdir()
    server = FakeSlots(folder)
    yield server
    server.close()


def slot_cache(fake: FakeSlots, **overrides: object) -> SlotCache:
    args: dict[str, object] = {
        "base_url": fake.base_url,
        "model": "m.gguf:100:1",
        "server": "b6000-abc",
        "n_ctx": 8192,
    }
    args.update(overrides)
    return SlotCache(fake.folder, **args)  # type: ignore[arg-type]


def body(system: dict[str, str] = SYSTEM, task: str = "fix app.py") -> dict[str, object]:
    return {"messages": [system, {"role": "user", "content": task}], "max_tokens": 10}


def test_the_key_changes_with_each_thing_that_decides_the_kv() -> None:
    base = {"model": "m.gguf:100:1", "server": "b6000", "n_ctx": 8192, "prefix": b"sys"}
    key = cache_key(**base)  # type: ignore[arg-type]
    assert key == cache_key(**base)  # type: ignore[arg-type]
    for field, other in (("model", "m.gguf:100:2"), ("server", "b6001"), ("n_ctx", 4096)):
        assert cache_key(**{**base, field: other}) != key  # type: ignore[arg-type]
    assert cache_key(**{**base, "prefix": b"sys "}) != key  # type: ignore[arg-type]
    # Parts are length-prefixed: moving text between them is another key.
    assert cache_key(model="ab", server="c", n_ctx=1, prefix=b"") != cache_key(
        model="a", server="bc", n_ctx=1, prefix=b""
    )


def test_the_prefix_is_the_system_message_only() -> None:
    assert prompt_prefix(body()) == prompt_prefix(body(task="something else"))
    assert prompt_prefix(body()) != prompt_prefix(body(system={**SYSTEM, "content": "other"}))
    assert prompt_prefix({"messages": [{"role": "user", "content": "hi"}]}) is None
    assert prompt_prefix({"messages": []}) is None
    assert prompt_prefix({}) is None


def test_the_folder_is_per_model_and_can_be_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(prompt_cache.ENV_FOLDER, str(tmp_path))
    assert cache_folder(Path("/models/qwen 1.5b.gguf")) == tmp_path / "qwen_1.5b"
    monkeypatch.setenv(prompt_cache.ENV_FOLDER, "off")
    assert cache_folder(Path("/models/m.gguf")) is None
    monkeypatch.delenv(prompt_cache.ENV_FOLDER)
    default = cache_folder(Path("/models/m.gguf"))
    assert default is not None and default.parts[-2:] == ("prompt-cache", "m")


def test_file_identity_follows_size_and_mtime(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"1234")
    before = file_identity(path)
    os.utime(path, ns=(1, 1))
    assert file_identity(path) != before
    assert file_identity(tmp_path / "missing.gguf") == "missing.gguf:?"


def test_prune_keeps_the_newest_files_and_drops_stale_partial_ones(tmp_path: Path) -> None:
    now = time.time()
    for i in range(6):
        path = tmp_path / f"k{i}.slot"
        path.write_bytes(b"x")
        os.utime(path, (now - 100 + i, now - 100 + i))
    stale, fresh = tmp_path / "a.1.tmp", tmp_path / "b.2.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"x")
    os.utime(stale, (now - 2 * prompt_cache.STALE_TMP_S,) * 2)
    prune(tmp_path, keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.2.tmp", "k4.slot", "k5.slot"]
    prune(tmp_path / "missing")  # no folder: nothing to do, no error


async def test_a_second_process_restores_what_the_first_saved_once(fake: FakeSlots) -> None:
    first = slot_cache(fake)
    await first.before_first(body())
    assert first.save_pending and first.restored_tokens is None
    await first.after_first()
    assert first.saved_key is not None and not first.save_pending
    await first.after_first()  # saved once per key, not after every request
    [(action, tmp)] = fake.calls
    assert action == "save" and tmp.endswith(".tmp")
    assert [p.name for p in fake.folder.iterdir()] == [first.saved_key + ".slot"]

    second = slot_cache(fake)
    await second.before_first(body(task="another task"))
    assert second.restored_tokens == 300
    assert not second.save_pending
    assert fake.calls[-1] == ("restore", first.saved_key + ".slot")
    await second.before_first(body())  # only before the server's first request
    assert len(fake.calls) == 2


async def test_another_key_is_never_restored(fake: FakeSlots) -> None:
    first = slot_cache(fake)
    await first.before_first(body())
    await first.after_first()
    for other in (
        slot_cache(fake, model="m.gguf:100:2"),
        slot_cache(fake, server="b6001-def"),
        slot_cache(fake, n_ctx=4096),
    ):
        await other.before_first(body())
        assert other.restored_tokens is None and other.save_pending
    changed = slot_cache(fake)
    await changed.before_first(body(system={**SYSTEM, "content": "new tools"}))
    assert changed.restored_tokens is None
    assert [a for a, _ in fake.calls] == ["save"]


async def test_no_system_message_means_no_cache(fake: FakeSlots) -> None:
    cache = slot_cache(fake)
    await cache.before_first({"messages": [{"role": "user", "content": "hi"}]})
    assert not cache.save_pending
    await cache.after_first()
    assert fake.calls == []


async def test_a_corrupt_file_is_deleted_and_saved_again(fake: FakeSlots) -> None:
    first = slot_cache(fake)
    await first.before_first(body())
    await first.after_first()
    assert first.saved_key is not None
    saved = fake.folder / (first.saved_key + ".slot")
    saved.write_bytes(b"garbage")
    second = slot_cache(fake)
    await second.before_first(body())
    assert second.restored_tokens is None and not saved.exists()
    assert second.save_pending
    await second.after_first()
    assert saved.read_bytes().startswith(b"KV")


async def test_a_server_without_slot_saving_leaves_nothing_behind(fake: FakeSlots) -> None:
    fake.mode = "unsupported"
    cache = slot_cache(fake)
    await cache.before_first(body())
    await cache.after_first()
    assert cache.saved_key is None
    assert list(fake.folder.iterdir()) == []


async def test_a_server_that_is_gone_is_logged_and_ignored(
    fake: FakeSlots, caplog: pytest.LogCaptureFixture
) -> None:
    cache = slot_cache(fake, base_url="http://127.0.0.1:9")
    await cache.before_first(body())
    await cache.after_first()
    assert cache.saved_key is None
    assert "slot save failed" in caplog.text


async def test_saving_bounds_the_folder(fake: FakeSlots) -> None:
    for i in range(prompt_cache.KEEP_FILES + 2):
        cache = slot_cache(fake, keep=prompt_cache.KEEP_FILES)
        await cache.before_first(body(system={**SYSTEM, "content": f"prompt {i}"}))
        await cache.after_first()
    files = [p for p in fake.folder.iterdir() if p.suffix == ".slot"]
    assert len(files) == prompt_cache.KEEP_FILES
