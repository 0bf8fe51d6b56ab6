"""Protected paths: every tool's change to one asks the person, every time, naming the file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cadenza.engine.events import PermissionDecided
from cadenza.engine.permissions import PermissionAnswer, PermissionGate, PermissionStore
from cadenza.engine.session import Session, SessionSettings
from cadenza.messages import ToolMessage
from cadenza.tools.protected import protected_reason
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply

ALLOW_ALWAYS = PermissionAnswer(outcome="selected", option="allow_always")
REJECT = PermissionAnswer(outcome="selected", option="reject_once")
DISMISSED = PermissionAnswer(outcome="cancelled")


@pytest.mark.parametrize(
    "name",
    [
        ".vscode/settings.json",
        ".VSCode/settings.json",
        ".vscode./tasks.json",
        "./.vscode/../.vscode/settings.json",
        "sub/pkg/.vscode/settings.json",
        ".cadenza/commands/fix.md",
        "cadenza.toml",
        "Cadenza.TOML",
        ".git/hooks/pre-commit",
        ".GIT/config",
        ".github/workflows/ci.yml",
        ".GitHub/Workflows/ci.yml",
        ".gitlab-ci.yml",
        ".envrc",
        ".gitattributes",
        ".claude/settings.json",
        ".cursor/mcp.json",
        ".idea/workspace.xml",
        ".zed/settings.json",
        ".continue/config.yaml",
        ".mcp.json",
        "project.code-workspace",
        ".pre-commit-config.yaml",
        "Jenkinsfile",
        ".\uff56\uff53\uff43\uff4f\uff44\uff45/settings.json",  # fullwidth: NFKC .vscode
        # A home folder opened as the workspace:
        ".bashrc",
        ".ssh/authorized_keys",
        ".config/nvim/init.lua",
        ".local/bin/git",
        ".gitconfig",
        # Editors, CI, package managers and credentials that run code or hold secrets:
        ".devcontainer.json",
        ".devcontainer/devcontainer.json",
        ".DevContainer.JSON",
        ".helix/languages.toml",
        ".gitea/workflows/ci.yml",
        ".Gitea/Workflows/ci.yaml",
        ".forgejo/workflows/ci.yml",
        ".gitlab/ci/build.yml",
        "proj.sublime-project",
        "Proj.Sublime-Project",
        ".yarn/releases/yarn-4.1.0.cjs",
        ".yarn/plugins/plugin.cjs",
        ".yarnrc.yml",
        ".pnpmfile.cjs",
        ".vimrc",
        ".exrc",
        ".nvim.lua",
        ".lazy.lua",
        ".dir-locals.el",
        ".run/Server.run.xml",
        ".RUN/Server.Run.XML",
        ".idea/runConfigurations/app.xml",
        ".continuerc.json",
        ".netrc",
        ".git-credentials",
        ".hgrc",
        "sub/.envrc",
        # A virtual environment runs its files later: `activate`, its programs, `.pth` files.
        ".venv/bin/activate",
        ".venv/pyvenv.cfg",
        "venv/lib/python3.11/site-packages/zz.pth",
        "src/evil.pth",
        ".tox/py311/bin/activate",
        # Other names the same programs read, other CI services, tools and agents.
        "lefthook-local.yml",
        ".lefthook.yaml",
        "lefthook.toml",
        ".woodpecker/ci.yaml",
        ".woodpecker.yaml",
        ".drone.yaml",
        "azure-pipelines.yaml",
        ".dir-locals-2.el",
        "_vimrc",
        ".gvimrc",
        "mise.toml",
        ".mise/tasks/build",
        ".jj/repo/config.toml",
        ".cargo/config.toml",
        "gradle/wrapper/gradle-wrapper.properties",
        ".mvn/wrapper/maven-wrapper.properties",
        "uv.toml",
        "pip.conf",
        "bunfig.toml",
        ".kiro/settings/mcp.json",
        ".qwen/settings.json",
        ".trae/mcp.json",
    ],
)
def test_protected_names(tmp_path: Path, name: str) -> None:
    assert protected_reason(tmp_path, tmp_path / name) is not None, name


def test_the_folder_core_hooks_path_names_is_protected(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    hook = tmp_path / "tools" / "git-hooks" / "pre-commit"
    assert protected_reason(tmp_path, hook) is None
    subprocess.run(
        ["git", "-C", str(tmp_path), "config", "core.hooksPath", "tools/git-hooks"], check=True
    )
    assert protected_reason(tmp_path, hook) is not None
    assert protected_reason(tmp_path, tmp_path / "tools" / "build.py") is None


def test_a_virtual_environment_under_any_name_is_protected(tmp_path: Path) -> None:
    (tmp_path / "env" / "bin").mkdir(parents=True)
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert protected_reason(tmp_path, tmp_path / "env" / "bin" / "activate") is not None
    assert protected_reason(tmp_path, tmp_path / "env" / "lib" / "sitecustomize.py") is not None
    assert protected_reason(tmp_path, tmp_path / "envs.py") is None


@pytest.mark.parametrize(
    "name",
    [
        "src/app.py",
        "AGENTS.md",
        "CLAUDE.md",
        ".cursorrules",
        ".github/copilot-instructions.md",
        ".github/ISSUE_TEMPLATE/bug.md",
        "docs/vscode.md",
        "workflows/ci.yml",
        ".gitignore",
        "notes/cadenza.toml.md",
        ".gitlab/issue_templates/bug.md",
        ".gitea/issue_template.md",
        ".yarn/cache/lodash.zip",
        "docs/run.xml",
        "notes/.vimrc.md",
        "devcontainer.md",
        "docs/venv.md",
        "src/depth.py",
    ],
)
def test_ordinary_names(tmp_path: Path, name: str) -> None:
    assert protected_reason(tmp_path, tmp_path / name) is None, name


def test_cadenzas_own_folders_inside_the_workspace_are_protected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person opened the folder that holds Cadenza's state: its trust and permission
    decisions are not the model's to write, whatever the folder is called."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "st"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cf"))
    assert protected_reason(tmp_path, tmp_path / "st" / "cadenza" / "trust.json") is not None
    assert protected_reason(tmp_path, tmp_path / "cf" / "cadenza" / "workflows" / "x.toml")
    assert protected_reason(tmp_path, tmp_path / "st" / "other-app" / "x") is None


def test_a_link_into_a_protected_folder_is_protected(tmp_path: Path) -> None:
    (tmp_path / ".vscode").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "cfg").symlink_to(tmp_path / ".vscode")
    assert protected_reason(tmp_path, tmp_path / "docs" / "cfg" / "settings.json") is not None


def test_a_protected_name_linked_elsewhere_protects_its_target(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / ".vscode").symlink_to("conf")
    (tmp_path / "real.toml").write_text("")
    (tmp_path / "cadenza.toml").symlink_to("real.toml")
    assert protected_reason(tmp_path, tmp_path / "conf" / "settings.json") is not None
    assert protected_reason(tmp_path, tmp_path / "real.toml") is not None
    assert protected_reason(tmp_path, tmp_path / "conf.txt") is None


def make_session(
    tmp_path: Path, script: list[object], editor: MemoryEditor, gate: PermissionGate | None = None
) -> Session:
    return Session(
        session_id="s",
        task="task",
        root=tmp_path,
        provider=ScriptedProvider(script),  # type: ignore[arg-type]
        editor=editor,
        settings=SessionSettings(),
        permissions=gate,
    )


def tool_results(session: Session) -> list[ToolMessage]:
    return [m for m in session.messages if isinstance(m, ToolMessage)]


SETTINGS = '{"cadenza.permissions.default": "allow"}\n'


async def test_a_protected_write_is_asked_and_a_refusal_writes_nothing(tmp_path: Path) -> None:
    editor = MemoryEditor(permissions=[REJECT])
    script = [
        reply(call("create_file", "c1", path=".vscode/settings.json", content=SETTINGS)),
        reply(content="ok"),
    ]
    session = make_session(tmp_path, script, editor)
    await session.run()
    assert not (tmp_path / ".vscode" / "settings.json").exists()
    [asked] = editor.asked
    assert asked.protected == (".vscode/settings.json",)
    assert asked.options == ("allow_once", "reject_once")
    assert asked.title.startswith("creating the protected file .vscode/settings.json (VS Code")
    [result] = tool_results(session)
    assert result.is_error
    assert result.content.startswith(".vscode/settings.json was not changed: it is a protected")
    assert "the person declined" in result.content and "Do not retry" in result.content


async def test_remembered_allow_never_covers_a_protected_path(tmp_path: Path) -> None:
    """ "Always allow" for ordinary calls and an "always" answer to the protected request
    itself: neither answers the next protected change."""
    (tmp_path / "cadenza.toml").write_text('model = "openai/x"\n', encoding="utf-8")
    store = PermissionStore(tmp_path, directory=tmp_path.parent / "rules")
    store.remember("edit_file", "allow")
    editor = MemoryEditor(permissions=[ALLOW_ALWAYS, DISMISSED])
    gate = PermissionGate(editor, store=store, gated=frozenset({"edit_file"}), timeout_s=5)
    script = [
        reply(
            call(
                "edit_file",
                "e1",
                path="cadenza.toml",
                old_string="openai/x",
                new_string="cli/claude",
            )
        ),
        reply(
            call(
                "edit_file",
                "e2",
                path="./sub/../cadenza.toml",
                old_string="cli/claude",
                new_string="cli/codex",
            )
        ),
        reply(content="ok"),
    ]
    session = make_session(tmp_path, script, editor, gate)
    await session.run()
    assert len(editor.asked) == 2  # the remembered rule answered only the ordinary gate
    assert all(r.protected == ("cadenza.toml",) for r in editor.asked)
    assert (tmp_path / "cadenza.toml").read_text(encoding="utf-8") == 'model = "cli/claude"\n'
    assert store.rule("edit_file") == "allow"  # the protected "always" was not stored
    decided = [e for e in editor.events if isinstance(e, PermissionDecided)]
    assert [(d.verdict, d.option) for d in decided] == [
        ("allowed", "remembered"),
        ("allowed", "allow_once"),
        ("allowed", "remembered"),
        ("cancelled", None),
    ]
    second = tool_results(session)[1]
    assert second.is_error and "cadenza.toml configures Cadenza's settings" in second.content


async def test_a_rename_out_of_and_into_a_protected_folder_asks(tmp_path: Path) -> None:
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text("on: push\n", encoding="utf-8")
    (tmp_path / "evil.yml").write_text("on: push\n", encoding="utf-8")
    editor = MemoryEditor(permissions=[REJECT, REJECT])
    script = [
        reply(call("rename_file", "r1", path=".github/workflows/ci.yml", new_path="ci.yml")),
        reply(call("rename_file", "r2", path="evil.yml", new_path=".GitHub/workflows/x.yml")),
        reply(content="ok"),
    ]
    session = make_session(tmp_path, script, editor)
    await session.run()
    assert [r.protected for r in editor.asked] == [
        (".github/workflows/ci.yml",),
        (".GitHub/workflows/x.yml",),
    ]
    assert (tmp_path / ".github" / "workflows" / "ci.yml").exists()
    assert not (tmp_path / ".GitHub").exists() and (tmp_path / "evil.yml").exists()


async def test_a_link_does_not_bypass_the_question(tmp_path: Path) -> None:
    (tmp_path / ".vscode").mkdir()
    (tmp_path / "cfg").symlink_to(tmp_path / ".vscode")
    editor = MemoryEditor(permissions=[REJECT])
    script = [
        reply(call("write_file", "w1", path="cfg/tasks.json", content="{}\n")),
        reply(content="ok"),
    ]
    session = make_session(tmp_path, script, editor)
    await session.run()
    assert [r.protected for r in editor.asked] == [(".vscode/tasks.json",)]
    assert not (tmp_path / ".vscode" / "tasks.json").exists()


async def test_ordinary_files_are_not_asked(tmp_path: Path) -> None:
    editor = MemoryEditor()
    script = [
        reply(call("create_file", "c1", path="AGENTS.md", content="Be brief.\n")),
        reply(content="ok"),
    ]
    await make_session(tmp_path, script, editor).run()
    assert editor.asked == []
    assert (tmp_path / "AGENTS.md").read_text(encoding="utf-8") == "Be brief.\n"
