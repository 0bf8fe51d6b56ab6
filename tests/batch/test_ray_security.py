"""``cadenza batch``'s own Ray cluster: loopback only, and every call must carry its token.

A real ``cadenza batch`` subprocess starts its local cluster; while its session is held by
the scripted model, every socket that the batch's processes (the driver, Ray's GCS, raylet,
workers and agents, the session's server) listen on is read from ``/proc/net`` and must be
on a loopback address. The GCS answers a gRPC call only with the cluster's token.
"""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.batch.conftest import ModelServer, cadenza_batch, make_repo
from tests.batch.test_ray_batch import wait_for

pytest.importorskip("ray", reason="the batch extra is not installed: pip install -e '.[batch]'")
pytestmark = pytest.mark.batch


def descendants(root: int) -> dict[int, str]:
    """``{pid: command name}`` of ``root`` and every process below it."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :]
        parents[int(proc.name)] = int(rest.split()[1])
        names[int(proc.name)] = name
    tree = {root}
    grew = True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return {pid: names.get(pid, "?") for pid in tree}


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    # /proc/net/tcp6: four 32-bit words, each in host (little-endian) order.
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def listening(pids: dict[int, str]) -> list[tuple[str, str, int]]:
    """``(process name, address, port)`` of every TCP listener and bound UDP socket of ``pids``."""
    owners: dict[str, str] = {}
    for pid, name in pids.items():
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = str(fd.readlink()) if fd.is_symlink() else ""
                if target.startswith("socket:["):
                    owners[target[8:-1]] = name
        except OSError:
            continue
    found = []
    for table, state in (("tcp", "0A"), ("tcp6", "0A"), ("udp", "07"), ("udp6", "07")):
        lines = Path(f"/proc/net/{table}").read_text().splitlines()[1:]
        for line in lines:
            fields = line.split()
            if fields[3] != state or fields[9] not in owners:
                continue
            address, port = fields[1].split(":")
            found.append((owners[fields[9]], _address(address), int(port, 16)))
    return found


def environ(pid: int) -> dict[str, str]:
    entries = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0")
    return dict(entry.split("=", 1) for entry in entries if "=" in entry)


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


GCS_CALL = """
import sys
from ray._raylet import GcsClient
try:
    GcsClient(address=sys.argv[1]).internal_kv_get(b"session_name", b"session", timeout=10)
except Exception as exc:
    sys.exit(f"{type(exc).__name__}: {exc}")
"""


def gcs_answers(port: int, token: str | None, home: Path) -> bool:
    """Whether the GCS on ``port`` answers a call made with ``token`` (None: no token).

    The call is Ray's own GCS client, in a process whose environment holds only ``token``
    (and a home folder without ``~/.ray/auth_token``).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["HOME"] = str(home)
    if token is not None:
        env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token)
    done = subprocess.run(
        [sys.executable, "-c", GCS_CALL, f"127.0.0.1:{port}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 or "Authentication token is missing or incorrect" in done.stderr
    return done.returncode == 0


@pytest.mark.usefixtures("ctrl_c_reaches_children")
def test_the_local_cluster_listens_on_loopback_only_and_wants_its_token(
    tmp_path: Path, batch_env: dict[str, str], model: ModelServer
) -> None:
    repo = make_repo(tmp_path / "repos", "guarded")
    tasks = tmp_path / "tasks.jsonl"
    task = {"id": "held", "repo": str(repo), "task": "batch-hold: sec 120 batch-write: s.txt x"}
    tasks.write_text(json.dumps(task) + "\n", encoding="utf-8")
    driver = subprocess.Popen(
        cadenza_batch(str(tasks), "--out", str(tmp_path / "out")),
        env=batch_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: model.stats()["held"].get("sec") == 1, 120, "the session to run")
        processes = descendants(driver.pid)
        sockets = listening(processes)
        names = {name for name, _, _ in sockets}
        assert {"gcs_server", "raylet"} <= names, sockets
        assert [s for s in sockets if not is_loopback(s[1])] == []
        [gcs] = [pid for pid, name in processes.items() if name == "gcs_server"]
        token = environ(gcs)["RAY_AUTH_TOKEN"]
        # The session's server, and so the model's commands, never see the cluster's token.
        [server] = [pid for pid in processes if b"cadenza\0serve" in cmdline(pid)]
        assert "RAY_AUTH_TOKEN" not in environ(server)
        [port] = {port for name, _, port in sockets if name == "gcs_server"}
        home = tmp_path / "home"
        home.mkdir()
        assert gcs_answers(port, token, home)
        assert not gcs_answers(port, None, home)
        assert not gcs_answers(port, "a-guess", home)
        driver.send_signal(signal.SIGINT)
        driver.communicate(timeout=300)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
    assert driver.returncode == 130
