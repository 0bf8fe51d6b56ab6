"""``HostedCodeIntel`` with the real default Python language server over real pipes.

References, definition, rename and diagnostics on a two-file workspace; a server that hangs or
is killed in the middle of a request is an ``IntelError`` and the next request starts it
again; closing ends the server's whole process group.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from cadenza.intel import connection, hosted
from cadenza.intel.hosted import HostedCodeIntel
from cadenza.intel.servers import find_servers
from cadenza.procgroups import live_groups
from cadenza.tools.intel import IntelError

INVENTORY = "def calc_total(items):\n    return sum(items)\n"
REPORT = "from inventory import calc_total\n\nprint(calc_total([1, 2]))\n"

pytestmark = pytest.mark.skipif(
    "python" not in find_servers(), reason="no Python language server installed"
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "inventory.py").write_text(INVENTORY)
    (tmp_path / "report.py").write_text(REPORT)
    return tmp_path.resolve()


@pytest.fixture
async def intel(ws: Path) -> AsyncIterator[HostedCodeIntel]:
    source = HostedCodeIntel(ws, lambda p: p.read_text() if p.is_file() else None)
    try:
        yield source
    finally:
        await source.aclose()


def _pgid(intel: HostedCodeIntel) -> int:
    lang = intel._languages["python"]
    assert lang.connection is not None and lang.connection._pgid is not None
    return lang.connection._pgid


async def _stop(pid: int) -> None:
    """SIGSTOP the server's group and wait until every thread of the server has stopped.

    ``killpg`` returns once the signal is queued: the kernel wakes one thread to take it, and
    the others (the server's stdin reader, its workers) run on until that thread is scheduled
    and stops them, so on a loaded machine a request written meanwhile can still be answered.
    ``waitpid(WUNTRACED)`` reports the stop once the last thread has stopped. (The default
    Python server is one process, the group's leader.)
    """
    os.killpg(pid, signal.SIGSTOP)
    with anyio.fail_after(30):
        while True:
            waited, status = os.waitpid(pid, os.WUNTRACED | os.WNOHANG)
            if waited == pid:
                assert os.WIFSTOPPED(status), f"the server ended instead: status {status}"
                return
            await anyio.sleep(0.01)


async def test_references_definition_rename_diagnostics(ws: Path, intel: HostedCodeIntel) -> None:
    refs = await intel.references(ws / "inventory.py", 0, 4)
    assert {(r.path.name, r.line, r.character) for r in refs} == {
        ("inventory.py", 0, 4),
        ("report.py", 0, 22),
        ("report.py", 2, 6),
    }
    defs = await intel.definition(ws / "report.py", 2, 6)
    assert [(d.path.name, d.line, d.character) for d in defs] == [("inventory.py", 0, 4)]
    rename = await intel.rename(ws / "report.py", 2, 6, "compute_total")
    assert rename.texts == {
        ws / "inventory.py": INVENTORY.replace("calc_total", "compute_total"),
        ws / "report.py": REPORT.replace("calc_total", "compute_total"),
    }
    assert (ws / "report.py").read_text() == REPORT  # nothing applied
    (ws / "report.py").write_text(REPORT.replace("calc_total([1, 2])", "calc_totl([1, 2])"))
    diags = await intel.diagnostics([ws / "report.py"])
    errors = [d for d in diags if d.severity == "error"]
    assert [d.line for d in errors] == [2] and "calc_totl" in errors[0].message


async def test_a_hung_server_times_out_and_a_killed_one_fails_then_restarts(
    ws: Path, intel: HostedCodeIntel, monkeypatch: pytest.MonkeyPatch
) -> None:
    await intel.references(ws / "inventory.py", 0, 4)
    pgid = _pgid(intel)
    monkeypatch.setattr(connection, "REQUEST_TIMEOUT_S", 2.0)
    await _stop(pgid)  # hangs: no answer
    with pytest.raises(IntelError, match="did not answer within 2 s"):
        await intel.definition(ws / "report.py", 2, 6)
    # From here on a loaded machine must not decide: the kill, not the bound, ends the pending
    # request, and the restarted server's cold start (its first diagnostics) takes its time.
    monkeypatch.setattr(connection, "REQUEST_TIMEOUT_S", 30.0)
    pending = asyncio.ensure_future(intel.references(ws / "inventory.py", 0, 4))
    await asyncio.sleep(0.5)
    assert not pending.done()
    os.killpg(pgid, signal.SIGKILL)  # killed in the middle of the request
    with pytest.raises(IntelError, match="stopped"):
        await pending
    refs = await intel.references(ws / "inventory.py", 0, 4)  # started again
    assert len(refs) == 3 and _pgid(intel) != pgid


async def test_an_answer_after_the_bound_is_dropped_quietly(
    ws: Path,
    intel: HostedCodeIntel,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await intel.references(ws / "inventory.py", 0, 4)
    pgid = _pgid(intel)
    monkeypatch.setattr(connection, "REQUEST_TIMEOUT_S", 1.0)
    await _stop(pgid)
    with pytest.raises(IntelError, match="did not answer within 1 s"):
        await intel.definition(ws / "report.py", 2, 6)
    os.killpg(pgid, signal.SIGCONT)  # it answers the request given up on, late
    monkeypatch.setattr(connection, "REQUEST_TIMEOUT_S", 30.0)
    defs = await intel.definition(ws / "report.py", 2, 6)
    assert [(d.path.name, d.line, d.character) for d in defs] == [("inventory.py", 0, 4)]
    assert _pgid(intel) == pgid  # the same server: a late answer is no failure
    lang = intel._languages["python"]
    assert lang.connection is not None
    with anyio.fail_after(30):  # the late answer has arrived
        while lang.connection.client.protocol._request_futures:
            await anyio.sleep(0.05)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_close_ends_the_process_group(ws: Path, intel: HostedCodeIntel) -> None:
    await intel.definition(ws / "report.py", 2, 6)
    pgid = _pgid(intel)
    assert pgid in live_groups()
    await intel.aclose()
    assert pgid not in live_groups()
    with pytest.raises(ProcessLookupError):
        os.killpg(pgid, 0)


async def test_a_server_that_keeps_failing_is_left_off(ws: Path, tmp_path: Path) -> None:
    spec, _ = find_servers()["python"]
    broken = tmp_path / "broken-server"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    intel = HostedCodeIntel(ws, lambda p: p.read_text(), {"python": (spec, str(broken))})
    try:
        for _ in range(hosted.MAX_STARTS):
            with pytest.raises(IntelError):
                await intel.references(ws / "inventory.py", 0, 4)
        assert intel.features(ws / "inventory.py") == frozenset()
        with pytest.raises(IntelError, match="left off"):
            await intel.references(ws / "inventory.py", 0, 4)
    finally:
        await intel.aclose()
