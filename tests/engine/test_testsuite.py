"""Which files are the tests, or decide how they run (``testsuite.is_test_file``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cadenza.engine.testsuite import is_test_file

SITE = ".venv/lib/python3.12/site-packages"


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
        # A module imported instead of the runner's, its requirements' or the standard library's.
        ("pytest.py", True),
        ("pytest/__init__.py", True),
        ("_pytest/__init__.py", True),
        ("pluggy.py", True),
        ("iniconfig.py", True),
        ("packaging/__init__.py", True),
        ("py.py", True),
        ("pygments.py", True),
        ("sitecustomize.py", True),
        ("usercustomize.py", True),
        ("argparse.py", True),
        ("json/__init__.py", True),
        ("inspect.cpython-312-x86_64-linux-gnu.so", True),
        ("evil-1.0.dist-info/entry_points.txt", True),
        ("evil.egg-info/entry_points.txt", True),
        (f"{SITE}/evil.pth", True),
        (f"{SITE}/_pytest/main.py", True),
        ("node_modules/jest/bin/jest.js", True),
        # Not on sys.path first, or not what an import of the name finds.
        ("pkg/json.py", False),
        ("code/solution.py", False),  # a folder without __init__ hides no module
        ("pytest_helpers.py", False),
        ("argparse.md", False),
        ("weights/model.pth", False),  # Python reads .pth files in site-packages only
    ],
)
def test_what_counts_as_the_tests(path: str, judges: bool) -> None:
    assert is_test_file(Path(path)) is judges
