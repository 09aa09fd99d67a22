"""Conformance: what every game must do, checked once for all of them (the registry plus
the toy game). A new game folder gets these checks without writing them again.

- the definition is consistent (player range, roles and bots, presets, layout, data);
- determinism: the same seed gives a byte-identical transcript, another seed another;
- the outcome has the shared shape (placements of every seat, winners and eliminated
  among the seats, a JSON-safe summary that round-trips);
- every event type the game emits is declared in its vocabulary;
- information isolation: no request a seat would send to a model holds a private
  sentence it may not see (checked with every seat's prompts rendered from its
  decisions, whatever plays it);
- the kit builds the table: from the config's shared options and the game's wording,
  and no module of the game calls `Table(...)` itself.
"""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.events import Event
from stille_post.core.outcome import OutcomeSummary
from stille_post.core.rng import make_rng
from stille_post.core.transcript import canonical_text
from stille_post.games.kit.config import GameConfig
from stille_post.games.kit.definition import GameDefinition
from stille_post.games.kit.rulebook import scenario_files
from stille_post.games.kit.scenarios import hooks_of
from stille_post.games.kit.setup import build_config, prepare
from stille_post.games.kit.table import default_repair_text
from stille_post.players.base import Action, Decision, Player
from stille_post.providers.base import request_text
from stille_post.session import play_game

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

SEEDS = (1, 2, 3)


def test_definition_is_consistent(game: GameDefinition) -> None:
    field = game.config.model_fields.get("num_players")
    assert field is not None, "every config has num_players"
    if game.package.startswith("stille_post.games."):
        assert issubclass(game.config, GameConfig), "a built-in game's options are a GameConfig"
    assert field.get_default() == game.players.default
    assert len(game.seats_by_default(game.players.default)) == game.players.default
    for role in game.roles:
        assert role.default_bot in game.bots, role
    for preset in game.presets.values():
        build_config(game, {}, None, preset.name)  # every preset is a valid config
    json.dumps(game.describe())
    if game.layout is not None:
        assert game.layout_source(), "a declared layout ships with the game"
    for ref in (game.metrics_fn, game.charts_fn):
        ref()  # a declared hook imports
    assert game.title and game.description


def test_built_in_games_have_a_rulebook(game: GameDefinition) -> None:
    if not game.package.startswith("stille_post.games."):
        pytest.skip("a plugin's rulebook lives with the plugin")
    assert scenario_files(game), f"no spec/*.yaml scenarios in {game.package}"
    hooks_of(game)  # a declared hook imports and is a RulebookHooks


def test_the_kit_builds_the_table(game: GameDefinition) -> None:
    # Options off their defaults, so a table that ignores the config shows.
    options = {"repair_attempts": 0, "decision_timeout_s": 123.0}
    table = prepare(game, seed=5, rng=make_rng(5), options=options).engine.table
    assert (table.game, table.repair_attempts, table.timeout_s) == (game.name, 0, 123.0)
    assert table.repair_text is (game.repair_text or default_repair_text)
    if game.invalid_text is not None:
        assert table.invalid_text is game.invalid_text
    calls = []
    folder = resources.files(game.package)
    for path in Path(str(folder)).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                if name == "Table":
                    calls.append(f"{path.name}:{node.lineno}")
    assert not calls, f"a game builds no Table of its own (GameDefinition.table): {calls}"


def test_same_seed_same_transcript(game: GameDefinition, tmp_path: Path) -> None:
    texts = []
    for name, seed in (("a", 11), ("b", 11), ("c", 12)):
        out = tmp_path / f"{name}.jsonl"
        run = asyncio.run(play_game(game.name, seed=seed, out=out))
        assert run.outcome.status == "completed", run.outcome.reason
        texts.append(canonical_text(out))
    assert texts[0] == texts[1]
    assert texts[0] != texts[2]


_PLAYED: dict[tuple[str, int], tuple[Any, list[Event], dict[int, list[str]]]] = {}


def _played(game: GameDefinition, seed: int
            ) -> tuple[Any, list[Event], dict[int, list[str]]]:
    """The game played once per seed with every seat probed (`PromptProbe`: it plays as
    the seat's player does, so the outcome and events are the unprobed game's), shared by
    the outcome and the isolation checks."""
    key = (game.name, seed)
    if key not in _PLAYED:
        prepared = prepare(game, seed=seed, rng=make_rng(seed))
        requests: dict[int, list[str]] = {}
        table = prepared.engine.table
        table.players = {s: PromptProbe(p, game, requests.setdefault(s, []))
                         for s, p in table.players.items()}
        events: list[Event] = []
        outcome = asyncio.run(prepared.play(events.append))
        _PLAYED[key] = (outcome, events, requests)
    return _PLAYED[key]


@pytest.mark.parametrize("seed", SEEDS)
def test_outcome_shape_and_vocabulary(game: GameDefinition, seed: int) -> None:
    outcome, events, _ = _played(game, seed)
    assert outcome.status == "completed", outcome.reason
    seats = set(range(1, len(outcome.placements) + 1))
    assert set(outcome.placements) == seats
    places = sorted(outcome.placements.values())
    assert places[0] == 1 and all(1 <= p <= len(seats) for p in places)
    # competition ranks: a place k means k-1 seats placed strictly better
    for place in set(places):
        assert sum(p < place for p in places) == place - 1
    s = outcome.summary
    assert set(s.winners) <= seats and set(s.eliminated) <= seats
    assert len(set(s.eliminated)) == len(s.eliminated)
    assert set(s.notes) <= seats
    assert OutcomeSummary.from_json(json.loads(json.dumps(s.to_json()))) == s
    undeclared = {e.type for e in events} - set(game.events)
    assert not undeclared, f"event types missing from the vocabulary: {sorted(undeclared)}"


class PromptProbe:
    """Plays as the wrapped player does, and renders the request an LLM in this seat
    would have been sent for the same decision."""

    def __init__(self, inner: Player, game: GameDefinition, sink: list[str]) -> None:
        self.inner, self.game, self.sink = inner, game, sink
        self.name = getattr(inner, "name", "probe")

    async def decide(self, decision: Decision[Any]) -> Action:
        self.sink.append(request_text(self.game.prompts.render(decision)))
        return await self.inner.decide(decision)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _sentences(event: Event) -> set[str]:
    """The private text an event carries: whole sentences, not ids or single words that
    legitimately appear elsewhere (a model name in a roster, a card word)."""
    return {s for s in _strings(dict(event.data)) if len(s) >= 12 and " " in s.strip()}


@pytest.mark.parametrize("seed", SEEDS)
def test_no_request_holds_text_its_seat_may_not_see(game: GameDefinition, seed: int) -> None:
    _, events, requests = _played(game, seed)
    assert any(requests.values()), "the probe saw no decision"
    private = [e for e in events if not e.visibility.is_public]
    for seat, texts in requests.items():
        seen = {s for e in events if e.visibility.allows(seat) for s in _strings(dict(e.data))}
        sent = "\n".join(texts)
        for e in private:
            if e.visibility.allows(seat):
                continue
            for sentence in _sentences(e) - seen:
                assert sentence not in sent, (
                    f"seat {seat} was sent {sentence!r} from a {e.type} event for "
                    f"{e.visibility.to_json()}")
