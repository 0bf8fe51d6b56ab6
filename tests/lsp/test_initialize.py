"""``initialize``: server info, commands, text sync, position encoding, init options."""

from __future__ import annotations

from lsprotocol import types

from tests.lsp.conftest import Connect
from tests.lsp.harness import capabilities
from tests.lsp.test_sessions import wait_for
from tests.support.fake_openai import FakeOpenAI, text


async def test_server_info_commands_and_sync(connect: Connect) -> None:
    from cadenza import __version__

    harness = await connect()
    result = harness.initialize_result
    assert result is not None
    assert result.server_info is not None
    assert result.server_info.name == "cadenza"
    assert result.server_info.version == __version__
    provider = result.capabilities.execute_command_provider
    assert provider is not None
    assert sorted(provider.commands) == [
        "cadenza.cancelSession",
        "cadenza.configureSession",
        "cadenza.listChanges",
        "cadenza.listCommands",
        "cadenza.listModels",
        "cadenza.listPermissions",
        "cadenza.listSessions",
        "cadenza.loadSession",
        "cadenza.promptSession",
        "cadenza.pullModel",
        "cadenza.replySession",
        "cadenza.restoreTurn",
        "cadenza.reviewChanges",
        "cadenza.revokePermission",
        "cadenza.startSession",
        "cadenza.steerSession",
        "cadenza.undoSession",
    ]
    sync = result.capabilities.text_document_sync
    assert isinstance(sync, types.TextDocumentSyncOptions)
    assert sync.open_close is True
    assert sync.change == types.TextDocumentSyncKind.Full
    assert sync.save is not None and sync.save is not False


async def test_position_encoding_defaults_to_utf16(connect: Connect) -> None:
    harness = await connect(caps=capabilities(encodings=None))
    assert harness.initialize_result is not None
    assert harness.initialize_result.capabilities.position_encoding == "utf-16"


async def test_position_encoding_utf8_when_only_utf8_offered(connect: Connect) -> None:
    harness = await connect(caps=capabilities(encodings=["utf-8"]))
    assert harness.initialize_result is not None
    assert harness.initialize_result.capabilities.position_encoding == "utf-8"


async def test_invalid_initialization_options_warn_and_keep_defaults(
    connect: Connect, fake: FakeOpenAI
) -> None:
    harness = await connect(init_options={"maxSteps": "lots", "colour": "blue"})

    # The server answered initialize; the problem is shown (just after the answer), not fatal.
    def warnings_now() -> list[str]:
        messages = harness.client.messages
        return [m.message for m in messages if m.type == types.MessageType.Warning]

    await wait_for(lambda: len(warnings_now()) >= 2)
    warnings = warnings_now()
    assert len(warnings) == 2, warnings
    assert "unknown settings: colour" in warnings[0]
    assert "initializationOptions" in warnings[1] and "maxSteps" in warnings[1]

    fake.script(text("fine"))
    _, end = await harness.run("still works")
    assert end["stopReason"] == "end_turn"
    [reports] = harness.client.progress_reports.values()
    assert reports[1].message == "work · step 1/25"  # the default maxSteps


async def test_an_unknown_option_does_not_drop_the_valid_ones(
    connect: Connect, fake: FakeOpenAI
) -> None:
    harness = await connect(init_options={"maxSteps": 3, "colour": "blue"})
    fake.script(text("fine"))
    _, end = await harness.run("still works")
    assert end["stopReason"] == "end_turn"
    [reports] = harness.client.progress_reports.values()
    assert reports[1].message == "work · step 1/3"  # maxSteps kept beside the unknown key
