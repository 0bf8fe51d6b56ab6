"""Choosing Cadenza's Python language server by measurement (docs/intel.md).

For each server and each multi-file workspace (examples/inventory, the rename tasks of
benchmarks/agent_tasks, a generated package with a module-attribute use), through Cadenza's own
client (``cadenza.intel.HostedCodeIntel``): the time from start to the first references answer,
the resident memory of the server's whole process group, whether references and rename find
exactly the whole-word uses of the name (the names are unique in these workspaces, so that is
the truth), and, after two bad edits of report.py (an undefined name, a call with one argument
too many), whether diagnostics report each as an error on its line. Install size: the
distribution and its requirements as installed.

    python -m benchmarks.intel_servers --bin /tmp/lsbench/bin [--servers ty,pylsp] [--repeat 2]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio

from benchmarks.common import REPO, save, table
from cadenza.intel.hosted import HostedCodeIntel
from cadenza.intel.servers import PYTHON_SERVERS, ServerSpec

TASKS = REPO / "benchmarks" / "agent_tasks" / "tasks"


@dataclass(frozen=True)
class Case:
    """A workspace and the symbol to look up: file, 0-based line, name."""

    name: str
    source: Path | None
    file: str
    line: int
    symbol: str


PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/inventory.py": "def calc_total(items):\n    return sum(i * 2 for i in items)\n",
    "pkg/report.py": (
        "from pkg.inventory import calc_total\n\n\n"
        "def report(items):\n    total = calc_total(items)\n    return f'total: {total}'\n"
    ),
    "main.py": (
        "from pkg import inventory\nfrom pkg.report import report\n\n"
        "print(inventory.calc_total([]), report([]))\n"
    ),
}

CASES = (
    Case("inventory", REPO / "examples" / "inventory", "inventory.py", 12, "calc_total"),
    Case(
        "t01 function", TASKS / "t01_rename_function" / "workspace", "geometry.py", 0, "calc_area"
    ),
    Case(
        "t12 constant",
        TASKS / "t12_rename_constant_two_files" / "workspace",
        "config.py",
        0,
        "DEFAULT_TIMEOUT",
    ),
    Case(
        "t19 method", TASKS / "t19_rename_method_two_files" / "workspace", "cart.py", 4, "addItem"
    ),
    Case("package attribute", None, "pkg/inventory.py", 0, "calc_total"),
)

PACKAGES = {
    "basedpyright-langserver": "basedpyright",
    "pyrefly": "pyrefly",
    "ty": "ty",
    "jedi-language-server": "jedi-language-server",
    "pylsp": "python-lsp-server",
}


def _workspace(case: Case, into: Path) -> Path:
    root = into / "ws"
    if case.source is not None:
        shutil.copytree(case.source, root)
    else:
        for name, text in PACKAGE.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
    return root.resolve()


def _truth(root: Path, symbol: str) -> set[tuple[str, int, int]]:
    """Every whole-word use of ``symbol`` in the workspace's Python files (0-based)."""
    found = set()
    pattern = re.compile(rf"\b{re.escape(symbol)}\b")
    for path in root.rglob("*.py"):
        for number, line in enumerate(path.read_text().splitlines()):
            for match in pattern.finditer(line):
                found.add((str(path.relative_to(root)), number, match.start()))
    return found


def _group_rss_mb(pgid: int) -> float:
    """Resident memory of every process in the group ``pgid`` (MB)."""
    total = 0
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:
                total += int(fields[21]) * 4096
        except (OSError, IndexError, ValueError):
            continue
    return round(total / 2**20, 1)


async def _measure(spec: ServerSpec, program: str, case: Case) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = _workspace(case, Path(tmp))
        intel = HostedCodeIntel(
            root, lambda p: p.read_text() if p.is_file() else None, {"python": (spec, program)}
        )
        truth = _truth(root, case.symbol)
        out: dict[str, Any] = {"case": case.name}
        started = time.monotonic()
        try:
            refs = await intel.references(root / case.file, case.line, _column(case, root))
            out["first_answer_s"] = round(time.monotonic() - started, 2)
            got = {(str(r.path.relative_to(root)), r.line, r.character) for r in refs}
            out["references_ok"] = got == truth
            lang = next(iter(intel._languages.values()))
            assert lang.connection is not None and lang.connection._pgid is not None
            out["rss_mb"] = _group_rss_mb(lang.connection._pgid)
            rename = await intel.rename(
                root / case.file, case.line, _column(case, root), "renamed_name"
            )
            expected = {
                p: re.sub(rf"\b{case.symbol}\b", "renamed_name", p.read_text())
                for p in root.rglob("*.py")
                if case.symbol in p.read_text()
            }
            out["rename_ok"] = rename.texts == expected
            if case.name == "inventory":
                out.update(await _diagnostics(intel, root))
        except Exception as exc:  # a server failing a case is a result, not a crash
            out["error"] = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            await intel.aclose()
        return out


def _column(case: Case, root: Path) -> int:
    line = (root / case.file).read_text().splitlines()[case.line]
    return line.index(case.symbol)


async def _diagnostics(intel: HostedCodeIntel, root: Path) -> dict[str, bool]:
    """After bad edits of report.py: is each reported as an error on its line?"""
    report = root / "report.py"
    text = report.read_text()
    report.write_text(text.replace("calc_total(items)", "calc_totl(items)"))
    undefined = await intel.diagnostics([report])
    report.write_text(text.replace("calc_total(items)", "calc_total(items, 2)"))
    arity = await intel.diagnostics([report])
    line = next(i for i, t in enumerate(text.splitlines()) if "calc_total(items)" in t)
    return {
        "undefined_name": any(d.severity == "error" and d.line == line for d in undefined),
        "wrong_arity": any(d.severity == "error" and d.line == line for d in arity),
    }


def _install_mb(dist: str, seen: set[str] | None = None) -> float:
    """Installed size of ``dist`` and its requirements (each counted once)."""
    seen = set() if seen is None else seen
    key = dist.lower().replace("_", "-")
    if key in seen:
        return 0.0
    seen.add(key)
    try:
        d = metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return 0.0
    size = sum(f.size or 0 for f in d.files or [])
    for req in d.requires or []:
        if "extra ==" in req:
            continue
        name = re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0]
        size += _install_mb(name, seen) * 2**20
    return round(size / 2**20, 1)


async def _main(args: argparse.Namespace) -> None:
    started = time.monotonic()
    wanted = args.servers.split(",") if args.servers else [s.name for s in PYTHON_SERVERS]
    results: dict[str, Any] = {}
    for spec in PYTHON_SERVERS:
        if spec.name not in wanted:
            continue
        program = str(Path(args.bin) / spec.name)
        runs = [await _measure(spec, program, case) for _ in range(args.repeat) for case in CASES]
        results[spec.name] = {"runs": runs, "install_mb": _install_mb(PACKAGES[spec.name])}
        print(spec.name, runs, flush=True)
    save("intel-servers", results, started)
    rows = []
    for name, data in results.items():
        runs = data["runs"]
        firsts = [r["first_answer_s"] for r in runs if "first_answer_s" in r]
        rss = [r["rss_mb"] for r in runs if "rss_mb" in r]
        diag = [r for r in runs if "undefined_name" in r]
        rows.append(
            [
                name,
                f"{statistics.median(firsts):.2f}" if firsts else "-",
                f"{statistics.median(rss):.0f}" if rss else "-",
                f"{sum(bool(r.get('references_ok')) for r in runs)}/{len(runs)}",
                f"{sum(bool(r.get('rename_ok')) for r in runs)}/{len(runs)}",
                f"{sum(r['undefined_name'] for r in diag)}/{len(diag)}",
                f"{sum(r['wrong_arity'] for r in diag)}/{len(diag)}",
                data["install_mb"],
                sum("error" in r for r in runs),
            ]
        )
    print(
        table(
            [
                "server",
                "first answer s (median)",
                "RSS MB",
                "references exact",
                "rename exact",
                "undefined name",
                "wrong arity",
                "install MB",
                "failed runs",
            ],
            rows,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", default=str(Path(__import__("sys").executable).parent))
    parser.add_argument("--servers", default="")
    parser.add_argument("--repeat", type=int, default=1)
    anyio.run(_main, parser.parse_args())


if __name__ == "__main__":
    main()
