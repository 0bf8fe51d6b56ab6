"""What a command's program does with its arguments, for the rules a person is offered.

"Always allow `X …` in this workspace" (``permission_rules.suggest_rule``) lets ``X`` run with
any further arguments the model writes. Which arguments of a program run other programs is
not knowable from outside (``tar --checkpoint-action=exec``, ``rg --pre``, ``git grep -O``,
``rsync -e``, ``sort --compress-program``...), so such a pattern is offered only for an
**allow-list** (``offers_pattern``): the test runners, build tools and linters of
``TEST_RUNNERS``, ``BUILD_TOOLS``, ``LINTERS`` and the toolchain subcommands of
``PATTERN_SUBCOMMANDS`` (``npm test``, ``cargo build``, ``go test``). They run the workspace's
own files (``pytest`` its ``conftest.py`` and tests, ``make`` its ``Makefile``), so allowing
them allows whatever those files say, now or after an edit, and the prompt says so
(``workspace_code``). Every other command is offered as the exact command only.

Three kinds of program run whatever their arguments say, and not even the exact command is
offered for them:

- **interpreters and shells**, known by their name family whatever the version or suffix
  (``python3.12``, ``pypy3.10``, ``node18``, ``deno``, ``perl5.36``, ``pwsh``, ``busybox``,
  ``python.exe``); ``awk`` and ``sed`` count too (``system()``, sed's ``e`` command), and
  ``python -m MODULE`` is judged as ``MODULE`` (``python -m timeit CODE`` runs code);
- **wrappers** that run the rest of the line as a command (``env``, ``timeout``, ``nice``,
  ``xargs``, ``stdbuf``, ``setsid``, ``find`` with ``-exec``, ``ssh``) and package runners
  that fetch and run a package named in their arguments (``npx``, ``bunx``, ``uvx``);
- **runner subcommands** of package managers and toolchains: ``uv run``, ``pnpm dlx``,
  ``yarn dlx``, ``npm exec``, ``go run``, ``poetry run``, ``docker run``...

Names are compared by their base name, in lower case, without a Windows program suffix
(``/usr/bin/Python3.EXE`` is ``python3``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

_SUFFIX = re.compile(r"\.(?:exe|cmd|bat|com|ps1)$")

INTERPRETER = re.compile(
    r"""
    (?:
      # shells
      sh|bash|rbash|dash|ash|zsh|ksh|mksh|pdksh|oksh|loksh|yash|posh|csh|tcsh|fish|nu|elvish
      |xonsh|osh|ysh|pwsh|powershell|cmd|busybox|toybox
      # language runtimes and REPLs
      |python|py|pypy|ipython|jython|micropython|graalpy|node|nodejs|deno|bun|qjs|ts-node|tsx
      |perl|raku|rakudo|ruby|irb|jruby|truffleruby|php|lua|luajit|tclsh|wish|expect|r|rscript
      |julia|osascript|java|jshell|groovy|scala|kotlin|erl|escript|elixir|iex|ghci|runghc
      |runhaskell|guile|racket|sbcl|clisp|ecl|csi|gosh|chez|scheme|swipl|ocaml
      # text tools whose programs can run commands, and debuggers and editors that can too
      |awk|gawk|mawk|nawk|sed|gsed|gdb|lldb|vi|vim|nvim|ex|ed|emacs
    )
    (?:[-_]?\d[\d.]*[a-z]?)?  # a version: python3.12, pypy3.10, python3.13t, perl5.36, node18
    """,
    re.VERBOSE,
)
"""Interpreters and shells: their arguments are a program (``python -c``, ``sh script``)."""

WRAPPERS = frozenset(
    {
        # run the rest of the line as a command
        *("env", "sudo", "doas", "su", "runuser", "sg", "pkexec", "xargs", "parallel"),
        *("eval", "exec", "command", "builtin", "source", ".", "nohup", "nice", "ionice"),
        *("chrt", "taskset", "numactl", "time", "timeout", "gtimeout", "watch", "stdbuf"),
        *("setsid", "setpriv", "chroot", "unshare", "nsenter", "flock", "strace", "ltrace"),
        *("valgrind", "script", "unbuffer", "rlwrap", "entr", "watchexec", "nodemon"),
        *("systemd-run", "firejail", "bwrap", "fakeroot", "proot", "xvfb-run", "hyperfine"),
        *("dbus-run-session", "catchsegv", "caffeinate", "torsocks", "proxychains"),
        *("proxychains4", "ssh", "sshpass", "screen", "tmux", "at", "batch", "nix-shell"),
        *("cross-env", "dotenv", "env-cmd", "concurrently", "direnv", "find", "fd", "fdfind"),
        # fetch a package named in the arguments and run it
        *("npx", "pnpx", "bunx", "uvx", "pipx"),
    }
)
"""Programs that run another command given in their arguments (``find`` by ``-exec``)."""

RUNNER_SUBCOMMANDS: Mapping[str, frozenset[str]] = {
    "npm": frozenset({"exec", "x", "explore", "init", "create"}),
    "pnpm": frozenset({"dlx", "exec", "create"}),
    "yarn": frozenset({"dlx", "exec", "node", "create"}),
    "uv": frozenset({"run", "tool"}),
    "poetry": frozenset({"run", "shell"}),
    "pipenv": frozenset({"run", "shell"}),
    "pdm": frozenset({"run"}),
    "hatch": frozenset({"run", "shell", "env"}),
    "rye": frozenset({"run"}),
    "pixi": frozenset({"run", "exec", "shell"}),
    "conda": frozenset({"run"}),
    "mamba": frozenset({"run"}),
    "micromamba": frozenset({"run"}),
    "go": frozenset({"run", "tool"}),
    "dotnet": frozenset({"exec", "tool"}),
    "gem": frozenset({"exec"}),
    "bundle": frozenset({"exec"}),
    "bundler": frozenset({"exec"}),
    "opam": frozenset({"exec"}),
    "stack": frozenset({"exec", "runghc", "runhaskell", "eval", "ghci", "repl", "script"}),
    "cabal": frozenset({"exec", "repl"}),
    "mix": frozenset({"run", "eval"}),
    "nix": frozenset({"run", "shell", "develop", "eval"}),
    "docker": frozenset({"run", "exec", "compose"}),
    "podman": frozenset({"run", "exec", "compose"}),
    "kubectl": frozenset({"exec", "run", "debug"}),
    "git": frozenset({"config", "submodule", "bisect"}),
}
"""Subcommands that run a command, a file or a package named in the arguments (``uv run X``,
``pnpm dlx X``, ``go run X.go``, ``git submodule foreach X``; ``git config`` sets programs git
runs later). Another subcommand of these programs may be offered (``uv sync``, ``git status``),
the program alone never (``git *`` would allow ``git config``)."""

INSTALLERS: Mapping[str, frozenset[str]] = {
    **{manager: frozenset({"install", "i", "add"}) for manager in ("npm", "pnpm", "yarn", "bun")},
    **{pip: frozenset({"install", "download", "wheel"}) for pip in ("pip", "pip3")},
    "uv": frozenset({"add", "pip"}),
    "poetry": frozenset({"add"}),
    "pdm": frozenset({"add"}),
    "cargo": frozenset({"install", "add"}),
    "go": frozenset({"install", "get"}),
    "gem": frozenset({"install"}),
    "composer": frozenset({"require", "install"}),
}
"""Subcommands that install the packages their arguments name, running those packages' build
or install scripts: only the exact command is offered (``npm install``, never ``npm install
…``, which would allow ``npm install ANY-PACKAGE``)."""

CODE_MODULES = frozenset(
    {"timeit", "pdb", "cprofile", "profile", "trace", "runpy", "code", "idlelib", "ipython"}
)
"""Python modules that run code given in their arguments (``python -m timeit CODE``)."""

PYTHON_FAMILY = frozenset({"python", "py", "pypy"})
"""Interpreters whose ``-m MODULE …`` runs a module by name: judged as the program MODULE."""

TEST_RUNNERS: Mapping[str, str] = {
    "pytest": "conftest.py and tests",
    "py.test": "conftest.py and tests",
    "unittest": "tests",
    "tox": "tox commands",
    "nox": "noxfile.py",
    "jest": "tests and jest config",
    "vitest": "tests and vite config",
    "mocha": "tests",
    "ava": "tests",
    "phpunit": "tests",
    "rspec": "specs",
    "behave": "steps",
    "ctest": "tests",
}
"""Test runners and what of the workspace they run. Their leading options only choose which
tests run and how (``pytest -q``), so their pattern is offered after an option too."""

BUILD_TOOLS: Mapping[str, str] = {
    "make": "Makefile",
    "gmake": "Makefile",
    "just": "justfile",
    "rake": "Rakefile",
    "invoke": "tasks.py",
    "task": "Taskfile",
    "ninja": "build.ninja",
    "cmake": "CMake files",
    "meson": "meson.build",
    "gradle": "Gradle build scripts",
    "mvn": "Maven build",
    "ant": "build.xml",
    "sbt": "sbt build",
    "bazel": "BUILD files",
    "gradlew": "Gradle build scripts",
    "mvnw": "Maven build",
}
"""Build tools and what of the workspace they run. A leading option can name another build
file (``make -f FILE``): after one, only the exact command is offered."""

_SCRIPTS = {"run": "package.json scripts", "install": "packages' install scripts"}
TOOLCHAIN_SUBCOMMANDS: Mapping[tuple[str, str], str] = {
    **{
        (manager, sub): _SCRIPTS[kind]
        for manager in ("npm", "pnpm", "yarn")
        for kind, subs in (
            ("run", ("run", "run-script", "test", "t", "start", "build")),
            ("install", ("install", "i", "ci", "add")),
        )
        for sub in subs
    },
    **{
        ("cargo", sub): "build scripts and tests"
        for sub in ("build", "b", "check", "c", "clippy", "test", "t", "bench", "run", "r")
    },
    ("go", "test"): "tests",
    ("go", "generate"): "go:generate commands",
    ("dotnet", "build"): "build and tests",
    ("dotnet", "test"): "build and tests",
    ("dotnet", "run"): "build and tests",
    ("mix", "test"): "tests",
    ("mix", "compile"): "build",
    ("swift", "build"): "Package.swift",
    ("swift", "test"): "Package.swift and tests",
}
"""Subcommands of package managers and toolchains that run the workspace's code."""

LINTERS = frozenset({"ruff", "mypy", "eslint", "tsc"})
"""Checkers offered a pattern (``ruff check *``): they read the workspace's files and settings."""

PATTERN_SUBCOMMANDS = frozenset(
    {
        *(key for key, code in TOOLCHAIN_SUBCOMMANDS.items() if code != _SCRIPTS["install"]),
        ("go", "build"),
        ("go", "vet"),
    }
)
"""Toolchain subcommands offered a pattern (``npm run *``, ``cargo test *``); never installs."""


def program_name(word: str) -> str:
    """A program word as compared here: its base name, lower case, no ``.exe``-like suffix."""
    return _SUFFIX.sub("", os.path.basename(word).lower())


def _family(word: str) -> str:
    """``word``'s program name without a version (``python3.12`` → ``python``)."""
    return re.sub(r"[-_]?\d[\d.]*[a-z]?$", "", program_name(word))


def python_module(words: tuple[str, ...]) -> bool:
    """Whether ``words`` are ``python -m MODULE …`` (any Python or PyPy, any version)."""
    return len(words) > 2 and words[1] == "-m" and _family(words[0]) in PYTHON_FAMILY


def runs_its_arguments(words: tuple[str, ...]) -> bool:
    """Whether the command's program runs code its arguments name (see the module).

    ``python -m MODULE …`` is judged as ``MODULE …`` (``python -m uv run X`` as ``uv run X``),
    and a module that runs code from its arguments counts (``python -m timeit CODE``).
    """
    if python_module(words):
        return runs_its_arguments(words[2:]) or program_name(words[2]) in CODE_MODULES
    name = program_name(words[0])
    if name in WRAPPERS or INTERPRETER.fullmatch(name):
        return True
    return len(words) > 1 and words[1] in RUNNER_SUBCOMMANDS.get(name, frozenset())


def installs_packages(words: tuple[str, ...]) -> bool:
    """Whether the command installs packages its arguments may name (``INSTALLERS``)."""
    if python_module(words):
        return installs_packages(words[2:])
    subcommands = INSTALLERS.get(program_name(words[0]), frozenset())
    return len(words) > 1 and words[1] in subcommands


def offers_pattern(words: tuple[str, ...]) -> bool:
    """Whether "always allow `X …`" may be offered for the command (the allow-list above)."""
    if python_module(words):
        return offers_pattern(words[2:])
    name = program_name(words[0])
    if len(words) > 1 and (name, words[1]) in PATTERN_SUBCOMMANDS:
        return True
    return name in TEST_RUNNERS or name in BUILD_TOOLS or name in LINTERS


def is_test_runner(words: tuple[str, ...]) -> bool:
    """Whether the command's program is a test runner (``pytest``, ``python -m pytest``)."""
    if python_module(words):
        return is_test_runner(words[2:])
    return program_name(words[0]) in TEST_RUNNERS


def workspace_code(words: tuple[str, ...]) -> str | None:
    """What of the workspace the command runs, e.g. ``conftest.py and tests``; None: unknown.

    A program given by a relative path (``./gradlew``, ``scripts/test.sh``) is itself a file
    of the workspace.
    """
    if python_module(words):
        return workspace_code(words[2:])
    program = words[0]
    if "/" in program and not program.startswith(("/", "~")):
        return program
    name = program_name(program)
    if len(words) > 1 and (name, words[1]) in TOOLCHAIN_SUBCOMMANDS:
        return TOOLCHAIN_SUBCOMMANDS[(name, words[1])]
    return TEST_RUNNERS.get(name) or BUILD_TOOLS.get(name)
