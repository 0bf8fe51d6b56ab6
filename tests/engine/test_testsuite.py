"""Which files are the tests, or decide how they run (``testsuite.is_test_file``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cadenza.engine.testsuite import is_test_file


@pytest.mark.parametrize(
    ("path", "judges"),
    [
        ("test_coins.py", True),
        ("coins_test.py", True),
        ("tests/helpers.py", True),
        ("pkg/test/data.json", True),
        ("src/__tests__/view.js", True),
        ("web/view.test.tsx", True),
        ("web/view.spec.js", True),
        ("server_test.go", True),
        ("conftest.py", True),
        ("pyproject.toml", True),
        ("package.json", True),
        ("jest.config.js", True),
        ("coins.py", False),
        ("testing.py", False),
        ("contest.py", False),
        ("web/test.js", False),
        ("latest/coins.py", False),
        # pytest's own settings, pytest 9's among them.
        ("pytest.toml", True),
        (".pytest.toml", True),
        (".pytest.ini", True),
        # Other runners' settings.
        ("tox.toml", True),
        ("noxfile.py", True),
        ("go.mod", True),
        (".npmrc", True),
        ("vite.config.ts", True),
        ("vitest.config.mts", True),
        ("web/.mocharc.yml", True),
        ("babel.config.js", True),
        (".babelrc", True),
        ("jester.js", False),
        ("public/vite.svg", False),
    ],
)
def test_what_counts_as_the_tests(path: str, judges: bool) -> None:
    assert is_test_file(Path(path)) is judges
