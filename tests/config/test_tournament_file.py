"""`load_tournament_file`: what it accepts, what it refuses, and the line it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from stille_post.configfiles import load_tournament_file
from stille_post.core.errors import ConfigError
from stille_post.core.tomlfile import key_line
from stille_post.tournament.settings import TournamentSettings
from tests.config._cli import ROOT


def _load(tmp_path: Path, text: str) -> TournamentSettings:
    path = tmp_path / "sub" / "t.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return load_tournament_file(path)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_the_shipped_example_loads_with_paths_beside_it() -> None:
    f = load_tournament_file(ROOT / "examples" / "tournament.toml")
    assert f.game == "chameleon" and f.games == 40 and f.concurrency == 4
    assert f.roles == {"chameleon": "copycat"}
    assert f.options == {"words": 16, "tie_rule": "dealer"}
    assert f.models == ROOT / "examples" / "models.toml"
    assert f.out is not None and f.out.parts[-3:] == ("runs", "tournaments",
                                                     "example-chameleon")
    # What the CLI merges as the file's layer: only the keys the file gives.
    assert "pool" not in f.model_fields_set and "concurrency" in f.model_fields_set


def test_relative_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "sub" / "m").mkdir(parents=True)
    (tmp_path / "sub" / "m" / "models.toml").write_text("", encoding="utf-8")
    f = _load(tmp_path, 'out = "../res"\nmodels = "m/models.toml"\n')
    assert f.out == tmp_path / "res"
    assert f.models == tmp_path / "sub" / "m" / "models.toml"


def test_options_pass_through_as_written(tmp_path: Path) -> None:
    f = _load(tmp_path, 'game = "stille-post"\n[options]\npinned = { 1 = "gpt-5" }\n'
                        'max_rounds = 6\n')
    assert f.options == {"pinned": {"1": "gpt-5"}, "max_rounds": 6}


@pytest.mark.parametrize(("text", "expected"), [
    ('games = 4\n\n[roles]\nchameleon = "copycat"\nbogus = 1\n',
     "t.toml:5: roles.bogus: Input should be a valid string, got 1"),
    ('games = 4\n[rate_limits]\nopenai = "fast"\n', "t.toml:3: rate_limits.openai: 'fast'"),
    ('[rate_limits]\nmistral = "10"\n', "t.toml:2: rate_limits.mistral: unknown provider"),
    ('seating = "round-robin"\n',
     "t.toml:1: seating: Input should be 'balanced', 'sampled' or 'adaptive'"),
    ("games = 0\n", "t.toml:1: games: Input should be greater than or equal to 1, got 0"),
    ("games = 4.0\n", "t.toml:1: games: Input should be a valid integer"),
    ('players = ["a"]\npool = ["b", "c"]\n', "t.toml:2: pool: give either players"),
    ('players = ["a,b"]\n', "t.toml:1: players: 'a,b': one seat per list item"),
    ('players = []\n', "t.toml:1: players: List should have at least 1 item"),
    ('game = "chess"\n', "t.toml:1: game: unknown game 'chess'"),
    ('game = "chameleon"\npreset = "nope"\n', "t.toml:2: preset: chameleon has no preset"),
    ('game = "chameleon"\n[roles]\nspy = "heuristic"\n', "t.toml:3: roles.spy: chameleon has "
     "no role 'spy'; roles: others, chameleon"),
    ('game = "chameleon"\n[options]\nguess_every = 2\n',
     "t.toml:3: options.guess_every: chameleon has no option 'guess_every'"),
    ('models = "nowhere.toml"\n', "t.toml:1: models: no models file at"),
    ("[out]\nx = 1\n", "t.toml:1: out: expected a path (a string), got {'x': 1}"),
])
def test_refusals_name_line_key_and_problem(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in _error(tmp_path, text)


def test_an_unknown_nested_key_is_found_in_its_table(tmp_path: Path) -> None:
    message = _error(tmp_path, 'game = "chameleon"\n\n[options]\nwords = 8\n\n'
                               '[rate-limits]\nopenai = "1"\n')
    assert ("t.toml:6: rate-limits: unknown key (known: budget_usd, concurrency, fsync, game, "
            "games,") in message


def test_key_line_follows_tables_dotted_keys_and_quotes() -> None:
    text = ('a = 1\n[models."x.y"]\nprovider = "openai"\nprice = { input = 1 }\n'
            "[models.z]\nprice.input = 2\n")
    assert key_line(text, ("a",)) == 1
    assert key_line(text, ("models", "x.y", "provider")) == 3
    assert key_line(text, ("models", "x.y", "price", "input")) == 4  # inside an inline table
    assert key_line(text, ("models", "z", "price", "input")) == 6
    assert key_line(text, ("models", "z")) == 5
    assert key_line(text, ("nowhere",)) is None
