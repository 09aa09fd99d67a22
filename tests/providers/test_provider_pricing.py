"""fixtures/prices.toml covers the roster, and usage turns into dollars with each API's
cached-token convention."""

from __future__ import annotations

from pathlib import Path

import pytest

from stille_post.core.errors import ConfigError
from stille_post.games.stille_post.roster import load_roster
from stille_post.providers import Usage
from stille_post.providers.pricing import cost_usd, default_prices, load_prices


def test_every_roster_model_has_a_price() -> None:
    table = default_prices()
    for m in load_roster():
        assert m.id in table.models, m.id
        assert table.price(m.api_name) is table.price(m.id)
        price = table.models[m.id]
        assert 0 < price.cached_input < price.input < price.output


def test_openai_cached_tokens_are_inside_the_input_count() -> None:
    # gpt-5-mini: 0.25 in, 0.025 cached, 2.00 out per 1M.
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cached_input_tokens=400_000)
    assert cost_usd("gpt-5-mini", usage) == pytest.approx(0.6 * 0.25 + 0.4 * 0.025 + 2.0)
    assert cost_usd("gpt-5-mini-2025-08-07", usage) == cost_usd("gpt-5-mini", usage)


def test_anthropic_cache_reads_are_apart_from_the_input_count() -> None:
    # The real cassette: 11 input, 2055 cache reads, 100 output on a Sonnet-priced model.
    usage = Usage(input_tokens=11, output_tokens=100, cached_input_tokens=2055)
    expected = (11 * 3.0 + 2055 * 0.30 + 100 * 15.0) / 1e6
    assert cost_usd("claude-sonnet-4-5-20250929", usage) == pytest.approx(expected)


def test_unknown_models_cost_the_default() -> None:
    assert cost_usd("smollm2-135m-a", Usage(10_000, 10_000, 0)) == 0.0


def test_a_broken_table_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "prices.toml"
    bad.write_text('[models."x"]\ninput = "cheap"\ncached_input = 0\noutput = 1\n')
    with pytest.raises(ConfigError):
        load_prices(bad)
