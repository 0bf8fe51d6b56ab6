"""Protected paths: the files that configure Cadenza or the programs that run around it.

Editors, git, CI, package managers and other agents read these files and act on them: they
name programs to run (VS Code tasks, git hooks and filters, CI jobs, MCP servers), switch off
prompts (an agent's permission settings) or change where code is fetched from. A model that
writes one can loosen its own leash or run code later, outside any permission prompt. So a
tool's change to a protected path (an edit, a new file, a deletion, a rename into or out of
one) needs the person's consent every time (``engine.protected``).

A path is matched on where it really leads, relative to the workspace root: symbolic links
followed and ``..`` collapsed, each part compared without case and in Unicode compatibility
form, trailing dots and spaces dropped (so ``.VSCode/``, ``./.vscode/../.vscode/`` and
``.vscode./`` are the same folder, as a case-insensitive file system sees them). Names match at
any depth: a sub-folder may be opened as a workspace of its own. A protected name that is
itself a symbolic link in a folder on the way protects what it points to (``.vscode ->
conf``: ``conf/settings.json`` is VS Code's settings too).

Rule files (``AGENTS.md``, ``CLAUDE.md``, ``.cursorrules``...) are not protected: they steer a
model with words, and every model's output is checked the same way whatever it read; they
never name a program to run or change a permission.
"""

from __future__ import annotations

import os
import subprocess
import unicodedata
from pathlib import Path

import platformdirs

from cadenza.config import APP_NAME
from cadenza.gitcmd import configured_value

PROTECTED_FOLDERS: dict[str, str] = {
    ".cadenza": "Cadenza's workflows and commands",
    ".vscode": "VS Code's settings, tasks and launch configurations",
    ".idea": "JetBrains IDE settings and run configurations",
    ".zed": "Zed's settings and tasks",
    ".fleet": "Fleet's settings and run configurations",
    ".helix": "Helix's per-folder settings and language servers",
    ".devcontainer": "the dev container definition",
    ".claude": "Claude Code's settings, hooks and permissions",
    ".cursor": "Cursor's settings, rules and MCP servers",
    ".continue": "Continue's configuration",
    ".windsurf": "Windsurf's configuration",
    ".codex": "Codex's configuration",
    ".gemini": "Gemini CLI's settings",
    ".opencode": "OpenCode's configuration",
    ".roo": "Roo Code's configuration",
    ".kilocode": "Kilo Code's configuration",
    ".amazonq": "Amazon Q's configuration",
    ".git": "git's repository data, config and hooks",
    ".hg": "Mercurial's repository data and hooks",
    ".svn": "Subversion's repository data",
    ".husky": "git hooks (husky)",
    ".githooks": "git hooks",
    ".circleci": "CircleCI pipelines",
    ".buildkite": "Buildkite pipelines",
    ".forgejo": "Forgejo Actions workflows",
    ".woodpecker": "Woodpecker CI pipelines",
    ".jj": "Jujutsu's repository data and config",
    ".mise": "mise's tasks, hooks and environment",
    ".cargo": "Cargo's settings (runners, registries) and a home folder's Cargo programs",
    ".mvn": "Maven's per-project extensions, options and wrapper",
    ".kiro": "Kiro's settings and MCP servers",
    ".qwen": "Qwen Code's settings",
    ".trae": "Trae's configuration and MCP servers",
    ".config": "the settings of every program of a home folder (Cadenza's own included)",
    ".local": "a home folder's programs on PATH and Cadenza's own decisions",
    ".ssh": "SSH keys and who may log in",
    ".gnupg": "GnuPG keys",
    ".aws": "AWS credentials and the programs that provide them",
    ".kube": "Kubernetes credentials and the programs that provide them",
    ".docker": "Docker credentials and helpers",
    ".venv": "a Python virtual environment (its programs, activate scripts and .pth files)",
    "venv": "a Python virtual environment (its programs, activate scripts and .pth files)",
    ".tox": "tox's virtual environments (their programs and activate scripts)",
    ".nox": "nox's virtual environments (their programs and activate scripts)",
}
"""Folders protected with everything in them, and what they configure."""

PROTECTED_SUBFOLDERS: dict[tuple[str, str], str] = {
    (".github", "workflows"): "GitHub Actions workflows",
    (".github", "actions"): "GitHub Actions used by workflows",
    (".gitea", "workflows"): "Gitea Actions workflows",
    (".gitlab", "ci"): "GitLab CI pipelines (included files)",
    (".yarn", "releases"): "the Yarn program a project runs",
    (".yarn", "plugins"): "Yarn plugins (code Yarn runs)",
    ("gradle", "wrapper"): "the Gradle program the wrapper downloads and runs",
}
"""Folders protected where their parent has the first name."""

PROTECTED_FILES: dict[str, str] = {
    "cadenza.toml": "Cadenza's settings",
    ".envrc": "direnv's shell environment (run by your shell)",
    ".gitattributes": "git's filters and diff drivers",
    ".gitmodules": "git submodules",
    ".pre-commit-config.yaml": "pre-commit's git hooks",
    ".gitlab-ci.yml": "GitLab CI pipelines",
    ".travis.yml": "Travis CI pipelines",
    ".drone.yml": "Drone CI pipelines",
    ".drone.yaml": "Drone CI pipelines",
    ".woodpecker.yml": "Woodpecker CI pipelines",
    ".woodpecker.yaml": "Woodpecker CI pipelines",
    "azure-pipelines.yml": "Azure Pipelines",
    "azure-pipelines.yaml": "Azure Pipelines",
    "bitbucket-pipelines.yml": "Bitbucket Pipelines",
    "jenkinsfile": "Jenkins pipelines",
    ".mcp.json": "the MCP servers agents start",
    "opencode.json": "OpenCode's configuration",
    "opencode.jsonc": "OpenCode's configuration",
    ".aider.conf.yml": "aider's configuration",
    ".exrc": "Vim's and Neovim's per-folder settings",
    ".nvimrc": "Neovim's per-folder settings",
    ".nvim.lua": "Neovim's per-folder settings",
    ".npmrc": "npm's settings (the shell that runs scripts, the registry)",
    ".yarnrc": "Yarn's settings",
    ".yarnrc.yml": "Yarn's settings (the Yarn program that runs)",
    ".bashrc": "the shell's start-up commands",
    ".bash_profile": "the shell's start-up commands",
    ".bash_login": "the shell's start-up commands",
    ".profile": "the shell's start-up commands",
    ".zshrc": "the shell's start-up commands",
    ".zshenv": "the shell's start-up commands",
    ".zprofile": "the shell's start-up commands",
    ".gitconfig": "git's settings (hooks, filters, programs)",
    ".git-credentials": "git's stored passwords",
    ".netrc": "passwords for hosts (git, curl and others)",
    ".hgrc": "Mercurial's settings (hooks, programs)",
    ".devcontainer.json": "the dev container definition",
    ".continuerc.json": "Continue's configuration",
    ".pnpmfile.cjs": "pnpm's hooks (code pnpm runs)",
    ".vimrc": "Vim's settings (read in the folder with 'exrc')",
    ".lazy.lua": "lazy.nvim's per-folder plugin settings",
    ".dir-locals.el": "Emacs's per-folder variables",
    ".dir-locals-2.el": "Emacs's per-folder variables",
    ".gvimrc": "Vim's settings (read in the folder with 'exrc')",
    "_vimrc": "Vim's settings (read in the folder with 'exrc')",
    "_gvimrc": "Vim's settings (read in the folder with 'exrc')",
    "mise.toml": "mise's tasks, hooks and environment",
    ".mise.toml": "mise's tasks, hooks and environment",
    "mise.local.toml": "mise's tasks, hooks and environment",
    ".mise.local.toml": "mise's tasks, hooks and environment",
    "bunfig.toml": "Bun's settings (scripts it preloads, the registry)",
    ".bunfig.toml": "Bun's settings (scripts it preloads, the registry)",
    "uv.toml": "uv's settings (the package index)",
    "pip.conf": "pip's settings (the package index)",
    "pip.ini": "pip's settings (the package index)",
    **{
        f"{name}.{ending}": "lefthook's git hooks"
        for name in ("lefthook", ".lefthook", "lefthook-local", ".lefthook-local")
        for ending in ("yml", "yaml", "toml", "json", "jsonc")
    },
}
"""Files protected wherever they are, by name (compared as :func:`normalized`). The home
folder's own (shell start-up files, ``.gitconfig``, ``.ssh/``, ``.config/``) matter when the
person opens their home folder, or a folder holding one, as the workspace."""

PROTECTED_SUFFIXES: dict[str, str] = {
    ".code-workspace": "a VS Code workspace's settings and tasks",
    ".sublime-project": "a Sublime Text project's settings and build systems",
    ".run.xml": "JetBrains IDE run configurations",
    ".pth": "a Python path file (its import lines run at every start of Python)",
}
"""Files protected by how their name ends."""


def normalized(part: str) -> str:
    """A path part as a case-insensitive file system may see it.

    NFKC, case-folded, trailing dots and spaces dropped (as Windows does).
    """
    return unicodedata.normalize("NFKC", part).casefold().rstrip(". ") or part


def _of_parts(parts: tuple[str, ...]) -> str | None:
    """What the workspace-relative ``parts`` configure when protected, else None."""
    names = [normalized(p) for p in parts]
    for i, name in enumerate(names):
        if name in PROTECTED_FOLDERS:
            return PROTECTED_FOLDERS[name]
        if i > 0 and (names[i - 1], name) in PROTECTED_SUBFOLDERS:
            return PROTECTED_SUBFOLDERS[(names[i - 1], name)]
    if not names:
        return None
    last = names[-1]
    if last in PROTECTED_FILES:
        return PROTECTED_FILES[last]
    return next((what for end, what in PROTECTED_SUFFIXES.items() if last.endswith(end)), None)


def _is_protected_name(name: str) -> bool:
    key = normalized(name)
    return (
        key in PROTECTED_FOLDERS
        or key in PROTECTED_FILES
        or key in {parent for parent, _ in PROTECTED_SUBFOLDERS}
        or any(key.endswith(end) for end in PROTECTED_SUFFIXES)
    )


def _linked_here(real_root: Path, resolved: Path) -> str | None:
    """What a protected-named link in a folder on the way to ``resolved`` makes it configure.

    ``.vscode -> conf`` at the root makes ``conf/settings.json`` VS Code's settings.
    """
    folder = real_root
    for part in (None, *resolved.relative_to(real_root).parts[:-1]):
        if part is not None:
            folder = folder / part
        try:
            links = [e for e in os.scandir(folder) if e.is_symlink()]
        except OSError:
            continue
        for entry in links:
            if not _is_protected_name(entry.name):
                continue
            try:
                target = Path(entry.path).resolve()
            except (RuntimeError, OSError):
                continue
            if resolved == target or resolved.is_relative_to(target):
                inner = resolved.relative_to(target).parts
                relative = Path(entry.path).relative_to(real_root).parts
                return _of_parts((*relative, *inner)) or _of_parts(relative)
    return None


def _cadenza_folders() -> list[Path]:
    """Cadenza's own user folders: its config (trusted) and state (trust, permissions)."""
    folders = [
        Path(platformdirs.user_config_dir(APP_NAME)),
        Path(platformdirs.user_state_dir(APP_NAME)),
    ]
    return [folder.resolve() for folder in folders]


def protected_reason(root: Path, path: Path) -> str | None:
    """What ``path`` configures when it is a protected path of the workspace ``root``.

    Args:
        root: The workspace root.
        path: The file a tool changes, absolute (it is resolved again here).

    Returns:
        A few words (``VS Code's settings, tasks and launch configurations``), or None when the
        path is an ordinary file of the workspace (or not inside it).
    """
    real_root = root.resolve()
    try:
        resolved = path.resolve(strict=False)
    except (RuntimeError, OSError):  # a link loop: nothing can be written there anyway
        return None
    if not resolved.is_relative_to(real_root):
        return None
    if any(resolved.is_relative_to(folder) for folder in _cadenza_folders()):
        return "Cadenza's own settings and the person's decisions"
    hooks = _hooks_folder(real_root)
    if hooks is not None and resolved.is_relative_to(hooks):
        return "git hooks (the folder core.hooksPath names)"
    return (
        _of_parts(resolved.relative_to(real_root).parts)
        or _linked_here(real_root, resolved)
        or _in_environment(real_root, resolved)
    )


_hooks_folders: dict[Path, tuple[int, Path | None]] = {}
"""The hooks folder per workspace, with the modification time of ``.git`` it was read at."""


def _hooks_folder(real_root: Path) -> Path | None:
    """The folder git runs hooks from when the repository's ``core.hooksPath`` names one.

    Read from git's configuration, which runs nothing, once per change of ``.git``.
    """
    try:
        stamp = (real_root / ".git").stat().st_mtime_ns
    except OSError:
        return None
    known = _hooks_folders.get(real_root)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        value = configured_value(real_root, "core.hookspath")
    except (OSError, subprocess.SubprocessError):  # GitConfigError is an OSError
        return None
    folder = (real_root / os.path.expanduser(value)).resolve() if value else None
    _hooks_folders[real_root] = (stamp, folder)
    return folder


def _in_environment(real_root: Path, resolved: Path) -> str | None:
    """A Python virtual environment under any name: a folder on the way holds ``pyvenv.cfg``."""
    folder = resolved.parent
    while folder != real_root and folder.is_relative_to(real_root):
        try:
            if (folder / "pyvenv.cfg").is_file():
                return PROTECTED_FOLDERS[".venv"]
        except OSError:
            return None
        folder = folder.parent
    return None
