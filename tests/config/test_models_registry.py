"""The model registry: loading, validation, the `model:ALIAS` seat grammar, prices."""

from __future__ import annotations

from pathlib import Path

import pytest

from stille_post.core.errors import ConfigError, UnknownPlayerError
from stille_post.players.specs import parse_seat_spec
from stille_post.providers.base import Usage
from stille_post.providers.models import (
    ModelRegistry,
    active_models,
    builtin_models,
    load_models,
    using_models,
)
from stille_post.providers.pricing import cost_usd, seat_cost_usd
from tests.config._cli import ROOT

EXAMPLE = ROOT / "examples" / "models.toml"
ROSTER = ROOT / "stille_post" / "games" / "stille_post" / "data" / "roster.toml"


def _models(tmp_path: Path, text: str) -> ModelRegistry:
    path = tmp_path / "models.toml"
    path.write_text(text, encoding="utf-8")
    return load_models(path)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        _models(tmp_path, text)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_the_example_loads_over_the_shipped_aliases() -> None:
    reg = load_models(EXAMPLE)
    mini = reg.get("gpt-5-mini-low")
    assert mini is not None and (mini.provider, mini.model) == ("openai", "gpt-5-mini")
    assert mini.reasoning_effort == "low" and dict(mini.extra) == {"service_tier": "flex"}
    assert mini.price is not None and mini.price.output == 1.0
    local = reg.get("qwen-local")
    assert local is not None and local.base_url == "http://127.0.0.1:11434/v1"
    assert reg.get("claude-haiku-4-5-20241022") is not None  # the shipped ones stay
    assert reg.files[-1] == str(EXAMPLE)


def test_shipped_aliases_cover_every_roster_api_name() -> None:
    """The generic CLI no longer reads the Stille Post roster: every roster entry whose
    API name differs from its id must be a shipped alias instead."""
    import tomllib

    roster = tomllib.loads(ROSTER.read_text(encoding="utf-8"))["model"]
    mapped = [m for m in roster if m.get("api_model", m["id"]) != m["id"]]
    assert mapped  # the test means something
    for m in mapped:
        alias = builtin_models().get(m["id"])
        assert alias is not None, m["id"]
        assert (alias.provider, alias.model) == (m["provider"], m["api_model"])


def test_a_project_local_models_toml_is_found(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_models(None) is builtin_models()
    (tmp_path / "models.toml").write_text('[models.mine]\nprovider = "google"\n'
                                          'model = "gemini-2.5-flash"\n', encoding="utf-8")
    assert load_models(None).get("mine") is not None


@pytest.mark.parametrize(("text", "expected"), [
    ('[models.a]\nprovider = "mistral"\nmodel = "m"\n',
     "models.toml:2: models.a.provider: Input should be 'openai', 'anthropic', 'google' or "
     "'openai-compatible', got 'mistral'"),
    ('[models.a]\nprovider = "openai"\n', "models.toml:1: models.a.model: required, but missing"),
    ('[models.a]\nprovider = "openai"\nmodel = "m"\ntemperature = "hot"\n',
     "models.toml:4: models.a.temperature: Input should be a valid number, got 'hot'"),
    ('[models.a]\nprovider = "openai"\nmodel = "m"\nreasoning_effort = "max"\n',
     "models.toml:4: models.a.reasoning_effort: Input should be"),
    ('[models.a]\nprovider = "openai-compatible"\nmodel = "m"\n',
     "models.toml:1: models.a: an openai-compatible model needs base_url"),
    ('[models.a]\nprovider = "openai"\nmodel = "m"\nbase_url = "localhost:8000"\n',
     "models.toml:4: models.a.base_url: the URL must start with http:// or https://"),
    ('[models.a]\nprovider = "openai"\nmodel = "m"\nprice = { input = 1, output = 2 }\n',
     "models.toml:4: models.a.price.cached_input: required, but missing"),
    ('[models.a]\nprovider = "openai"\nmodel = "m"\nprice = { input = 1, cached_input = 0, '
     'output = 2, currency = "EUR" }\n', "models.toml:4: models.a.price.currency: unknown key "
     "(known: cached_input, input, output)"),
    ('[models."a b"]\nprovider = "openai"\nmodel = "m"\n', "models: alias 'a b'"),
    ('[model.a]\nprovider = "openai"\n', "models.toml:1: model: unknown key (known: models)"),
    ('[models.a]\nprovider = "openai"\nmodel = "m"\n[models.a]\n', "models.toml:4: not valid "
     "TOML"),
])
def test_refusals_name_line_key_and_problem(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in _error(tmp_path, text)


def test_a_missing_models_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such models file"):
        load_models(tmp_path / "nope.toml")



@pytest.fixture
def reg(tmp_path: Path) -> ModelRegistry:
    return _models(tmp_path, """
[models.fast]
provider = "openai"
model = "gpt-5-mini"
reasoning_effort = "low"

[models.cheap]
provider = "anthropic"
model = "claude-haiku-4-5-20251001"
price = { input = 0.5, cached_input = 0.05, output = 2.5 }

[models.local]
provider = "openai-compatible"
model = "qwen2.5:7b"
base_url = "http://127.0.0.1:11434/v1"
""")


def test_model_alias_seats_resolve_provider_model_and_url(reg: ModelRegistry) -> None:
    spec = parse_seat_spec("model:local", ("random",), models=reg)
    assert spec.is_llm and (spec.provider, spec.model) == ("openai-compatible", "qwen2.5:7b")
    assert spec.base_url == "http://127.0.0.1:11434/v1"
    assert spec.label == "model:local"  # the alias is the player on a leaderboard
    plain = parse_seat_spec("openai:gpt-5-mini", ("random",), models=reg)
    assert plain.alias is None and plain.label == "openai:gpt-5-mini"


def test_an_unknown_alias_is_one_line_listing_the_aliases(reg: ModelRegistry) -> None:
    with pytest.raises(UnknownPlayerError) as info:
        parse_seat_spec("model:fsat", ("random",), models=reg)
    message = str(info.value)
    assert "unknown model alias 'fsat'" in message and "fast" in message
    assert "\n" not in message
    with pytest.raises(UnknownPlayerError, match="model:ALIAS"):
        parse_seat_spec("fast", ("random",), models=reg)  # a bare alias is not a seat


def test_the_active_registry_is_what_the_kit_parses_with(reg: ModelRegistry) -> None:
    with pytest.raises(UnknownPlayerError):
        parse_seat_spec("model:fast", ())
    with using_models(reg):
        assert active_models() is reg
        assert parse_seat_spec("model:fast", ()).model == "gpt-5-mini"
    assert active_models() is builtin_models()


def test_an_alias_price_overrides_the_shipped_table(reg: ModelRegistry) -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    shipped = cost_usd("claude-haiku-4-5-20251001", usage)
    assert shipped == pytest.approx(6.0)
    with using_models(reg):
        assert seat_cost_usd("model:cheap", usage) == pytest.approx(3.0)
        # No price of its own: the alias is priced as its API model.
        assert seat_cost_usd("model:fast", usage) == pytest.approx(cost_usd("gpt-5-mini",
                                                                            usage))
        assert seat_cost_usd("model:local", usage) is not None
        assert cost_usd("claude-haiku-4-5-20251001", usage) == pytest.approx(shipped)
    assert seat_cost_usd("model:cheap", usage) == 0.0  # not an alias here: unknown, free


def test_anthropic_price_overrides_count_cache_reads_apart(reg: ModelRegistry) -> None:
    alias = reg.get("cheap")
    assert alias is not None and alias.price is not None
    assert alias.price.cached_included is False
