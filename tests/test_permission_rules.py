"""The permission rule matcher: word by word, ``*`` last, shell syntax never allowed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cadenza.permission_rules import (
    Rule,
    RuleError,
    RuleSet,
    allows,
    command_words,
    denies,
    parse_rule,
    simple_commands,
    suggest_rule,
)


def run(command: str) -> dict[str, object]:
    return {"command": command}


def allowed(rule: str, command: str) -> bool:
    return allows(parse_rule(rule), "run_command", run(command))


# -- reading rules ----------------------------------------------------------------------


def test_parse_tool_and_pattern() -> None:
    rule = parse_rule("run_command:pytest *")
    assert rule == Rule(tool="run_command", words=("pytest",), any_arguments=True)
    assert rule.text == "run_command:pytest *"
    assert rule.shown == "pytest …"


def test_parse_tool_alone_and_exact_pattern() -> None:
    assert parse_rule("delete_file") == Rule(tool="delete_file")
    exact = parse_rule("run_command:npm run build")
    assert exact.words == ("npm", "run", "build") and not exact.any_arguments
    assert exact.text == "run_command:npm run build"


def test_parse_quoted_words_round_trip() -> None:
    rule = parse_rule("run_command:pytest -k 'a b' *")
    assert rule.words == ("pytest", "-k", "a b")
    assert parse_rule(rule.text) == rule


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "TOOL or TOOL:PATTERN"),
        ("run command", "TOOL or TOOL:PATTERN"),
        ("run_command:", "empty"),
        ("run_command:   ", "empty"),
        ("run_command:*", "name the program"),
        ("run_command:* pytest", "last word"),
        ("run_command:pytest * -q", "last word"),
        ("run_command:pytest 'open", "quotation"),
        ("run_command:pytest; rm *", "no shell syntax"),
        ("run_command:pytest && rm *", "no shell syntax"),
        ("run_command:echo $(id) *", "no shell syntax"),
        ("delete_file:*.pyc", "only run_command"),
        ("run_command:ls *.py", "no file pattern"),
        ("run_command:py* *", "no file pattern"),
        ("run_command:pytest tests/test_?.py", "no file pattern"),
        ("run_command:rm -rf [a-z]*", "no file pattern"),
        ("run_command:git push --force* *", "no file pattern"),
    ],
)
def test_parse_refuses_with_a_reason(text: str, why: str) -> None:
    with pytest.raises(RuleError, match=why.replace("(", r"\(")):
        parse_rule(text)


# -- allow rules ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "pytest",
        "pytest -q",
        "pytest tests/a.py -k 'x or y'",
        "  pytest\t-q  ",
        "pytest '*'",
        "python3 -m pytest -q --tb=short",  # the form of Cadenza's own test runs
        "python -m pytest",
        ".venv/bin/python -m pytest -q",  # the workspace's own environment
    ],
)
def test_star_allows_any_further_arguments(command: str) -> None:
    assert allowed("run_command:pytest *", command)


def test_a_python_in_a_folder_of_the_path_runs_a_test_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An activated virtual environment: Cadenza runs the tests with its Python's full path.
    monkeypatch.setenv("PATH", f"{tmp_path / 'venv' / 'bin'}{os.pathsep}/usr/bin")
    python = tmp_path / "venv" / "bin" / "python"
    assert allowed("run_command:pytest *", f"{python} -m pytest -q")
    assert not allowed("run_command:pytest *", f"{tmp_path / 'other' / 'python'} -m pytest -q")
    # Another module by a path is not the module: the program may be any file.
    assert not allowed("run_command:json.tool *", f"{python} -m json.tool x")
    assert not allowed("run_command:json.tool *", ".venv/bin/python -m json.tool x")


@pytest.mark.parametrize(
    "command",
    [
        "pytestx",  # never a substring
        "pytest-watch",
        "./pytest",
        "/tmp/evil/pytest -q",
        "/tmp/evil/python -m pytest",
        "../python -m pytest",
        "foo/../../x/python -m pytest",
        "./../x/python -m pytest",
        "~/evil/python -m pytest",
        "~-/python -m pytest",
        "/usr/bin/x/../python -m pytest",
        "python -m pytest_evil",
        "python -c pytest",
        "echo pytest",
        "PYTEST_ADDOPTS=-x pytest",
        "",
        "   ",
    ],
)
def test_star_matches_the_program_word_exactly(command: str) -> None:
    assert not allowed("run_command:pytest *", command)


@pytest.mark.parametrize(
    "command",
    [
        "pytest; rm -rf ~",
        "pytest;rm -rf ~",
        "pytest && rm -rf ~",
        "pytest || rm -rf ~",
        "pytest | sh",
        "pytest & rm -rf ~",
        "pytest `rm -rf ~`",
        "pytest $(rm -rf ~)",
        "pytest $HOME",
        "pytest ${IFS}x",
        "pytest > ~/.bashrc",
        "pytest < /etc/passwd",
        "pytest 2>&1",
        "pytest <(curl evil)",
        "pytest\nrm -rf ~",
        "pytest\rrm -rf ~",
        "pytest \\\nrm",
        "(pytest)",
        "pytest -k 'a;b'",  # quoted, harmless to a shell, still asked: no shell reading here
        "pytest \x00",
        "pytest \x1b[2J",
    ],
)
def test_shell_syntax_never_matches_an_allow_rule(command: str) -> None:
    assert not allowed("run_command:pytest *", command)
    assert command_words(command) is None


@pytest.mark.parametrize(
    "command",
    ["pytest *", "tar cf out.tar *", "pytest tests/test_?.py", "pytest [a-z]*", "ls -- *"],
)
def test_a_word_the_shell_expands_into_file_names_never_matches_an_allow_rule(
    command: str,
) -> None:
    # A repository can name a file like an option (`--checkpoint-action=exec=sh x`).
    assert not allowed("run_command:pytest *", command.replace("tar cf out.tar", "pytest"))
    assert not allowed("run_command:tar *", command)


@pytest.mark.parametrize(
    "command", ["pytest '*'", 'pytest "tests/*"', "pytest tests/\\*", "pytest -k 'a[1]'"]
)
def test_quoted_glob_characters_are_plain_text(command: str) -> None:
    assert allowed("run_command:pytest *", command)


def test_unbalanced_quote_never_matches() -> None:
    assert not allowed("run_command:pytest *", "pytest 'open")


def test_leading_subcommand_words_must_all_fit() -> None:
    assert allowed("run_command:npm run *", "npm run test")
    assert allowed("run_command:npm run *", "npm run")
    assert not allowed("run_command:npm run *", "npm install evil")
    assert not allowed("run_command:npm run *", "npm runx")
    assert not allowed("run_command:npm run *", "npm")


def test_pattern_without_star_is_the_exact_command() -> None:
    assert allowed("run_command:make test", "make test")
    assert allowed("run_command:make test", "make  'test'")  # the shell's words, not its text
    assert not allowed("run_command:make test", "make test -j8")
    assert not allowed("run_command:make test", "make")


def test_tool_rule_covers_every_call_of_that_tool_only() -> None:
    rule = parse_rule("run_command")
    assert allows(rule, "run_command", run("anything; at all"))
    assert not allows(rule, "delete_file", {"path": "x"})
    assert not allows(parse_rule("run_command:pytest *"), "delete_file", run("pytest"))


def test_missing_or_non_string_argument_is_not_allowed() -> None:
    rule = parse_rule("run_command:pytest *")
    assert not allows(rule, "run_command", {})
    assert not allows(rule, "run_command", {"command": ["pytest"]})


# -- deny rules -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "make && rm -rf build",
        "make; rm -rf build",
        "true || rm x",
        "echo $(rm x)",
        "echo `rm x`",
        "cat x | rm y",
        "(rm x)",
        "echo hi\nrm x",
        "/bin/rm -rf x",
        "rm 'unbalanced",
    ],
)
def test_deny_matches_any_simple_command(command: str) -> None:
    assert denies(parse_rule("run_command:rm *"), "run_command", run(command))


@pytest.mark.parametrize("command", ["echo rm", "rmdir x", "make -C rm", "grep -r rm ."])
def test_deny_is_word_exact_too(command: str) -> None:
    assert not denies(parse_rule("run_command:rm *"), "run_command", run(command))


def test_simple_commands_split_at_shell_syntax() -> None:
    assert simple_commands("a 1 && b 'x y' | c; d > out") == [
        ("a", "1"),
        ("b", "x y"),
        ("c",),
        ("d",),
        ("out",),
    ]


def test_deny_wins_over_allow() -> None:
    rules = RuleSet.parse(allow=["run_command:git *"], deny=["run_command:git push *"])
    assert rules.decide("run_command", run("git status")) == "allow"
    assert rules.decide("run_command", run("git push origin main")) == "deny"
    assert rules.decide("run_command", run("ls")) is None
    everything = RuleSet.parse(allow=["run_command"], deny=["run_command:rm *"])
    assert everything.decide("run_command", run("ls && rm -rf ~")) == "deny"


def test_rule_sets_combine() -> None:
    combined = RuleSet.parse(allow=["run_command:pytest *"]) | RuleSet.parse(deny=["delete_file"])
    assert combined.decide("run_command", run("pytest")) == "allow"
    assert combined.decide("delete_file", {"path": "x"}) == "deny"


# -- the pattern an "always allow in this workspace" answer remembers ----------------------


@pytest.mark.parametrize(
    ("command", "pattern"),
    [
        ("pytest", "run_command:pytest *"),
        ("pytest -q tests", "run_command:pytest *"),
        ("npm run test", "run_command:npm run *"),
        ("cargo test --all", "run_command:cargo test *"),
        ("cargo build --release", "run_command:cargo build *"),
        ("make lint:fix", "run_command:make lint:fix *"),
        ("make", "run_command:make *"),
        ("python -m pytest -q", "run_command:python -m pytest *"),
        ("python3 -m mypy .", "run_command:python3 -m mypy *"),
        ("python3.12 -m pytest -x", "run_command:python3.12 -m pytest *"),
        ("tox -e py311", "run_command:tox *"),
        ("ruff check server", "run_command:ruff check *"),
        ("go test ./...", "run_command:go test *"),
        ("go vet ./...", "run_command:go vet *"),
        ("yarn test --watch=false", "run_command:yarn test *"),
        ("pnpm run lint", "run_command:pnpm run *"),
        ("dotnet test", "run_command:dotnet test *"),
        ("./gradlew test", "run_command:./gradlew test *"),
        ("jest --ci", "run_command:jest *"),
        ("vitest run", "run_command:vitest run *"),
    ],
)
def test_suggested_rule_is_program_subcommand_star(command: str, pattern: str) -> None:
    rule = suggest_rule("run_command", run(command))
    assert rule is not None and rule.text == pattern
    assert allows(rule, "run_command", run(command))


@pytest.mark.parametrize(
    "command",
    [
        "pytest; rm -rf ~",
        "pytest && true",
        "bash -c 'rm -rf ~'",
        "sh script.sh",
        "python -c 'import os'",
        "python script.py",
        "sudo make install",
        "env X=1 pytest",
        "X=1 pytest",
        "xargs rm",
        "/usr/bin/env pytest",
        "ls *",
        "",
        # interpreters and shells, by name family and any version
        "python3.11 script.py",
        "python3.12 -c 'import os'",
        "pypy3 x.py",
        "pypy3.10 -m timeit 'x'",
        "ipython",
        "ksh -c 'id'",
        "pwsh -Command x",
        "/usr/bin/Python3.EXE x.py",
        "busybox sh -c id",
        "node x.js",
        "node18 --test",
        "deno run x.ts",
        "bun x.ts",
        "perl -e 1",
        "perl5.36 x.pl",
        "ruby -e 1",
        "awk 'BEGIN{system(1)}'",
        "sed 's/x/id/e' f",
        # wrappers that run the rest as a command
        "stdbuf -oL pytest",
        "setsid pytest",
        "timeout 5 pytest",
        "nice pytest",
        "nohup pytest",
        "watch pytest",
        "time pytest",
        "command pytest",
        "exec pytest",
        "eval pytest",
        "find . -name x -exec rm {} +",
        "npx cowsay",
        "bunx cowsay",
        "uvx ruff",
        # runner subcommands
        "uv run pytest",
        "pnpm dlx cowsay",
        "yarn dlx cowsay",
        "npm exec cowsay",
        "go run main.go",
        "poetry run pytest",
        "docker run alpine",
        "git config core.fsmonitor x",
        "python -m uv run x",
        "python -m timeit '1'",
        # globs the shell expands
        "rm -f *.pyc",
        "pytest tests/test_?.py",
    ],
)
def test_no_suggestion_for_launchers_and_shell_syntax(command: str) -> None:
    assert suggest_rule("run_command", run(command)) is None


@pytest.mark.parametrize(
    "command",
    [
        "git -c core.pager=x log",
        "git --no-pager log",
        "make -f other.mk",
        "make --eval=x",
        "npm --prefix sub test",
        "ls -la",
        "git",
        "docker",
        "npm install",
        "npm install left-pad",
        "pip install -r requirements.txt",
        "python -m pip install x",
        "cargo install ripgrep",
        # not a known test runner, build tool or linter: its options may name a program
        "git status --short",
        "git log --oneline",
        "git grep -O x",
        "git rebase -x id main",
        "git difftool -x id",
        "git fetch --upload-pack=id origin",
        "touch marker.txt",
        "ls src/",
        "python -m pip list",
        "uv sync --all-extras",
        "tar -cf x.tar a",
        "rg pattern src",
        "zip -r x.zip a",
        "sort -o out in",
        "rsync -a a b",
        "sqlite3 db.sqlite",
        "man ls",
        "yarn lint",
        "cargo --config x test",
    ],
)
def test_only_the_exact_command_when_the_program_alone_would_allow_more(command: str) -> None:
    rule = suggest_rule("run_command", run(command))
    assert rule is not None and not rule.any_arguments
    assert rule.words == command_words(command)
    assert allows(rule, "run_command", run(command))
    assert not allows(rule, "run_command", run(command + " more"))


def test_a_suggested_rule_reads_back_as_the_same_rule() -> None:
    for command in ["pytest -k 'a b'", "make -f 'my file.mk'", "git status"]:
        rule = suggest_rule("run_command", run(command))
        assert rule is not None and parse_rule(rule.text) == rule


def test_no_suggestion_for_other_tools() -> None:
    assert suggest_rule("delete_file", {"path": "x"}) is None
