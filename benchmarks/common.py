"""Shared pieces of the benchmarks: the fake model process, the machine, stats, results."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"


@dataclass
class FakeModel:
    """The instant model server process (``fake_model.py``)."""

    process: subprocess.Popen[str]
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.base}/stats", timeout=30) as reply:
            data: dict[str, Any] = json.loads(reply.read())
        return data

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.base}/reset", data=b"{}", method="POST")
        with urllib.request.urlopen(request, timeout=30):
            pass

    def watch(self, pid: int) -> None:
        """Read ``pid``'s CPU time at each model request (``stats()["server_cpu_s"]``)."""
        body = json.dumps({"pid": pid}).encode()
        request = urllib.request.Request(f"{self.base}/watch", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=30):
            pass


@contextmanager
def fake_model() -> Iterator[FakeModel]:
    """Start ``fake_model.py`` in its own process; stop it at the end."""
    process = subprocess.Popen(
        [sys.executable, str(HERE / "fake_model.py")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("PORT "):
        process.kill()
        raise RuntimeError(f"fake model did not start: {line!r}")
    try:
        yield FakeModel(process=process, port=int(line.split()[1]))
    finally:
        process.terminate()
        process.wait(10)


def server_env(base_url: str, home: Path) -> dict[str, str]:
    """The server's environment: the fake model, no user config, state in ``home``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CADENZA_", "OLLAMA_", "XDG_", "ANTHROPIC_"))
    }
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        folder = home / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env["OPENAI_BASE_URL"] = base_url
    env["OPENAI_API_KEY"] = "bench-key"
    return env


def percentiles_ms(values_ns: Sequence[int]) -> dict[str, float]:
    """count, median, p90, p99, max (ms) of nanosecond samples."""
    if not values_ns:
        return {"n": 0, "median": float("nan"), "p90": float("nan"), "p99": float("nan")}
    ms = sorted(v / 1e6 for v in values_ns)

    def pick(q: float) -> float:
        return ms[min(len(ms) - 1, int(q * len(ms)))]

    return {
        "n": len(ms),
        "median": round(statistics.median(ms), 3),
        "p90": round(pick(0.90), 3),
        "p99": round(pick(0.99), 3),
        "max": round(ms[-1], 3),
    }


def rss_mb(pid: int) -> dict[str, float]:
    """Current and peak resident memory of ``pid`` (MB), from ``/proc``."""
    out = {"rss_mb": float("nan"), "peak_rss_mb": float("nan")}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                out["rss_mb"] = round(int(line.split()[1]) / 1024, 1)
            elif line.startswith("VmHWM:"):
                out["peak_rss_mb"] = round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds used so far by ``pid`` (``/proc/PID/stat``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        )
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def machine() -> dict[str, Any]:
    """What the numbers were measured on, and how loaded it was."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }


def save(name: str, results: dict[str, Any], started: float, folder: Path | None = None) -> Path:
    """Write ``results`` with machine, command, date and commit to ``results/NAME-DATE.json``."""
    folder = folder or RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    record = {
        "benchmark": name,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": now.isoformat(timespec="seconds"),
        "commit": _commit(),
        "machine": machine(),
        "wall_s": round(time.monotonic() - started, 1),
        "results": results,
    }
    path = folder / f"{name}-{now.strftime('%Y%m%dT%H%M%SZ')}.json"
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def server_from(tree: Path, face: str = "serve") -> tuple[str, ...]:
    """The server command running the ``cadenza`` package found in ``tree`` (a source tree)."""
    code = (
        f"import sys; sys.path.insert(0, {str(tree)!r}); from cadenza.cli import main; "
        f"sys.argv = ['cadenza', {face!r}, '--log-level', 'WARNING']; sys.exit(main())"
    )
    return (sys.executable, "-c", code)
