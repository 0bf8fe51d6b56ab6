"""Suite 1, hostile ``initialize``: each on a fresh server (it configures the connection).

Hypothesis-made ``initialize`` params (wrong types for ``rootUri``, ``workspaceFolders``,
``capabilities``, ``positionEncodings``, ``initializationOptions``): the request is answered
(a result or an error; after an error the server is still uninitialized: -32002, and a valid
``initialize`` then works), and then ``cadenza.listSessions`` is answered; the process lives.
``initializationOptions.model`` is never a local, ollama or anthropic model (those would start
processes or reach out).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.lsp.harness import server_env
from tests.reliability.knobs import scaled
from tests.reliability.rawserver import RawServer, message
from tests.reliability.test_protocol_fuzz import hostile, json_value, tricky_text

SERVERS = scaled(6, 60)
STATS = {"servers": 0, "errors": 0}

options = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {},
        optional={
            "model": st.one_of(st.sampled_from(["openai/x", "nope/x", "", "/"]), json_value),
            "maxSteps": hostile,
            "maxTokens": hostile,
            "temperature": hostile,
            "contextSize": hostile,
            "review": hostile,
            "permissions": st.one_of(
                json_value,
                st.fixed_dictionaries({}, optional={"gated": hostile, "timeoutS": hostile}),
            ),
            "browser": json_value,
            "providers": st.one_of(
                json_value,
                st.fixed_dictionaries(
                    {
                        "openai": st.dictionaries(
                            st.sampled_from(
                                [
                                    "baseUrl",
                                    "timeoutS",
                                    "attempts",
                                    "apiKeyEnv",
                                    "headers",
                                    "stream",
                                ]
                            ),
                            hostile,
                        )
                    }
                ),
            ),
        },
    ),
)
initialize_params = st.fixed_dictionaries(
    {
        "capabilities": st.one_of(
            st.just({}),
            json_value,
            st.fixed_dictionaries(
                {},
                optional={
                    "general": st.one_of(
                        json_value, st.fixed_dictionaries({"positionEncodings": hostile})
                    ),
                    "workspace": json_value,
                    "window": json_value,
                    "experimental": json_value,
                },
            ),
        )
    },
    optional={
        "processId": hostile,
        "rootUri": st.one_of(tricky_text, json_value),
        "rootPath": hostile,
        "workspaceFolders": st.one_of(
            json_value,
            st.lists(st.fixed_dictionaries({"uri": tricky_text, "name": hostile}), max_size=3),
        ),
        "initializationOptions": options,
        "trace": hostile,
        "locale": hostile,
    },
)


@settings(
    max_examples=SERVERS,
    deadline=None,
    database=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(params=initialize_params)
def test_hostile_initialize(tmp_path_factory: Any, params: dict[str, Any]) -> None:
    tmp: Path = tmp_path_factory.mktemp("init")
    models = json.dumps(params)
    if any(p in models for p in ("local/", "ollama/", "anthropic/", "llamacpp/", "cli/")):
        return
    server = RawServer(server_env("http://127.0.0.1:9/v1", tmp / "home"))
    try:
        answer = server.request(1, "initialize", params, 15)
        assert answer is not None, "initialize was not answered"
        assert ("result" in answer) != ("error" in answer), answer
        STATS["servers"] += 1
        STATS["errors"] += "error" in answer
        if "error" in answer:  # refused: still not initialized, and a valid one then works
            early = server.request(
                3, "workspace/executeCommand", {"command": "cadenza.listSessions"}, 15
            )
            assert early is not None and early["error"]["code"] == -32002, early
            retry = server.request(4, "initialize", {"capabilities": {}}, 15)
            assert retry is not None and "result" in retry, retry
        server.send(message({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        listed = server.request(
            2, "workspace/executeCommand", {"command": "cadenza.listSessions"}, 15
        )
        assert listed is not None and "result" in listed, listed
        assert server.alive()
        assert not server.frame_errors
    finally:
        server.kill()
