"""``cadenza run --output json`` as a CI bot sees it: what a fresh user found wrong.

Through the real CLI process, server and scripted model server:

- ``files`` lists what a ``run_command`` changed or created (with diffs), in a git repository
  (``git status`` finds them) and in a plain folder (a snapshot of the tree), merged with the
  edits the client wrote; caches such as ``__pycache__`` stay out;
- SIGTERM cancels the session and still prints the object (``cancelled``, status 143);
- a session that ends in an error carries the error's text in ``error``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, Reply, call, text

RUN_TIMEOUT_S = 90
CALC = "def add(a, b):\n    return a - b\n"
# A command that rewrites a file, creates one, deletes one and leaves a cache behind.
SCRIPT = (
    "import pathlib, os\n"
    "p = pathlib.Path('calc.py')\n"
    "p.write_text(p.read_text().replace('return a + b', 'return b + a'))\n"
    "pathlib.Path('gen').mkdir()\n"
    "pathlib.Path('gen/table.txt').write_text('one\\ntwo\\n')\n"
    "os.remove('old.txt')\n"
    "pathlib.Path('__pycache__').mkdir()\n"
    "pathlib.Path('__pycache__/x.pyc').write_bytes(b'\\0\\1')\n"
)


@pytest.fixture
def fake() -> FakeOpenAI:
    with FakeOpenAI() as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def env(tmp_path: Path, fake: FakeOpenAI) -> dict[str, str]:
    values = {k: v for k, v in os.environ.items() if not k.startswith(("CADENZA_", "XDG_"))}
    values.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="x", NO_COLOR="1")
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        values[name] = str(folder)
    return values


def make_project(root: Path, *, git: bool) -> Path:
    root.mkdir()
    (root / "calc.py").write_text(CALC, encoding="utf-8")
    (root / "old.txt").write_text("stale\n", encoding="utf-8")
    (root / "tool.py").write_text(SCRIPT, encoding="utf-8")
    if git:
        (root / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
            subprocess.run(
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True
            )
    return root


def command(project: Path, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "cadenza",
        "run",
        "--workspace",
        str(project),
        "--model",
        "openai/test",
        *args,
    ]


def run(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(project, *args),
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("git", [True, False], ids=["git", "plain"])
def test_files_include_what_a_command_changed(
    tmp_path: Path, env: dict[str, str], fake: FakeOpenAI, git: bool
) -> None:
    project = make_project(tmp_path / "project", git=git)
    fake.script(
        call("edit_file", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}, "c1"),
        call("run_command", {"command": f"{sys.executable} tool.py"}, "c2"),
        text("Done."),
    )
    done = run(project, env, "--allow", "run_command", "--output", "json", "fix add")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    files = {f["path"]: f for f in report["files"]}
    assert set(files) == {"calc.py", "gen/table.txt", "old.txt"}, files
    # The edit, then the command's rewrite of the same file: start to end in one diff.
    calc = files["calc.py"]
    assert calc["kind"] == "modified"
    assert "-    return a - b\n+    return b + a\n" in calc["diff"]
    assert (calc["added"], calc["removed"]) == (1, 1)
    table = files["gen/table.txt"]
    assert table["kind"] == "created"
    assert "+one\n+two\n" in table["diff"] and table["added"] == 2
    old = files["old.txt"]
    assert old["kind"] == "deleted" and "-stale\n" in old["diff"]
    # tool.py itself did not change; neither it nor the cache is listed.
    assert not any("__pycache__" in path for path in files)


def test_a_command_that_puts_a_file_back_leaves_it_out(
    tmp_path: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    project = make_project(tmp_path / "project", git=True)
    fake.script(
        call("edit_file", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}, "c1"),
        call("run_command", {"command": "git checkout -- calc.py"}, "c2"),
        text("Put it back."),
    )
    done = run(project, env, "--allow", "run_command", "--output", "json", "try")
    report = json.loads(done.stdout)
    assert report["files"] == [], report["files"]


def test_sigterm_cancels_the_session_and_prints_the_json(
    tmp_path: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    project = make_project(tmp_path / "project", git=False)
    fake.script(
        call("edit_file", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}, "c1"),
        Reply(content="never sent", delay_s=60),
    )
    process = subprocess.Popen(
        command(project, "--output", "json", "fix add"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while len(fake.requests) < 2:  # the second request waits on the held reply
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the model was never asked twice"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143, err
    report = json.loads(out)
    assert report["stop_reason"] == "cancelled"
    assert report["exit_status"] == 143
    assert report["session_id"]
    [change] = report["files"]  # the edit made before the signal is reported
    assert change["path"] == "calc.py" and "+    return a + b\n" in change["diff"]


def test_a_session_ending_in_an_error_carries_its_text(
    tmp_path: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    project = make_project(tmp_path / "project", git=False)
    fake.script(Reply(status=401))
    done = run(project, env, "--output", "json", "fix add")
    report = json.loads(done.stdout)
    assert done.returncode == report["exit_status"] == 1
    assert report["stop_reason"] == "error"
    assert report["error"], report
    assert report["error"] == report["message"]


# -- the merge of the client's edits with the disk (no processes) ------------------------------


def test_reconcile_keeps_renames_and_follows_the_disk(tmp_path: Path) -> None:
    from cadenza.client.edits import FileChange
    from cadenza.client.snapshot import reconcile

    (tmp_path / "new.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "later.py").write_text("changed by a command\n", encoding="utf-8")
    edits = [
        FileChange(
            path="new.py", kind="renamed", before="x = 1\n", after="x = 1\n", old_path="o.py"
        ),
        FileChange(path="later.py", kind="modified", before="a\n", after="b\n"),
        FileChange(path="back.py", kind="modified", before="a\n", after="b\n"),
    ]
    (tmp_path / "back.py").write_text("a\n", encoding="utf-8")  # a command put it back
    disk = [
        FileChange(path="o.py", kind="deleted", before="x = 1\n", after=None),
        FileChange(path="new.py", kind="created", before=None, after="x = 1\n"),
        FileChange(path="gen.txt", kind="created", before=None, after="g\n"),
    ]
    merged = {c.path: c for c in reconcile(tmp_path, edits, disk)}
    assert set(merged) == {"new.py", "later.py", "gen.txt"}
    assert merged["new.py"].kind == "renamed" and merged["new.py"].old_path == "o.py"
    assert merged["later.py"].after == "changed by a command\n"
    assert merged["later.py"].before == "a\n"


def test_reconcile_follows_the_disk_only_where_the_sessions_commands_wrote(
    tmp_path: Path,
) -> None:
    from cadenza.client.edits import FileChange
    from cadenza.client.snapshot import reconcile

    (tmp_path / "mine.py").write_text("another session's text\n", encoding="utf-8")
    (tmp_path / "formatted.py").write_text("b  # formatted\n", encoding="utf-8")
    edits = [
        FileChange(path="mine.py", kind="modified", before="a\n", after="b\n"),
        FileChange(path="formatted.py", kind="modified", before="a\n", after="b\n"),
    ]
    merged = {c.path: c for c in reconcile(tmp_path, edits, [], rewritten={"formatted.py"})}
    assert merged["mine.py"].after == "b\n"  # what this session wrote, not the later write
    assert merged["formatted.py"].after == "b  # formatted\n"  # its own command's


def test_only_the_files_the_session_changed_are_compared(tmp_path: Path) -> None:
    from cadenza.client.snapshot import DiskSnapshot

    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("b\n", encoding="utf-8")
    start = DiskSnapshot.take(tmp_path)
    (tmp_path / "a.txt").write_text("A\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("B\n", encoding="utf-8")
    (tmp_path / "c.txt").write_text("c\n", encoding="utf-8")
    assert [c.path for c in start.changes()] == ["a.txt", "b.txt", "c.txt"]
    assert [c.path for c in start.changes(only={"a.txt", "c.txt"})] == ["a.txt", "c.txt"]


async def test_the_tracker_names_the_files_the_servers_diffs_name() -> None:
    from cadenza.client.outcome import RunTracker
    from cadenza.schema.updates import ToolCall, ToolCallUpdate, ToolDiff

    tracker = RunTracker()
    tracker.begin("s1")
    tracker.see(ToolCall(tool_call_id="c1", name="edit_file", kind="edit"))
    tracker.see(ToolCall(tool_call_id="c2", name="run_command", kind="execute"))
    tracker.see(ToolCallUpdate(tool_call_id="c1", content=[ToolDiff(path="/w/a.py")]))
    tracker.see(ToolCallUpdate(tool_call_id="c2", content=[ToolDiff(path="/w/gen.txt")]))
    assert tracker.touched == {"/w/a.py", "/w/gen.txt"}
    assert tracker.rewritten == {"/w/gen.txt"}
