"""``cadenza models pull hf:…`` and the known Hub names, through the real CLI, against a Hub
on 127.0.0.1 (``HF_ENDPOINT``): a good pull, a wrong hash refused, a cut connection resumed,
split GGUF files; and the choice of files, without a server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cadenza.providers.hub import HubFile, HubRef, choose_files, gguf_size, local_name, parse_ref
from cadenza.providers.model_catalog import ModelError
from tests.support.fake_hub import FakeHub, HubRepo

REPO = "Qwen/Qwen2.5-Coder-7B-Instruct-GGUF"
GGUF = b"GGUF" + bytes(range(256)) * 400  # 102,404 bytes


def cli(tmp_path: Path, hub: FakeHub, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "CADENZA_"))}
    env |= {
        "HF_ENDPOINT": hub.url,
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "CADENZA_MODELS_DIR": str(tmp_path / "models"),
    }
    return subprocess.run(
        [sys.executable, "-m", "cadenza", "models", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_a_known_name_is_pulled_from_the_hub_and_verified(tmp_path: Path) -> None:
    repo = HubRepo(
        files={
            "qwen2.5-coder-7b-instruct-q4_k_m.gguf": GGUF,
            "qwen2.5-coder-7b-instruct-q8_0.gguf": b"GGUF other",
            "README.md": b"# readme",
        }
    )
    with FakeHub({REPO: repo}) as hub:
        done = cli(tmp_path, hub, "pull", "qwen2.5-coder-7b")
        assert done.returncode == 0, done.stderr
        path = Path(done.stdout.strip())
        assert path.read_bytes() == GGUF
        assert "local/qwen2.5-coder-7b: downloaded and verified (SHA-256 ok)" in done.stderr
        # The file lives in the Hub cache (HF_HOME); the models folder holds the record.
        assert str(path).startswith(str(tmp_path / "hf"))
        record = json.loads((tmp_path / "models/qwen2.5-coder-7b.hub.json").read_text())
        assert record["ref"] == f"hf:{REPO}:q4_k_m"
        gets = [p for m, p, _ in hub.requests if m == "GET" and "/resolve/" in p]
        assert gets == [f"/{REPO}/resolve/{'0123456789abcdef' * 2}01234567/{path.name}"]

        listed = cli(tmp_path, hub, "list")
        row = next(line for line in listed.stdout.splitlines() if "qwen2.5-coder-7b" in line)
        assert "yes" in row
        again = cli(tmp_path, hub, "pull", "qwen2.5-coder-7b")
        assert again.returncode == 0 and Path(again.stdout.strip()) == path
        assert "local/qwen2.5-coder-7b: already downloaded; checksum ok" in again.stderr
        assert len([r for r in hub.requests if r[0] == "GET" and "/resolve/" in r[1]]) == 1


def test_a_file_whose_hash_is_not_the_hubs_is_refused_and_nothing_stays(tmp_path: Path) -> None:
    name = "qwen2.5-coder-7b-instruct-q4_k_m.gguf"
    repo = HubRepo(files={name: GGUF}, lie_about={name})
    with FakeHub({REPO: repo}) as hub:
        done = cli(tmp_path, hub, "pull", f"hf:{REPO}:Q4_K_M")
    assert done.returncode == 1
    assert "SHA-256 mismatch" in done.stderr and "nothing was kept" in done.stderr
    assert not any(p.endswith(".gguf") or "blobs/" in p for p in files_under(tmp_path / "hf"))
    assert not (tmp_path / "models").exists() or files_under(tmp_path / "models") == []


def test_a_cut_connection_is_resumed_from_where_it_stopped(tmp_path: Path) -> None:
    name = "qwen2.5-coder-7b-instruct-q4_k_m.gguf"
    # Larger than the library's read unit (10 MiB), so bytes reach the disk before the cut.
    big = GGUF * 120
    cut = 11 << 20
    repo = HubRepo(files={name: big}, cut_after={name: cut})
    with FakeHub({REPO: repo}) as hub:
        done = cli(tmp_path, hub, "pull", f"hf:{REPO}")
        ranges = [r for m, p, r in hub.requests if m == "GET" and p.endswith(name)]
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).read_bytes() == big
    assert len(ranges) == 2 and ranges[0] is None
    resumed_at = int(str(ranges[1]).removeprefix("bytes=").removesuffix("-"))
    assert 0 < resumed_at <= cut
    assert "local/qwen2.5-coder-7b-instruct-q4_k_m: downloaded and verified" in done.stderr


def test_a_split_file_is_pulled_whole_and_served_from_its_first_part(tmp_path: Path) -> None:
    parts = {
        f"qwen2.5-coder-14b-instruct-q4_k_m-0000{n}-of-00003.gguf": bytes([n]) * 5000
        for n in (1, 2, 3)
    }
    with FakeHub({"Qwen/Qwen2.5-Coder-14B-Instruct-GGUF": HubRepo(files=parts)}) as hub:
        done = cli(tmp_path, hub, "pull", "qwen2.5-coder-14b")
    assert done.returncode == 0, done.stderr
    first = Path(done.stdout.strip())
    assert first.name == "qwen2.5-coder-14b-instruct-q4_k_m-00001-of-00003.gguf"
    assert sorted(p.name for p in first.parent.iterdir()) == sorted(parts)
    assert gguf_size(first) == 15000


def test_an_unknown_repository_or_quantization_says_what_there_is(tmp_path: Path) -> None:
    with FakeHub({REPO: HubRepo(files={"m-q8_0.gguf": GGUF})}) as hub:
        missing = cli(tmp_path, hub, "pull", "hf:Nobody/Nothing")
        wrong = cli(tmp_path, hub, "pull", f"hf:{REPO}:q2_k")
    assert missing.returncode == 1 and "cannot list Nobody/Nothing" in missing.stderr
    assert wrong.returncode == 1 and "has no q2_k GGUF file; it has q8_0" in wrong.stderr


def test_references_parse_and_pick_their_files() -> None:
    assert parse_ref("hf:Org/Repo") == HubRef(repo="Org/Repo", pick="q4_k_m")
    assert parse_ref("hf:Org/Repo:model.Q8_0.gguf").pick == "model.Q8_0.gguf"
    for bad in ("hf:", "hf:Org", "hf:Org/Repo/x", "hf:/Repo"):
        with pytest.raises(ModelError, match="is not a Hugging Face model"):
            parse_ref(bad)
    files = [
        HubFile(path="a-Q4_K_M.gguf", size=1, sha256="0" * 64),
        HubFile(path="a-q8_0-00002-of-00002.gguf", size=2, sha256="1" * 64),
        HubFile(path="a-q8_0-00001-of-00002.gguf", size=3, sha256="2" * 64),
        HubFile(path="b-q5_k_m.gguf", size=4, sha256="3" * 64),
        HubFile(path="c-q5_k_m.gguf", size=5, sha256="4" * 64),
    ]
    assert [f.path for f in choose_files(HubRef(repo="o/r"), files)] == ["a-Q4_K_M.gguf"]
    q8 = choose_files(HubRef(repo="o/r", pick="Q8_0"), files)
    assert [f.path for f in q8] == ["a-q8_0-00001-of-00002.gguf", "a-q8_0-00002-of-00002.gguf"]
    assert local_name(q8) == "a-q8_0"
    named = choose_files(HubRef(repo="o/r", pick="a-q8_0-00001-of-00002.gguf"), files)
    assert len(named) == 2
    with pytest.raises(ModelError, match="matches several files"):
        choose_files(HubRef(repo="o/r", pick="q5_k_m"), files)
    with pytest.raises(ModelError, match="parts of the split file are missing"):
        choose_files(HubRef(repo="o/r", pick="q8_0"), files[1:2])
