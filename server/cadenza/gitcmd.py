"""Every git command Cadenza runs: git as a library, never as the repository's guest.

A repository's own configuration (``.git/config``, the files it includes, ``config.worktree``)
can name programs that git runs on its behalf: ``core.fsmonitor`` on every ``status``, a
filter driver's ``clean``/``smudge``/``process`` whenever a file's content is hashed or
checked out (in-tree ``.gitattributes`` choose the driver), ``diff.external`` and textconv
drivers for a diff, hooks after an index write, a commit or a checkout, ``core.sshCommand``
and credential helpers for a fetch, a pager. A folder the person opens may be a downloaded
archive with any ``.git`` in it, so :func:`run_git` runs git with:

- fixed overrides: ``core.fsmonitor=false``, ``core.hooksPath=/dev/null``,
  ``diff.external=`` (empty), ``core.pager=cat`` and ``--no-pager``,
  ``protocol.ext.allow=never`` (``ext::`` URLs run commands), ``commit.gpgSign=false``;
  ``--no-ext-diff --no-textconv`` on ``diff``, ``log`` and ``show``;
- every key that names a program (:data:`PROGRAM_KEYS`) and is set by the repository's own
  scopes (``local``, ``worktree``, and the files they include) is overridden: with the value
  the person's own config gives it (system, global, command line), or else with a value that
  runs nothing (:func:`_neutral`). The person's own filters (Git LFS) keep working.

The repository's configuration is read with ``git config --list``, which executes nothing,
before every command, so a change to it during a run is seen. The overrides are passed in the
environment (``GIT_CONFIG_COUNT``), which git hands down to the processes it starts (a
submodule's git). git's ownership check stays on: a repository another user owns is refused
by git (``safe.directory``), and Cadenza never widens that rule.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

FIXED = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("diff.external", ""),
    ("core.pager", "cat"),
    ("protocol.ext.allow", "never"),
    ("commit.gpgSign", "false"),
)
"""Overrides every git command gets, whatever the configuration says."""

PROGRAM_KEYS = re.compile(
    r"(?:filter\..+\.(?:clean|smudge|process|required)"
    r"|diff\..+\.(?:textconv|command)"
    r"|remote\..+\.(?:uploadpack|receivepack)"
    r"|credential(?:\..+)?\.helper"
    r"|gpg(?:\..+)?\.program"
    r"|core\.(?:sshcommand|askpass|gitproxy|alternaterefscommand))",
)
"""Keys (as ``git config --list`` spells them: section and name in lower case) whose value
git runs as a program, or that make a missing filter fatal (``filter.X.required``)."""

TRUSTED_SCOPES = frozenset({"system", "global", "command"})
"""Scopes of the person's own configuration; anything else belongs to the repository."""

_DIFF_COMMANDS = frozenset({"diff", "log", "show"})
CONFIG_TIMEOUT_S = 10.0


PLAIN_DIFF = 'sh -c \'git --no-pager diff --no-index --no-ext-diff -- "$2" "$5"; test $? -le 1\' sh'
"""``diff.external`` for a command in a repository that sets its own: git's own diff of the two
versions (an empty value would make every ``git diff`` fail)."""


def _neutral(key: str) -> str:
    """A value of ``key`` that runs nothing (an empty value resets a list of helpers)."""
    if key == "core.sshcommand":
        return "ssh"
    if key == "core.gitproxy":
        return "none"
    if key.endswith(".uploadpack"):
        return "git-upload-pack"
    if key.endswith(".receivepack"):
        return "git-receive-pack"
    if key.endswith(".required"):
        return "false"
    if key.endswith(".textconv"):
        return "cat"  # the text as it is (an empty one would fail a command's git diff)
    if key.startswith("diff.") and key.endswith(".command"):
        return PLAIN_DIFF
    return ""


class GitConfigError(OSError):
    """git could not read the repository's configuration, so no git command is run."""


def parse_config_list(raw: bytes, *, scoped: bool = True) -> list[tuple[str, str, str]]:
    """``(scope, key, value)`` of ``git config --null --list`` output.

    Args:
        raw: The output.
        scoped: It was listed with ``--show-scope`` (else every scope is ``"unknown"``).
    """
    fields = raw.split(b"\0")
    if fields and not fields[-1]:
        fields.pop()
    if scoped:
        pairs = list(zip(fields[0::2], fields[1::2], strict=False))
    else:
        pairs = [(b"unknown", item) for item in fields]
    entries = []
    for scope, item in pairs:
        key, _, value = item.decode("utf-8", "replace").partition("\n")
        entries.append((scope.decode(), key, value))
    return entries


def repository_overrides(entries: Sequence[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """The ``(key, value)`` overrides that undo the repository's program keys.

    Each key the repository sets gets its neutral value, then the person's values in order:
    the last one wins for a single value, and a list (credential helpers) is reset and
    refilled.
    """
    untrusted: dict[str, None] = {}
    trusted: dict[str, list[str]] = {}
    for scope, key, value in entries:
        if not PROGRAM_KEYS.fullmatch(key):
            continue
        if scope in TRUSTED_SCOPES:
            trusted.setdefault(key, []).append(value)
        else:
            untrusted[key] = None
    return [(key, value) for key in untrusted for value in (_neutral(key), *trusted.get(key, ()))]


def _config_entries(cwd: Path, env: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """The configuration git sees in ``cwd``, by scope.

    An older git without ``--show-scope`` (before 2.26) gets every entry taken as the
    repository's: the person's own filters are then off too, which is safe.

    Raises:
        GitConfigError: git cannot read it (e.g. a repository another user owns).
    """
    problem = b""
    for scoped in (True, False):
        scope = ["--show-scope"] if scoped else []
        done = subprocess.run(
            ["git", "--no-pager", "config", "--null", *scope, "--list"],
            cwd=cwd,
            capture_output=True,
            timeout=CONFIG_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            env=dict(env),
            check=False,
        )
        if done.returncode == 0:
            return parse_config_list(done.stdout, scoped=scoped)
        problem = problem or done.stderr
    lines = problem.decode("utf-8", "replace").strip().splitlines()
    raise GitConfigError(lines[-1] if lines else "git config failed")


def configured_value(cwd: Path, key: str) -> str | None:
    """The value git's configuration gives ``key`` in ``cwd`` (the last one set), or None.

    Read with ``git config --list``, which runs nothing; ``key`` as it lists keys (section and
    name in lower case: ``core.hookspath``).

    Raises:
        GitConfigError: git cannot read the configuration.
        OSError: git is not installed, or ``cwd`` does not exist.
        subprocess.TimeoutExpired: git took longer than its 10 s.
    """
    values = [value for _, name, value in _config_entries(cwd, os.environ) if name == key]
    return values[-1] if values else None


def git_environment(
    cwd: Path, base: Mapping[str, str] | None = None, config: Sequence[tuple[str, str]] = ()
) -> dict[str, str]:
    """The environment that runs git in ``cwd`` with the overrides of the module docstring.

    Args:
        cwd: Where git will run (its repository's configuration is read).
        base: The environment to start from (default: this process's).
        config: Further ``(key, value)`` overrides (an identity for commits).

    Raises:
        GitConfigError: git cannot read the configuration.
        OSError: git is not installed, or ``cwd`` does not exist.
        subprocess.TimeoutExpired: Reading the configuration took too long.
    """
    env = dict(os.environ if base is None else base)
    return with_overrides(env, [*FIXED, *repository_overrides(_config_entries(cwd, env)), *config])


def with_overrides(base: Mapping[str, str], overrides: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``base`` with git ``(key, value)`` overrides added (``GIT_CONFIG_COUNT``, ...).

    Overrides already in ``base`` stay; these come after them, so they win.
    """
    env = dict(base)
    start = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    for index, (key, value) in enumerate(overrides, start):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    env["GIT_CONFIG_COUNT"] = str(start + len(overrides))
    return env


def is_git_override(name: str) -> bool:
    """Whether environment variable ``name`` carries git overrides (``with_overrides``)."""
    return name == "GIT_CONFIG_COUNT" or name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))


def command_environment(cwd: Path) -> dict[str, str]:
    """This process's environment for a command the agent runs in ``cwd`` (any program).

    The git it may run gets the overrides of the module docstring, except that
    ``diff.external`` is replaced only where the repository sets it (by ``PLAIN_DIFF``, or the
    person's own value), as a command's ``git diff`` has no ``--no-ext-diff``. When the
    configuration cannot be read (no git, a repository git refuses), the fixed overrides.
    """
    fixed = [(key, value) for key, value in FIXED if key != "diff.external"]
    try:
        entries = _config_entries(cwd, os.environ)
    except (OSError, subprocess.SubprocessError):
        return with_overrides(os.environ, fixed)
    external = [
        (key, value)
        for scope, key, value in entries
        if key == "diff.external" and scope in TRUSTED_SCOPES
    ]
    if any(key == "diff.external" and scope not in TRUSTED_SCOPES for scope, key, _ in entries):
        fixed += external[-1:] or [("diff.external", PLAIN_DIFF)]
    return with_overrides(os.environ, [*fixed, *repository_overrides(entries)])


def git_argv(args: Sequence[str]) -> list[str]:
    """``git ARGS`` with ``--no-pager``, and no external diff or textconv for a diff."""
    argv = ["git", "--no-pager", *args]
    if args and args[0] in _DIFF_COMMANDS:
        argv[3:3] = ["--no-ext-diff", "--no-textconv"]
    return argv


def run_git(
    cwd: Path,
    *args: str,
    timeout: float,
    env: Mapping[str, str] | None = None,
    config: Sequence[tuple[str, str]] = (),
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``cwd`` without the repository's programs (module docstring).

    stdin is empty, stdout and stderr are captured.

    Args:
        cwd: The working folder.
        args: The subcommand and its arguments.
        timeout: Seconds the command may take (reading the configuration first: 10 s).
        env: The environment to start from (default: this process's).
        config: Further ``(key, value)`` overrides.

    Raises:
        GitConfigError: git cannot read the configuration (nothing was run).
        OSError: git is not installed, or ``cwd`` does not exist.
        subprocess.TimeoutExpired: git took longer than ``timeout``.
    """
    return subprocess.run(
        git_argv(args),
        cwd=cwd,
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=git_environment(cwd, env, config),
        check=False,
    )
