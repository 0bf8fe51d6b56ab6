"""What a command's program does with its arguments: the kinds a suggested rule is judged by."""

from __future__ import annotations

import shlex

import pytest

from cadenza.command_kinds import program_name, runs_its_arguments, workspace_code


def words(command: str) -> tuple[str, ...]:
    return tuple(shlex.split(command))


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("pytest -q", "conftest.py and tests"),
        ("python -m pytest -q", "conftest.py and tests"),
        ("python3.12 -m pytest", "conftest.py and tests"),
        ("tox -e py311", "tox commands"),
        ("nox -s lint", "noxfile.py"),
        ("npm test", "package.json scripts"),
        ("npm run build", "package.json scripts"),
        ("pnpm run lint", "package.json scripts"),
        ("npm install", "packages' install scripts"),
        ("make", "Makefile"),
        ("make test", "Makefile"),
        ("cargo test", "build scripts and tests"),
        ("go test ./...", "tests"),
        ("./gradlew test", "./gradlew"),
        ("scripts/check.sh", "scripts/check.sh"),
    ],
)
def test_test_runners_and_build_tools_name_the_workspace_code_they_run(
    command: str, code: str
) -> None:
    assert workspace_code(words(command)) == code


@pytest.mark.parametrize(
    "command", ["ls -la", "git status", "touch x", "go vet ./...", "/usr/bin/make-ish"]
)
def test_other_programs_run_no_workspace_code_known_here(command: str) -> None:
    assert workspace_code(words(command)) is None


@pytest.mark.parametrize(
    "program",
    [
        "python",
        "python3",
        "python3.11",
        "python3.13t",
        "pypy3.10",
        "perl5.36",
        "ruby3.2",
        "php8.2",
        "lua5.4",
        "tclsh8.6",
        "node18",
        "ksh93",
        "PWSH.EXE",
        "/opt/bin/bash",
    ],
)
def test_interpreters_are_known_by_their_family_whatever_the_version(program: str) -> None:
    assert runs_its_arguments((program, "x"))


@pytest.mark.parametrize("program", ["pytest", "make", "ls", "ssh-keygen", "shellcheck", "pythonx"])
def test_other_names_are_not_interpreters(program: str) -> None:
    assert not runs_its_arguments((program, "x"))


def test_names_compare_by_base_name_without_a_windows_suffix() -> None:
    assert program_name("/usr/bin/Python3.EXE") == "python3"
    assert program_name("C:/Tools/node.cmd") == "node"
