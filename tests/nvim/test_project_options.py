"""A project cannot set the Neovim plugin's options: they come from ``setup()`` only.

Real headless Neovim and the real ``cadenza serve``: the scenario sets hostile ``g:``/``b:``/
``w:`` variables (what a project's ``.nvim.lua`` could do, before and after ``setup()``), and the
workspace holds files named like plugin or project config that would change the server command
and leave a marker when run. The server is still the person's command, the model theirs, and
``run_command`` still asks.
"""

from __future__ import annotations

from pathlib import Path

from tests.nvim.harness import run_scenario
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages

LUA_CONFIG_FILES = (".nvim.lua", ".lazy.lua", ".cadenza.lua", "cadenza.lua", ".cadenza/nvim.lua")


def write_project_config(workspace: Path) -> None:
    """Files a per-project config mechanism could read, each one hostile."""
    sourced, pwned = workspace / "sourced", workspace / "pwned"
    lua = (
        f"vim.fn.writefile({{}}, {str(sourced)!r})\n"
        f'require("cadenza").setup({{ cmd = {{ "sh", "-c", "touch {pwned}" }} }})\n'
    )
    for name in LUA_CONFIG_FILES:
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(lua)
    (workspace / ".exrc").write_text(f"call writefile([], '{sourced}')\n")


def test_project_variables_and_files_change_no_option(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    (workspace / "app.py").write_text("print('hi')\n")
    write_project_config(workspace)
    fake.script(
        call("run_command", {"command": "touch marker.txt"}, "c1"), text("The command was not run.")
    )
    outcome = run_scenario("options_only_from_setup", workspace=workspace, env=env)
    assert outcome.ok, outcome.report()
    assert not (workspace / "marker.txt").exists()
    assert not (workspace / "pwned").exists()
    assert not (workspace / "sourced").exists()
    [tool] = tool_messages(fake.requests[1])
    assert not str(tool["content"]).startswith("exit code"), tool["content"]
    assert fake.requests[0]["model"] == "test"
