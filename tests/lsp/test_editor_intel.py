"""Code intelligence from the editor: the real server asks a raw LSP client that declared it.

The client (``tests.lsp.harness``) declares ``experimental.cadenza.codeIntelligence`` and
answers ``cadenza/references``, ``cadenza/rename`` and ``cadenza/diagnostics`` from a small
index of its own: every occurrence of the word in the workspace's files, with columns counted
here in the negotiated encoding, independently of the server's code. The scripted model calls
the tools; the tests check the positions on the wire, what the model reads, the edits the
editor applied, and that a client that never answers or answers nonsense ends in an error
result while the session goes on.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities, file_uri
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages

ALL = {"diagnostics": True, "references": True, "definition": True, "rename": True}
FILES = {
    "total.py": "def calc_total(items):\n    return sum(items)\n",
    "report.py": "from total import calc_total\n\nprint(calc_total([1, 2]))\n",
    # Non-ASCII text before the symbol: its column differs in every encoding.
    "shop.py": 's = "é😀"; from total import calc_total\n\nPRICE = calc_total([3])\n',
}
SHOP_COLUMN = {"utf-8": 32, "utf-16": 29, "utf-32": 28}


def units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def intel_caps(encoding: str, features: dict[str, bool] | None = None) -> types.ClientCapabilities:
    caps = capabilities(encodings=[encoding])
    caps.experimental = {"cadenza": {"codeIntelligence": features or ALL}}
    return caps


def occurrences(editor: Harness, word: str) -> list[dict[str, Any]]:
    """Every occurrence of ``word`` in the workspace, as LSP ``Location``s (the editor's view)."""
    found = []
    for path in sorted(editor.root.glob("*.py")):
        uri = file_uri(path)
        source = editor.buffers[uri].text if uri in editor.buffers else path.read_text()
        for number, line in enumerate(source.split("\n")):
            for match in re.finditer(rf"\b{re.escape(word)}\b", line):
                start = units(line[: match.start()], editor.encoding)
                end = units(line[: match.end()], editor.encoding)
                found.append(
                    {
                        "uri": uri,
                        "range": {
                            "start": {"line": number, "character": start},
                            "end": {"line": number, "character": end},
                        },
                    }
                )
    return found


def answer_from_index(editor: Harness, asked: list[tuple[str, Any]]) -> None:
    """Answer references and rename from ``occurrences``; record what was asked."""

    def references(params: dict[str, Any]) -> list[dict[str, Any]]:
        asked.append(("references", params))
        return occurrences(editor, "calc_total")

    def rename(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(("rename", params))
        by_uri: dict[str, list[dict[str, Any]]] = {}
        for location in occurrences(editor, "calc_total"):
            edit = {"range": location["range"], "newText": params["newName"]}
            by_uri.setdefault(location["uri"], []).append(edit)
        return {"changes": by_uri}

    editor.client.feature("cadenza/references")(references)
    editor.client.feature("cadenza/rename")(rename)


def write_files(root: Path) -> None:
    for name, source in FILES.items():
        (root / name).write_text(source)


def results(fake: FakeOpenAI) -> dict[str, str]:
    """Tool results by call id, over every request the model got."""
    found: dict[str, str] = {}
    for request in fake.requests:
        for message in tool_messages(request):
            found[message["tool_call_id"]] = str(message["content"])
    return found


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
async def test_references_and_rename_through_the_editor(
    connect: Connect, fake: FakeOpenAI, workspace: Path, encoding: str
) -> None:
    write_files(workspace)
    editor = await connect(caps=intel_caps(encoding))
    assert editor.encoding == encoding
    asked: list[tuple[str, Any]] = []
    answer_from_index(editor, asked)
    shop = workspace / "shop.py"
    editor.open(shop, FILES["shop.py"])  # an open buffer: positions are read from it
    symbol = {"path": "shop.py", "line": 1, "symbol": "calc_total"}
    fake.script(
        call("find_references", symbol, "f1"),
        call("rename_symbol", {**symbol, "new_name": "compute_total"}, "r1"),
        text("Renamed."),
    )
    _, end = await editor.run("rename calc_total to compute_total")

    assert end["stopReason"] == "end_turn"
    position = {"line": 0, "character": SHOP_COLUMN[encoding]}
    assert asked[0] == (
        "references",
        {"textDocument": {"uri": file_uri(shop)}, "position": position},
    )
    assert asked[1][1]["position"] == position and asked[1][1]["newName"] == "compute_total"
    listing = results(fake)["f1"]
    for where in ("total.py:1", "report.py:1", "report.py:3", "shop.py:1", "shop.py:3"):
        assert where in listing, listing
    # The rename went through the server's own edit path: workspace/applyEdit to this client.
    for name, source in FILES.items():
        assert editor.text_of(workspace / name) == source.replace("calc_total", "compute_total")


async def test_diagnostics_columns_and_severity(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    broken = workspace / "broken.py"
    broken.write_text('s = "😀"; count: int = "many"\n')
    editor = await connect(caps=intel_caps("utf-16"))
    asked: list[Any] = []

    def diagnostics(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        start = {"line": 0, "character": units('s = "😀"; count: int = ', "utf-16")}
        diagnostic = {
            "range": {"start": start, "end": {"line": 0, "character": start["character"] + 6}},
            "severity": 1,
            "source": "pyright",
            "message": 'Type "Literal[\'many\']" is not assignable to declared type "int"',
        }
        return {"items": [{"uri": file_uri(broken), "diagnostics": [diagnostic]}]}

    editor.client.feature("cadenza/diagnostics")(diagnostics)
    fake.script(call("diagnostics", {"path": "broken.py"}, "d1"), text("Seen."))
    _, end = await editor.run("check broken.py")

    assert end["stopReason"] == "end_turn"
    assert asked == [{"uris": [file_uri(broken)]}]
    listing = results(fake)["d1"]
    assert "broken.py:1" in listing and "not assignable" in listing, listing


NONSENSE: dict[str, Any] = {
    "references": [{"uri": 5, "range": "everywhere"}],
    "rename": {"documentChanges": [{"kind": "delete", "uri": "file:///tmp/x.py"}]},
}


@pytest.mark.parametrize("method", ["references", "rename"])
async def test_a_nonsense_answer_is_an_error_result(
    connect: Connect, fake: FakeOpenAI, workspace: Path, method: str
) -> None:
    write_files(workspace)
    editor = await connect(caps=intel_caps("utf-16"))
    editor.client.feature(f"cadenza/{method}")(lambda params: NONSENSE[method])
    symbol = {"path": "report.py", "line": 3, "symbol": "calc_total"}
    tool = "find_references" if method == "references" else "rename_symbol"
    arguments = symbol if method == "references" else {**symbol, "new_name": "x"}
    fake.script(call(tool, arguments, "c1"), *[text("The language server failed.")] * 3)
    _, end = await editor.run("use the language server")

    # The session went on after the error result. A failed rename is a failed edit: each
    # claim of done after it is refused (nothing was changed), and the session ends failed.
    assert end["stopReason"] == ("end_turn" if method == "references" else "failed")
    result = results(fake)["c1"]
    expected = "unusable" if method == "references" else "create, rename or delete files"
    assert expected in result, result
    assert (workspace / "report.py").read_text() == FILES["report.py"]


async def test_a_client_that_never_answers_gets_a_bounded_wait(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    write_files(workspace)
    editor = await connect(caps=intel_caps("utf-16"))
    never = asyncio.Event()

    async def hang(params: dict[str, Any]) -> list[Any]:
        await never.wait()
        return []

    editor.client.feature("cadenza/references")(hang)
    fake.script(
        call("find_references", {"path": "report.py", "line": 3, "symbol": "calc_total"}, "c1"),
        text("No answer."),
    )
    session_id = await editor.start("find the references")
    end = await editor.wait_end(session_id, timeout=60)

    assert end["stopReason"] == "end_turn"
    assert "did not answer" in results(fake)["c1"]
    never.set()


async def test_without_the_capability_the_editor_is_never_asked(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    write_files(workspace)
    editor = await connect(caps=intel_caps("utf-16", {"diagnostics": True}))
    asked: list[Any] = []
    editor.client.feature("cadenza/references")(lambda params: asked.append(params) or [])
    fake.script(
        call("find_references", {"path": "report.py", "line": 3, "symbol": "calc_total"}, "c1"),
        text("ok"),
    )
    await editor.run("find the references")
    assert asked == []  # references were not declared: another source (or none) answers


async def test_definition_as_location_links(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    write_files(workspace)
    editor = await connect(caps=intel_caps("utf-16"))
    outside = "file:///usr/lib/python3/site.py"  # outside the workspace: left out, never read

    def definition(params: dict[str, Any]) -> list[dict[str, Any]]:
        [declaration] = [
            o for o in occurrences(editor, "calc_total") if o["uri"].endswith("total.py")
        ]
        whole = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 21}}
        link = {
            "targetUri": declaration["uri"],
            "targetRange": whole,
            "targetSelectionRange": declaration["range"],
        }
        return [link, {"targetUri": outside, "targetRange": whole, "targetSelectionRange": whole}]

    editor.client.feature("cadenza/definition")(definition)
    fake.script(
        call("go_to_definition", {"path": "shop.py", "line": 3, "symbol": "calc_total"}, "g1"),
        text("Found."),
    )
    _, end = await editor.run("where is calc_total defined")

    assert end["stopReason"] == "end_turn"
    result = results(fake)["g1"]
    assert "total.py:1" in result and "site.py" not in result, result
