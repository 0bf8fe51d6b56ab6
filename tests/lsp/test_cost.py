"""The cost of each model call in ``model_reply``: as the provider reports it (OpenRouter's
``usage.cost``) or from a configured price table; never guessed. And the context window each
call was made against (``contextSize``)."""

from __future__ import annotations

from typing import Any

from tests.lsp.conftest import Connect
from tests.support.fake_openai import FakeOpenAI, Reply, text


def replies(editor: Any, session_id: str) -> list[dict[str, Any]]:
    return [u for u in editor.updates[session_id] if u["sessionUpdate"] == "model_reply"]


async def test_a_reported_cost_is_kept_and_none_is_invented(
    connect: Connect, fake: FakeOpenAI
) -> None:
    editor = await connect()
    fake.script(Reply(content="paid", cost=0.0042))
    session_id, _ = await editor.run("hi")
    [reply] = replies(editor, session_id)
    assert reply["cost"] == {"amount": 0.0042, "currency": "USD"}

    fake.script(text("free"))
    other, _ = await editor.run("hi")
    [reply] = replies(editor, other)
    assert "cost" not in reply  # no report, no price table: no cost
    assert reply["promptTokens"] == 10


async def test_a_price_table_gives_the_cost(connect: Connect, fake: FakeOpenAI) -> None:
    prices = {"test": {"input": 2.0, "output": 8.0, "currency": "EUR"}}
    editor = await connect(user_config={"providers": {"openai": {"prices": prices}}})
    fake.script(text("priced"))
    session_id, _ = await editor.run("hi")
    [reply] = replies(editor, session_id)
    # 10 prompt tokens at 2.0 and 5 completion tokens at 8.0 per million.
    assert reply["cost"] == {"amount": (10 * 2.0 + 5 * 8.0) / 1e6, "currency": "EUR"}


async def test_each_reply_names_the_context_window_it_was_made_against(
    connect: Connect, fake: FakeOpenAI
) -> None:
    """``contextSize``: what a client sets ``promptTokens`` against (the share in use)."""
    editor = await connect(init_options={"contextSize": 32768})
    fake.script(text("sized"))
    session_id, _ = await editor.run("hi")
    [reply] = replies(editor, session_id)
    assert (reply["promptTokens"], reply["contextSize"]) == (10, 32768)
