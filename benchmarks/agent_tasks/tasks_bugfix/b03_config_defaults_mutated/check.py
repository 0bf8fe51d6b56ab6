"""Checker of b03_config_defaults_mutated."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "appconfig/merge.py")
    parse_python(workspace, "appconfig/loader.py")
    run_original_tests(workspace, Path(__file__).parent, expect=5)
    run_python(
        workspace,
        "from appconfig import DEFAULTS, load\n"
        "from appconfig.merge import layered\n"
        "s = load('workers = 3\\n[server]\\nport = 1\\n', {'APP_SERVER_HOST': 'h'})\n"
        "assert s['server'] == {'host': 'h', 'port': 1} and s['workers'] == 3, s\n"
        "assert DEFAULTS == {'log_level': 'info', 'workers': 2,"
        " 'server': {'host': '127.0.0.1', 'port': 8000}}, DEFAULTS\n"
        "assert load()['server']['port'] == 8000\n"
        "assert layered({'a': {'b': 1}, 'c': 1}, {'a': {'d': 2}, 'c': 5})"
        " == {'a': {'b': 1, 'd': 2}, 'c': 5}\n",
    )
    return ok("loading leaves the defaults as they were; the tests and hidden cases pass")
