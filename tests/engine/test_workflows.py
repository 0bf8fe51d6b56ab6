"""Workflows from TOML: built-ins, user and workspace files, clear errors naming file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from cadenza.engine.workflows import WorkflowError, default_workflow, load_catalog, parse_workflow


def test_builtins_load() -> None:
    catalog = load_catalog(None)
    assert catalog.errors == {}
    assert catalog.get("default").movement_names == ["work"]
    pir = catalog.get("plan-implement-review")
    assert pir.movement_names == ["plan", "implement", "review"]
    assert pir.movements[0].tools == ("read_file", "list_files", "search")
    assert [m.default_next for m in pir.movements] == ["implement", "review", "COMPLETE"]
    assert default_workflow().name == "default"


def test_workspace_workflow_and_broken_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    folder = tmp_path / ".cadenza" / "workflows"
    folder.mkdir(parents=True)
    (folder / "quick.toml").write_text(
        'name = "quick"\n[[movements]]\nname = "fix"\nmax_steps = 3\ntools = ["read_file"]\n'
    )
    (folder / "bad.toml").write_text(
        'name = "bad"\n[[movements]]\nname = "a"\ndefault_next = "nowhere"\n'
    )
    catalog = load_catalog(tmp_path)
    assert catalog.get("quick").movements[0].max_steps == 3
    assert "plan-implement-review" in catalog.workflows  # a broken file does not hide others
    with pytest.raises(WorkflowError) as info:
        catalog.get("bad")
    message = str(info.value)
    assert "bad.toml" in message and "nowhere" in message and "default_next" in message
    with pytest.raises(WorkflowError, match=r"unknown workflow 'nope'.*default"):
        catalog.get("nope")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name = 'x'\nmovements = []", "movements"),
        ("name = 'x'\n[[movements]]\nname = 'a'\nmax_steps = 0", "movements.0.max_steps"),
        ("name = 'x'\n[[movements]]\nname = 'a'\ncolour = 'red'", "movements.0.colour"),
        ("name = 'x'\n[[movements]]\nname = 'a'\n[[movements]]\nname = 'a'", "unique"),
        ("name = [", "not valid TOML"),
    ],
)
def test_invalid_files_name_file_and_field(text: str, expected: str) -> None:
    with pytest.raises(WorkflowError) as info:
        parse_workflow(text, "/w/.cadenza/workflows/x.toml")
    assert str(info.value).startswith("/w/.cadenza/workflows/x.toml: ")
    assert expected in str(info.value)


def test_unknown_tool_names_are_refused_naming_file_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    folder = tmp_path / ".cadenza" / "workflows"
    folder.mkdir(parents=True)
    (folder / "typo.toml").write_text(
        'name = "typo"\n[[movements]]\nname = "a"\ntools = ["read_file", "rm_rf"]\n'
    )
    catalog = load_catalog(tmp_path, known_tools=frozenset({"read_file", "edit_file"}))
    with pytest.raises(WorkflowError) as info:
        catalog.get("typo")
    assert "typo.toml: movements.0.tools: unknown tool(s) rm_rf" in str(info.value)
    assert catalog.get("default").name == "default"
