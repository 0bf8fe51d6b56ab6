"""Checker of c05_return_type_change_breaks_callers."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_python


def check(workspace: Path) -> Verdict:
    for name in ("settings.py", "server.py", "client.py"):
        parse_python(workspace, name)
    run_python(
        workspace,
        "from settings import read_address\n"
        "from server import bind_message\n"
        "from client import host_of, is_default_port\n"
        "got = read_address('db.local:5432')\n"
        "assert got == {'host': 'db.local', 'port': 5432}, got\n"
        "assert read_address('web') == {'host': 'web', 'port': 80}\n"
        "bound = bind_message('0.0.0.0:8080')\n"
        "assert bound == 'listening on 0.0.0.0 port 8080', bound\n"
        "assert host_of('example.org:443') == 'example.org', host_of('example.org:443')\n"
        "assert is_default_port('example.org') and not is_default_port('example.org:8000')\n",
    )
    return ok("read_address returns a dict; server and client read it by name")
