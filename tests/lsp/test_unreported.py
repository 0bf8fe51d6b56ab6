"""``OpenDocuments.buffer`` after an applied edit the client has not reported yet: the edit's
text is read until the client's ``didOpen``/``didChange`` (or the disk) catches up."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.workspace import Workspace

from cadenza.lsp.documents import OpenDocuments, file_uri

BEFORE, AFTER, TYPED = "a = 1\n", "a = 10\n", "a = 10\nb = 2\n"


def setup(tmp_path: Path) -> tuple[Workspace, OpenDocuments, Path]:
    path = tmp_path / "app.py"
    path.write_text(BEFORE)
    workspace = Workspace(file_uri(tmp_path))
    return workspace, OpenDocuments(workspace, tmp_path.resolve()), path.resolve()


def did_open(workspace: Workspace, path: Path, text: str, version: int) -> None:
    item = types.TextDocumentItem(
        uri=file_uri(path), language_id="python", version=version, text=text
    )
    workspace.put_text_document(item)


def did_change(workspace: Workspace, path: Path, text: str, version: int) -> None:
    identifier = types.VersionedTextDocumentIdentifier(uri=file_uri(path), version=version)
    change = types.TextDocumentContentChangeWholeDocument(text=text)
    workspace.update_text_document(identifier, change)


def edit_closed(documents: OpenDocuments, path: Path) -> None:
    documents.applied(path, AFTER, documents.before_edit(path))


def test_a_closed_file_reads_the_edit_until_the_disk_changes(tmp_path: Path) -> None:
    _, documents, path = setup(tmp_path)
    edit_closed(documents, path)
    buffer = documents.buffer(path)
    assert buffer is not None and (buffer.text, buffer.version) == (AFTER, None)
    path.write_text("a = 2\n")  # someone changed the disk: it is the truth again
    assert documents.buffer(path) is None


def test_a_stale_did_open_waits_for_its_did_change(tmp_path: Path) -> None:
    workspace, documents, path = setup(tmp_path)
    edit_closed(documents, path)
    did_open(workspace, path, BEFORE, 1)  # VS Code: opened before the edit, change delayed
    assert documents.buffer(path) == documents.buffer(path)
    buffer = documents.buffer(path)
    assert buffer is not None and (buffer.text, buffer.version) == (AFTER, None)
    did_change(workspace, path, TYPED, 2)  # the edit and the person's typing
    buffer = documents.buffer(path)
    assert buffer is not None and (buffer.text, buffer.version) == (TYPED, 2)


def test_a_did_open_holding_the_edit_or_more_is_the_truth(tmp_path: Path) -> None:
    workspace, documents, path = setup(tmp_path)
    edit_closed(documents, path)
    did_open(workspace, path, TYPED, 2)
    buffer = documents.buffer(path)
    assert buffer is not None and (buffer.text, buffer.version) == (TYPED, 2)


def test_an_open_document_reads_the_edit_until_its_version_moves(tmp_path: Path) -> None:
    workspace, documents, path = setup(tmp_path)
    did_open(workspace, path, BEFORE, 3)
    before = documents.before_edit(path)
    documents.applied(path, AFTER, before)  # answered; the didChange is not here yet
    buffer = documents.buffer(path)
    assert buffer is not None and (buffer.text, buffer.version) == (AFTER, None)
    # A second edit before the report keeps the first report's base.
    documents.applied(path, TYPED, documents.before_edit(path))
    did_change(workspace, path, AFTER, 4)  # the first edit's report only
    buffer = documents.buffer(path)
    assert buffer is not None and (buffer.text, buffer.version) == (TYPED, None)
    did_change(workspace, path, TYPED + "c = 3\n", 5)  # the second's, and the person's typing
    buffer = documents.buffer(path)
    assert buffer is not None and (buffer.text, buffer.version) == (TYPED + "c = 3\n", 5)


def test_an_edit_already_reported_keeps_nothing(tmp_path: Path) -> None:
    workspace, documents, path = setup(tmp_path)
    did_open(workspace, path, BEFORE, 1)
    before = documents.before_edit(path)
    did_change(workspace, path, AFTER, 2)  # reported before the answer (the test harness)
    documents.applied(path, AFTER, before)
    buffer = documents.buffer(path)
    assert buffer is not None and (buffer.text, buffer.version) == (AFTER, 2)
