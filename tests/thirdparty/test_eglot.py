"""Emacs + eglot (Debian ``emacs-nox`` 28, ``elpa-eglot`` 1.9) and lsp-mode drive ``cadenza serve``.

Each scenario is an elisp script under ``emacs/`` run in ``emacs --batch``: eglot starts
``cadenza serve`` itself, the test's session is started with ``eglot-execute-command``, and
the script writes what Emacs saw (buffer text, undo, session updates, the questions eglot
showed) as JSON. The model is the scripted server in its own process. eglot declares
``workspace.workspaceEdit.documentChanges`` but no ``resourceOperations``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import Reply, call, text
from tests.thirdparty.scripted_model import ScriptedModel

HERE = Path(__file__).parent / "emacs"
EMACS_S = 120.0
"""The bound of one scenario (eglot's own waits are 40 s each)."""


def _eglot_missing() -> str | None:
    if shutil.which("emacs") is None:
        return "emacs is not installed: run scripts/thirdparty.sh (Debian emacs-nox)"
    if not list(Path("/usr/share/emacs/site-lisp/elpa").glob("eglot-*")):
        return "eglot is not installed: run scripts/thirdparty.sh (Debian elpa-eglot)"
    return None


pytestmark = pytest.mark.skipif(_eglot_missing() is not None, reason=_eglot_missing() or "")


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """What one scenario left: Emacs's findings, the workspace and the model's requests."""

    findings: dict[str, Any]
    workspace: Path
    requests: list[dict[str, Any]]
    seconds: float

    def updates(self) -> list[dict[str, Any]]:
        return list(self.findings["updates"])

    def kinds(self) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates() if u["sessionUpdate"] != "model_reply"]


def run_scenario(
    tmp_path: Path, script: str, replies: list[Reply], *, answers: list[str] | None = None
) -> Scenario:
    """Run ``emacs/<script>`` against a model answering ``replies``; fail on a non-zero exit."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = tmp_path / "result.json"
    home = tmp_path / "home"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CADENZA_", "OLLAMA_", "XDG_"))
    }
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        (home / name.lower()).mkdir(parents=True)
        env[name] = str(home / name.lower())
    env["HOME"] = str(home)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
    env["CADENZA_TEST_WS"] = str(workspace)
    env["CADENZA_TEST_RESULT"] = str(result)
    env["CADENZA_TEST_ANSWERS"] = "|".join(answers or [])
    command = ["emacs", "--batch", "-Q", "-l", str(HERE / "cadenza-test.el")]
    command += ["-l", str(HERE / script)]
    with ScriptedModel(tmp_path / "model", replies) as model:
        env["OPENAI_BASE_URL"] = model.base_url
        env["OPENAI_API_KEY"] = "test-key"
        began = time.monotonic()
        # A session of its own: on a timeout the group (Emacs and its cadenza serve) is killed.
        process = subprocess.Popen(
            command,
            env=env,
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            output, _ = process.communicate(timeout=EMACS_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            pytest.fail(f"{script} did not end within {EMACS_S} s:\n{output[-3000:]}")
        seconds = time.monotonic() - began
        print(f"eglot {script}: {seconds:.1f} s")
        assert process.returncode == 0, output[-4000:]
        findings = json.loads(result.read_text(encoding="utf-8"))
        return Scenario(
            findings=findings, workspace=workspace, requests=model.requests(), seconds=seconds
        )


def test_edit_lands_in_the_unsaved_buffer_and_undoes(tmp_path: Path) -> None:
    edit = {"path": "a.py", "old_string": "alpha", "new_string": "beta"}
    scenario = run_scenario(
        tmp_path, "edit-unsaved.el", [call("edit_file", edit, "e1"), text("renamed")]
    )
    found = scenario.findings
    assert found["stop"] == "end_turn"
    assert found["buffer"] == "name = 'beta'\n"
    assert found["modified"] is True  # an unsaved buffer: the person saves
    assert (scenario.workspace / "a.py").read_text() == "name = 'alpha'\n"
    assert found["after_undo"] == "name = 'alpha'\n"
    [result] = found["results"]
    assert result["status"] == "completed"
    assert "edited a.py" in result["text"]
    kinds = scenario.kinds()
    assert kinds.index("tool_call") < kinds.index("tool_call_update") < kinds.index("session_end")


def test_create_file_without_resource_operations(tmp_path: Path) -> None:
    """eglot 1.9 takes no ``CreateFile``: Cadenza creates the file on disk and says so."""
    content = "def made() -> int:\n    return 1\n"
    create = call("create_file", {"path": "new/made.py", "content": content}, "c1")
    scenario = run_scenario(tmp_path, "create-file.el", [create, text("created")])
    assert scenario.findings["stop"] == "end_turn"
    assert (scenario.workspace / "new" / "made.py").read_text() == content
    [result] = scenario.findings["results"]
    assert result["status"] == "completed"
    assert "created new/made.py" in result["text"]
    assert "on disk" in result["text"]
    tool = next(m for m in scenario.requests[-1]["messages"] if m["role"] == "tool")
    assert "on disk" in tool["content"]


def test_undo_session_after_a_file_created_on_disk(tmp_path: Path) -> None:
    """``cadenza.undoSession`` in eglot: the buffer edit goes back through
    ``workspace/applyEdit``, the file created on disk is removed on disk (eglot takes no
    ``DeleteFile`` either); before, the undo was refused outright."""
    script = [
        call("create_file", {"path": "new/made.py", "content": "made = 1\n"}, "c1"),
        call("edit_file", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}, "e1"),
        text("done"),
    ]
    scenario = run_scenario(tmp_path, "undo-created.el", script)
    found = scenario.findings
    assert found["stop"] == "end_turn"
    assert found["created"] is True
    assert found["buffer"] == "x = 2\n"
    assert found["undo_error"] is False, found["undo_error"]
    assert sorted(found["undo_actions"]) == ["removed", "restored"], json.dumps(found)
    assert found["exists_after_undo"] is False
    assert not (scenario.workspace / "new" / "made.py").exists()
    assert found["buffer_after_undo"] == "x = 1\n"
    assert (scenario.workspace / "a.py").read_text() == "x = 1\n"


@pytest.mark.parametrize(
    ("choice", "told"), [("No", "The person answered: No"), ("Skip", "declined")]
)
def test_question_through_show_message_request(tmp_path: Path, choice: str, told: str) -> None:
    ask = call("ask_user", {"question": "Use tabs?"}, "q1")
    scenario = run_scenario(tmp_path, "question.el", [ask, text("ok")], answers=[choice])
    assert scenario.findings["stop"] == "end_turn"
    [question] = scenario.findings["questions"]
    assert "Use tabs?" in question["prompt"]
    assert question["choices"] == ["Yes", "No", "Skip"]
    tool = next(m for m in scenario.requests[-1]["messages"] if m["role"] == "tool")
    assert told in tool["content"]


def test_cancel_a_long_command(tmp_path: Path) -> None:
    command = {"command": "echo $$ > started.txt; exec sleep 60"}
    scenario = run_scenario(
        tmp_path,
        "cancel.el",
        [call("run_command", command, "c1"), text("never asked for")],
        answers=["Allow once"],
    )
    found = scenario.findings
    assert found["cancel"] == {"cancelled": True}
    assert found["stop"] == "cancelled"
    assert found["cancel_seconds"] < 15
    [permission] = found["questions"]
    assert "run_command" in permission["prompt"]
    assert "Allow once" in permission["choices"]
    pid = int((scenario.workspace / "started.txt").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the sleep was killed with the session
    assert len(scenario.requests) == 1  # the model was not asked again


def _lsp_mode_missing() -> str | None:
    if shutil.which("emacs") is None:
        return "emacs is not installed: run scripts/thirdparty.sh (Debian emacs-nox)"
    if not list(Path("/usr/share/emacs/site-lisp/elpa").glob("lsp-mode-*")):
        return "lsp-mode is not installed: scripts/thirdparty.sh tries Debian elpa-lsp-mode"
    return None


@pytest.mark.skipif(_lsp_mode_missing() is not None, reason=_lsp_mode_missing() or "")
def test_lsp_mode_edits_the_unsaved_buffer_and_creates_a_file(tmp_path: Path) -> None:
    """Emacs + lsp-mode 8.0 (Debian ``elpa-lsp-mode``), which takes ``CreateFile``."""
    edit = {"path": "a.py", "old_string": "alpha", "new_string": "beta"}
    create = {"path": "made.py", "content": "m = 1\n"}
    scenario = run_scenario(
        tmp_path,
        "lsp-mode-edit.el",
        [call("edit_file", edit, "e1"), call("create_file", create, "c1"), text("ok")],
    )
    found = scenario.findings
    assert found["stop"] == "end_turn"
    assert found["buffer"] == "name = 'beta'\n"
    assert found["modified"] is True
    assert (scenario.workspace / "a.py").read_text() == "name = 'alpha'\n"
    assert found["statuses"] == ["completed", "completed"]
    assert found["made_buffer"] == "m = 1\n"  # lsp-mode created it and holds its text
    assert (scenario.workspace / "made.py").exists()
    tool = [m for m in scenario.requests[-1]["messages"] if m["role"] == "tool"]
    assert "on disk" not in tool[1]["content"]  # the editor did it, not Cadenza
