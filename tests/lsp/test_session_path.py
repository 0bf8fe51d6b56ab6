"""One LSP session runs the files docs/architecture.md lists for it, and no module beyond its lists.

A real ``cadenza serve`` (under ``tests/support/traced_serve.py``: a tracer that notes every
Cadenza module whose functions run) talks to a real client over pipes; a scripted model edits a
file. From ``cadenza.startSession`` to the server's exit (the ``workspace/applyEdit`` answered,
the tool result back to the model, the session over, the server shut down) the test collects
the modules in which code ran and compares them with the doc's section "One LSP session, file
by file": every file of its table ran, and every module that ran is in the table or in its list
of helpers. A module that joins the path fails here until the doc names it; the table may hold
at most ``MAX_PATH`` files.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from tests.lsp.harness import capabilities, server_env, start_harness, stop_harness
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="needs SIGUSR1")

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
TRACER = ROOT / "tests" / "support" / "traced_serve.py"
SECTION = "## One LSP session, file by file"
MAX_PATH = 15
"""The most files a reader follows through one session."""
MARK_WAIT_S = 15.0


def section() -> str:
    """The doc's section on one LSP session."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end != -1 else len(text)]


def path_files(doc: str) -> list[str]:
    """The table's files in order (row 9's first name: the provider the test model uses)."""
    rows = re.findall(r"^\| (\d+) \| `([^`]+)`", doc, flags=re.MULTILINE)
    assert [int(n) for n, _ in rows] == list(range(1, len(rows) + 1)), "rows numbered 1, 2..."
    return [name for _, name in rows]


def helper_files(doc: str) -> list[str]:
    """The helpers' list: one bullet per package folder (``engine/``), then its files' names."""
    block = doc[doc.index("Helpers that code on this path also runs") :]
    block = block[: block.index("\n\n", block.index("\n- "))]
    helpers: list[str] = []
    for bullet in block.split("\n- ")[1:]:
        names = re.findall(r"`([^`]+)`", bullet)
        folder = names.pop(0) if names and names[0].endswith("/") else ""
        helpers.extend(folder + name for name in names)
    return helpers


def stated_count(doc: str) -> int:
    """The number of modules the doc says the session ran code in."""
    found = re.search(r"code ran in (\d+) modules", " ".join(doc.split()))
    assert found is not None, "the doc states how many modules ran"
    return int(found.group(1))


async def wait_for(path: Path) -> None:
    async with asyncio.timeout(MARK_WAIT_S):
        while not path.exists():
            await asyncio.sleep(0.02)


async def modules_of_one_session(fake: FakeOpenAI, workspace: Path, tmp_path: Path) -> set[str]:
    """The modules that ran code from ``startSession`` to the server's exit."""
    out = tmp_path / "trace"
    out.mkdir()
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    harness, _ = await start_harness(
        root=workspace,
        env=server_env(fake.base_url, tmp_path / "home"),
        caps=capabilities(),
        launcher=[sys.executable, str(TRACER), str(out)],
    )
    try:
        os.kill(int((out / "pid").read_text()), signal.SIGUSR1)  # start-up ends here
        await wait_for(out / "1.json")
        edit = {"path": "a.py", "old_string": "y = 2", "new_string": "y = 20"}
        fake.script(call("edit_file", edit, "c1"), text("done"))

        _, end = await harness.run("make y 20")

        assert end["stopReason"] == "end_turn"
        assert len(harness.edit_requests) == 1  # the edit came as workspace/applyEdit
        assert harness.text_of(workspace / "a.py") == "x = 1\ny = 20\n"
        [tool] = tool_messages(fake.requests[1])  # its answer went back to the model
        assert tool["content"] == "edited a.py: 1 replacement(s)"
    finally:
        await stop_harness(harness)
    await wait_for(out / "2.json")
    return set(json.loads((out / "2.json").read_text(encoding="utf-8")))


def test_the_doc_lists_at_most_the_path_length() -> None:
    doc = section()
    files = path_files(doc)
    assert len(files) <= MAX_PATH, (
        f"one session's path lists {len(files)} files, more than {MAX_PATH}: merge modules that "
        "only serve one another, or move a step a reader need not open to the helpers"
    )
    assert f"A reader follows these {len(files)} files" in " ".join(doc.split())
    assert not set(files) & set(helper_files(doc)), "a file is both on the path and a helper"


async def test_one_session_runs_the_listed_files_and_nothing_unlisted(
    fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    doc = section()
    path, helpers = path_files(doc), helper_files(doc)

    ran = await modules_of_one_session(fake, workspace, tmp_path)

    assert not [f for f in path if f not in ran], (
        f"files of the path in docs/architecture.md where no code ran: "
        f"{[f for f in path if f not in ran]}"
    )
    unlisted = sorted(ran - set(path) - set(helpers))
    assert not unlisted, (
        f"code of one LSP session ran in {unlisted}, which docs/architecture.md does not list: "
        "add each to the path's table (at most 15 files) or to its helpers"
    )
    idle = sorted(set(helpers) - ran)
    assert not idle, f"helpers in docs/architecture.md where no code ran: {idle}; remove them"
    assert stated_count(doc) == len(ran), (
        f"code ran in {len(ran)} modules; docs/architecture.md says {stated_count(doc)}"
    )
