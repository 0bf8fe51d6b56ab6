"""``cadenza run --provider``: how it combines with ``--model``."""

from __future__ import annotations

import pytest

from cadenza.cli import build_parser, model_with_provider


@pytest.mark.parametrize(
    ("model", "provider", "expected"),
    [
        (None, None, None),
        (None, "openai", "openai/default"),
        ("qwen", "ollama", "ollama/qwen"),
        ("local/smollm2-135m", "openai", "local/smollm2-135m"),
    ],
)
def test_model_with_provider(model: str | None, provider: str | None, expected: str | None) -> None:
    assert model_with_provider(model, provider) == expected


def test_run_parses_provider_and_base_url() -> None:
    args = build_parser().parse_args(
        ["run", "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "do it"]
    )
    assert (args.provider, args.base_url, args.task) == ("openai", "http://127.0.0.1:9/v1", "do it")


@pytest.mark.parametrize("bad", ["0", "-1", "5000", "ten"])
def test_max_steps_out_of_range_is_an_argument_error(bad: str) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["run", "--max-steps", bad, "task"])
    assert info.value.code == 2


@pytest.mark.parametrize(("text", "seconds"), [("600", 600.0), ("90s", 90.0), ("10m", 600.0)])
def test_time_budget_takes_seconds_or_minutes(text: str, seconds: float) -> None:
    args = build_parser().parse_args(["run", "--time-budget", text, "task"])
    assert args.time_budget == seconds


@pytest.mark.parametrize("bad", ["-1", "ten", "25h", "2000m"])
def test_time_budget_out_of_range_is_an_argument_error(bad: str) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["run", "--time-budget", bad, "task"])
    assert info.value.code == 2
