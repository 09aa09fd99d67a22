"""`structured` and replica lists in models.toml (providers/models.py), the run's
`--structured` over them, and the mark a structured seat carries on every leaderboard
("model:qwen (schema)"): a model's structured and free play are never one player."""

from __future__ import annotations

from pathlib import Path

import pytest

from stille_post.cli.llm_seats import seat_generation
from stille_post.core.errors import ConfigError, UsageError
from stille_post.core.usage import Usage
from stille_post.players.specs import parse_seat_spec
from stille_post.providers.models import load_models, using_models
from stille_post.providers.pricing import model_of, seat_cost_usd
from tests import clirun

ALIASES = """
[models.qwen]
provider = "openai-compatible"
model = "qwen2.5-7b"
base_url = ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]
structured = "schema"

[models.mini]
provider = "openai"
model = "gpt-5-mini"
"""


def _registry(tmp_path: Path, text: str = ALIASES):  # type: ignore[no-untyped-def]
    path = tmp_path / "models.toml"
    path.write_text(text, encoding="utf-8")
    return load_models(path)


def test_an_alias_lists_its_replicas_and_its_decoding(tmp_path: Path) -> None:
    reg = _registry(tmp_path)
    qwen = reg.get("qwen")
    assert qwen is not None
    assert qwen.base_urls == ("http://gpu1:8000/v1", "http://gpu2:8000/v1")
    assert qwen.base_url == "http://gpu1:8000/v1" and qwen.structured == "schema"
    assert reg.replica_urls() == list(qwen.base_urls)
    assert reg.get("mini").base_urls == ()  # type: ignore[union-attr]


@pytest.mark.parametrize(("line", "says"), [
    ('base_url = []', "an empty list of base URLs"),
    ('base_url = ["http://a/v1", "http://a/v1"]', "listed twice"),
    ('base_url = ["http://a/v1", "ftp://b/v1"]', "replica 2: the URL must start with"),
    ('base_url = ["http://a/v1"]\nstructured = "fast"', "structured"),
])
def test_bad_replicas_and_modes_are_one_line(tmp_path: Path, line: str, says: str) -> None:
    text = f'[models.x]\nprovider = "openai-compatible"\nmodel = "m"\n{line}\n'
    with pytest.raises(ConfigError, match=says):
        _registry(tmp_path, text)


def test_the_run_sets_every_seat_and_off_turns_an_alias_off(tmp_path: Path) -> None:
    reg = _registry(tmp_path)
    assert reg.structured_for(reg.get("qwen")) == "schema"
    assert reg.structured_for(reg.get("mini")) == "off"
    assert reg.with_structured("legal").structured_for(reg.get("mini")) == "legal"
    assert reg.with_structured("off").structured_for(reg.get("qwen")) == "off"
    assert reg.with_structured(None).structured_for(reg.get("qwen")) == "schema"
    with pytest.raises(UsageError, match="--structured 'fast'"):
        reg.with_structured("fast")


def test_a_structured_seat_is_marked_in_its_label(tmp_path: Path) -> None:
    reg = _registry(tmp_path)
    with using_models(reg):
        assert parse_seat_spec("model:qwen", ()).label == "model:qwen (schema)"
        assert parse_seat_spec("openai:gpt-5-mini", ()).label == "openai:gpt-5-mini"
        assert parse_seat_spec("mini", ("mini",)).label == "bot:mini"  # a bot is a bot
    with using_models(reg.with_structured("legal")):
        assert parse_seat_spec("openai:gpt-5-mini", ()).label == "openai:gpt-5-mini (legal)"
        assert parse_seat_spec("openai:gpt-5-mini", ()).structured == "legal"
        # the seat's generation carries it to the player (players/llm.py)
        assert seat_generation("openai", None, "legal").structured == "legal"
    with using_models(reg.with_structured("off")):
        assert parse_seat_spec("model:qwen", ()).label == "model:qwen"
        assert parse_seat_spec("model:qwen", ()).structured is None


def test_a_structured_seat_is_priced_as_its_model() -> None:
    usage = Usage(1000, 100)
    assert model_of("openai:gpt-5-mini (schema)") == "gpt-5-mini"
    assert model_of("openai-compatible:m@http://h/v1 (legal)") == "m"
    assert seat_cost_usd("openai:gpt-5-mini (schema)", usage) == \
        seat_cost_usd("openai:gpt-5-mini", usage) > 0


@pytest.mark.parametrize("argv", [
    ("play", "--seed", "1", "--structured", "fast"),
    ("tournament", "stille-post", "--games", "2", "--structured", "fast"),
])
def test_a_bad_structured_flag_is_one_line(argv: tuple[str, ...], tmp_path: Path) -> None:
    proc = clirun.run_cli(*argv, cwd=tmp_path)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "structured" in lines[0], lines
