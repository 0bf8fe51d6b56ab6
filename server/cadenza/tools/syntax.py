"""The syntax guard (``LoopSettings.syntax_guard``): an edit that breaks a file's syntax is refused.

As SWE-agent's edit linting does (Yang et al., "SWE-agent: Agent-Computer Interfaces", 2024): a
change that turns a file that parsed into one that does not is not written; the model reads
where the syntax broke and makes the edit again. Measured with the small local models
(docs/lab/local-model-log.md). Python is compiled in process (by the server's Python: newer syntax
reads as an error), shell (``bash -n``, scripts for sh/bash only) and JavaScript (``node
--check``, not with JSX) by their own tools when installed. A file that did not parse before is
not guarded (the task may be to fix it), and the same change made again is let through: a
checker can be wrong (a newer Python, a shell option), the model gets one warning, not a wall.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

CHECK_TIMEOUT_S = 10.0
MAX_CHECKED_CHARS = 1_000_000
"""Larger texts are not checked (compiling 5 MB of Python took seconds)."""
SHELLS = ("sh", "bash", "dash")
"""Shebang interpreters ``bash -n`` can judge; a zsh or fish script is not checked."""
SHELL_SUFFIXES = frozenset({".sh", ".bash"})
JS_SUFFIXES = frozenset({".js", ".mjs", ".cjs"})


def syntax_error(path: Path, text: str) -> str | None:
    """Why ``text`` (the content of ``path``) does not parse, or None when it does.

    None too when no checker applies: an unknown suffix, no ``bash`` or ``node``, a timeout.
    """
    suffix = path.suffix.lower()
    if len(text) > MAX_CHECKED_CHARS:
        return None
    if suffix == ".py":
        try:
            compile(text, path.name, "exec", dont_inherit=True)
        except SyntaxError as exc:
            return f"line {exc.lineno}: {exc.msg}"
        except (ValueError, RecursionError, MemoryError):  # NUL bytes, absurd nesting
            return None
        return None
    if suffix in SHELL_SUFFIXES and _plain_shell(text) and (bash := shutil.which("bash")):
        return _external([bash, "-n"], text, stdin=True)
    # JSX in a .js file is valid for its toolchain, not for node --check.
    jsx = "/>" in text or "</" in text
    if suffix in JS_SUFFIXES and not jsx and (node := shutil.which("node")):
        with tempfile.TemporaryDirectory(prefix="cadenza-syntax-") as folder:
            copy = Path(folder) / f"check{suffix}"
            try:
                copy.write_text(text, encoding="utf-8")
            except UnicodeEncodeError:
                return None
            return _external([node, "--check", str(copy)], "", stdin=False)
    return None


def _plain_shell(text: str) -> bool:
    """Whether ``bash -n`` can judge the script: no shebang, or one naming sh/bash/dash."""
    if not text.startswith("#!"):
        return True
    first = text.split("\n", 1)[0].split()
    interpreter = first[-1] if first and first[0].endswith("env") else first[0]
    return interpreter.rsplit("/", 1)[-1] in SHELLS if first else True


def _external(command: list[str], text: str, *, stdin: bool) -> str | None:
    try:
        done = subprocess.run(
            command,
            input=text if stdin else None,
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT_S,
            check=False,
        )
    except (OSError, ValueError, subprocess.TimeoutExpired):  # ValueError: lone surrogates
        return None
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return " / ".join(lines[:3])[:500] or f"exit status {done.returncode}"


def breaks_syntax(path: Path, old_text: str, new_text: str) -> str | None:
    """The syntax error ``new_text`` introduces, or None (also when ``old_text`` had one)."""
    error = syntax_error(path, new_text)
    if error is None or syntax_error(path, old_text) is not None:
        return None
    return error
