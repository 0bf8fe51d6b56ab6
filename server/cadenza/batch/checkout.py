"""The worker's copy of a task's repository, and the patch of what the session changed.

A git repository (a URL, or a local folder holding one) is cloned and checked out at ``ref``
(detached); a local folder that is not a git repository is copied and committed once, so
both cases diff the same way. The patch is ``git diff --binary`` of the index after
``git add --all`` against the starting commit: untracked files the agent created are in it,
and ``git apply`` (or ``git am`` after a commit) replays it on the same commit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cadenza.gitcmd import GitConfigError, run_git

GIT_TIMEOUT_S = 600.0
"""Longest a clone or fetch may take (seconds)."""
_IDENTITY = (("user.name", "cadenza-batch"), ("user.email", "batch@cadenza.invalid"))


class CheckoutError(Exception):
    """The repository cannot be cloned, copied or checked out; the message says why."""


@dataclass(frozen=True, kw_only=True)
class Checkout:
    """A prepared working copy.

    Attributes:
        path: The working tree the session runs in.
        base: The commit it started from (the patch's base).
    """

    path: Path
    base: str


def git(cwd: Path, *args: str, timeout: float = GIT_TIMEOUT_S) -> str:
    """Run ``git ARGS`` in ``cwd`` (as a library user: ``gitcmd``) and return its stdout.

    Raises:
        CheckoutError: git is missing, fails (with its last stderr line) or times out.
    """
    try:
        done = run_git(cwd, *args, timeout=timeout, env=_git_env(), config=_IDENTITY)
    except GitConfigError as exc:
        raise CheckoutError(f"git cannot read the repository's configuration: {exc}") from None
    except FileNotFoundError:
        raise CheckoutError("git is not installed on this worker") from None
    except subprocess.TimeoutExpired:
        raise CheckoutError(f"git {args[0]} took longer than {timeout:g} s") from None
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        lines = [line for line in stderr.strip().splitlines() if line.strip()]
        detail = lines[-1] if lines else f"exit status {done.returncode}"
        raise CheckoutError(f"git {args[0]} failed: {detail}")
    return done.stdout.decode("utf-8", "replace")


def _git_env() -> dict[str, str]:
    """This process's environment, without prompts: a private repo fails instead of hanging."""
    env = dict(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", LC_ALL="C")
    return env


def prepare(repo: str, ref: str | None, dest: Path) -> Checkout:
    """Clone or copy ``repo`` at ``ref`` into ``dest`` (which must not exist yet).

    Raises:
        CheckoutError: It cannot be cloned or copied, or ``ref`` does not exist.
    """
    local = Path(repo).expanduser()
    if local.is_dir() and not (local / ".git").exists():
        if ref:
            raise CheckoutError(f"{repo} is not a git repository, so ref {ref!r} cannot apply")
        return _copy(local, dest)
    if not local.is_dir() and "://" not in repo and not _looks_like_scp(repo):
        raise CheckoutError(f"{repo} is neither a folder nor a git URL")
    # --end-of-options before every value from the task file: git must never read a repo
    # or a ref as an option (``--upload-pack=CMD`` runs CMD). Not ``--``: for checkout, what
    # follows ``--`` is a path.
    git(dest.parent, "clone", "--quiet", "--no-checkout", "--end-of-options", repo, str(dest))
    if ref:
        try:
            git(dest, "checkout", "--quiet", "--detach", "--end-of-options", ref)
        except CheckoutError:
            # A ref the clone did not bring (a pull request head, a bare commit): fetch it.
            git(dest, "fetch", "--quiet", "--end-of-options", "origin", ref)
            git(dest, "checkout", "--quiet", "--detach", "FETCH_HEAD")
    else:
        git(dest, "checkout", "--quiet")
    return Checkout(path=dest, base=git(dest, "rev-parse", "HEAD").strip())


def _looks_like_scp(repo: str) -> bool:
    """``git@host:owner/name.git``, git's scp-like syntax."""
    head, _, tail = repo.partition(":")
    return "@" in head and bool(tail) and "/" not in head


def _copy(source: Path, dest: Path) -> Checkout:
    try:
        shutil.copytree(source, dest, symlinks=True)
    except OSError as exc:
        raise CheckoutError(f"cannot copy {source}: {exc.strerror or exc}") from None
    git(dest, "init", "--quiet")
    git(dest, "add", "--all")
    git(dest, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", "cadenza batch base")
    return Checkout(path=dest, base=git(dest, "rev-parse", "HEAD").strip())


def patch(checkout: Checkout) -> str:
    """The session's change as a binary-safe unified diff, new untracked files included.

    Raises:
        CheckoutError: git failed.
    """
    git(checkout.path, "add", "--all")
    return git(
        checkout.path,
        "diff",
        "--cached",
        "--binary",
        "--no-color",
        "--end-of-options",
        checkout.base,
    )
