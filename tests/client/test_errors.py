"""The server's JSON-RPC errors as ``cadenza run`` says them: the reason, not the protocol."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from cadenza.client.errors import rpc_message


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("unknown provider 'x' in the model 'x/y'", "unknown provider 'x' in the model 'x/y'"),
        ("Invalid Params: cadenza.startSession: task: Field required", "task: Field required"),
        ("Invalid params: Command name 'x' is not defined", "Command name 'x' is not defined"),
        ("  ", "the server gave no reason"),
    ],
)
def test_the_reason_without_the_protocol_prefix(message: str, said: str) -> None:
    assert rpc_message(JsonRpcInvalidParams(message=message)) == said
    assert rpc_message(JsonRpcException(code=-32803, message=message)) == said
