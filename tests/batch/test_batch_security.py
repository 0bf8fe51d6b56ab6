"""What a task file can make the batch do, without Ray.

A task file may come from someone else: its values must never reach git as options.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cadenza.batch.checkout import CheckoutError, prepare
from cadenza.batch.tasks import parse_line
from tests.batch.conftest import make_repo


def test_a_repo_or_ref_starting_with_a_dash_is_refused_naming_the_field() -> None:
    ref = parse_line(
        '{"repo": "r", "ref": "--upload-pack=touch /tmp/X;git-upload-pack", "task": "t"}'
    )
    repo = parse_line('{"repo": "-utouch X@h:x", "task": "t"}')
    assert isinstance(ref, str) and ref.startswith("ref:") and "'-'" in ref
    assert isinstance(repo, str) and repo.startswith("repo:") and "'-'" in repo
    assert not isinstance(parse_line('{"repo": "r", "ref": "v1-rc", "task": "t"}'), str)


def test_git_never_reads_a_ref_or_a_repo_as_an_option(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "r")
    mark = tmp_path / "ran"
    with pytest.raises(CheckoutError):
        prepare(str(repo), f"--upload-pack=touch {mark};git-upload-pack", tmp_path / "w1")
    assert not mark.exists()
    # scp-like: git must see a host, not -u (--upload-pack) and the folder as the repository
    with pytest.raises(CheckoutError) as info:
        prepare("-utouch ran@h:x", None, tmp_path / "w2")
    assert "ran@h" in str(info.value)
    assert not (tmp_path / "ran@h:x").exists()


def test_a_ref_only_a_fetch_brings_is_still_checked_out(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "r")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run(["git", "update-ref", "refs/pull/7/head", head], cwd=repo, check=True)
    checkout = prepare(str(repo), "refs/pull/7/head", tmp_path / "w")
    assert checkout.base == head
