"""``cadenza.gitcmd``: git runs without the repository's programs, with the person's own.

Real git on a real repository whose ``.git/config`` (and a file it includes) names an
fsmonitor, filter drivers, a textconv driver, an external diff, a pager and hooks, each a
script leaving a marker file (tests/support/hostile_git.py).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

import cadenza
from cadenza.gitcmd import git_environment, repository_overrides, run_git
from tests.support.hostile_git import hostile_repo, written

IDENTITY = (("user.name", "t"), ("user.email", "t@example.org"))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """No user or system git config of the machine running the tests."""
    values = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    values.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(tmp_path / "global.cfg"))
    (tmp_path / "global.cfg").write_text("", encoding="utf-8")
    return values


def test_plain_git_obeys_the_repository(tmp_path: Path, env: dict[str, str]) -> None:
    """The repository is hostile indeed: git without the guard runs its programs."""
    marks = tmp_path / "marks"
    repo = hostile_repo(tmp_path, marks)
    subprocess.run(["git", "status"], cwd=repo, env=env, capture_output=True, check=False)
    ran = set(written(marks))
    assert "fsmonitor" in ran and ran & {"clean", "clean-included", "process"}


@pytest.mark.parametrize(
    "args",
    [
        ("status", "--porcelain", "-z", "--untracked-files=all"),
        ("diff",),
        ("diff", "HEAD", "--stat"),
        ("log", "-p", "-1"),
        ("show", "HEAD"),
        ("add", "--all"),
        ("commit", "--quiet", "--allow-empty", "-m", "x"),
        ("checkout", "--quiet", "--detach", "HEAD"),
        ("checkout", "HEAD", "--", "."),
        ("cat-file", "blob", "HEAD:app.py"),
    ],
)
def test_no_program_of_the_repository_runs(
    tmp_path: Path, env: dict[str, str], args: tuple[str, ...]
) -> None:
    marks = tmp_path / "marks"
    repo = hostile_repo(tmp_path, marks)
    done = run_git(repo, *args, timeout=30, env=env, config=IDENTITY)
    assert done.returncode == 0, done.stderr
    assert written(marks) == []


def test_the_persons_own_filter_still_runs(tmp_path: Path, env: dict[str, str]) -> None:
    """A filter of the person's config (Git LFS) runs, even when the repository redefines it."""
    marks = tmp_path / "marks"
    repo = hostile_repo(tmp_path, marks)
    mine = tmp_path / "mine.sh"
    mine.write_text(f'#!/bin/sh\ntouch "{marks / "mine"}"\ncat\n', encoding="utf-8")
    mine.chmod(0o755)
    Path(env["GIT_CONFIG_GLOBAL"]).write_text(f'[filter "evil"]\n\tclean = {mine}\n', "utf-8")
    done = run_git(repo, "add", "app.py", timeout=30, env=env)
    assert done.returncode == 0, done.stderr
    assert written(marks) == ["mine"]


def test_a_list_of_helpers_is_reset_then_refilled() -> None:
    entries = [
        ("global", "credential.helper", "store"),
        ("local", "credential.helper", "!evil"),
        ("local", "core.sshcommand", "evil-ssh"),
        ("local", "filter.x.required", "true"),
        ("local", "user.name", "anyone"),
    ]
    assert repository_overrides(entries) == [
        ("credential.helper", ""),
        ("credential.helper", "store"),
        ("core.sshcommand", "ssh"),
        ("filter.x.required", "false"),
    ]


def test_the_persons_command_line_config_is_kept(tmp_path: Path, env: dict[str, str]) -> None:
    repo = hostile_repo(tmp_path, tmp_path / "marks")
    env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="user.name", GIT_CONFIG_VALUE_0="Person")
    ready = git_environment(repo, env)
    assert ready["GIT_CONFIG_KEY_0"] == "user.name" and ready["GIT_CONFIG_VALUE_0"] == "Person"
    done = run_git(repo, "config", "user.name", timeout=30, env=env)
    assert done.stdout.decode().strip() == "Person"


def test_every_git_command_of_cadenza_goes_through_gitcmd() -> None:
    """No module spawns git on its own (an argv starting with ``"git"``)."""
    package = Path(cadenza.__file__).parent
    spawns_git = re.compile(r"""[\[(]\s*["']git["']\s*[,\]\)]""")
    offenders = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.name != "gitcmd.py" and spawns_git.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
