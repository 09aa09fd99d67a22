"""Each game's requests carry its legal-move schema under `--structured`, and none
without: played against the project's OpenAI-compatible emulator, which answers a forced
tool or a `response_format` the way a constrained decoder would (`decoder=True`), so
every kind of decision of each game's trial is reached."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stille_post.cli.llm_seats import llm_session
from stille_post.cli.local_models import trials
from stille_post.core.transcript import Transcript
from stille_post.games.kit.definition import MODEL_SEAT
from stille_post.session import play_game
from tests.emulators.server import Emulator

pytestmark = pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
GAMES = ("stille-post", "elimination", "connections", "chameleon")


@pytest.fixture
def emu() -> Iterator[Emulator]:
    e = Emulator("openai", decoder=True).start()
    try:
        yield e
    finally:
        e.stop()


def _play(game: str, emu: Emulator, tmp: Path, structured: str | None) -> tuple[
        list[dict[str, Any]], Transcript, int]:
    trial = trials([game])[game]
    seat = trial.players.index(MODEL_SEAT) + 1
    players = [f"openai-compatible:tiny@{emu.base_url}" if p == MODEL_SEAT else p
               for p in trial.players]
    out = tmp / f"{game}-{structured}.jsonl"
    with llm_session(online=True, record=None, replay=None, structured=structured,
                     preflight_seats=None) as factory:
        async def run() -> Any:
            try:
                return await play_game(game, seed=1, out=out, players=players,
                                       options=trial.options, llm_factory=factory)
            finally:
                assert factory is not None
                await factory.aclose()

        asyncio.run(run())
    return [r["body"] for r in emu.state.requests], Transcript.load(out), seat


def _forced(body: dict[str, Any]) -> dict[str, Any] | None:
    """The parameters of the tool a request forces, if it forces one."""
    choice = body.get("tool_choice")
    if not isinstance(choice, dict):
        return None
    name = choice["function"]["name"]
    return next(t["function"]["parameters"] for t in body["tools"]
                if t["function"]["name"] == name)


def _text_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format")
    return fmt["json_schema"]["schema"]["properties"]["answer"] if fmt else None


@pytest.mark.parametrize("game", GAMES)
def test_without_structured_no_request_carries_a_legal_move_schema(
        game: str, emu: Emulator, tmp_path: Path) -> None:
    bodies, transcript, seat = _play(game, emu, tmp_path, None)
    assert bodies
    for body in bodies:
        text = json.dumps(body)
        assert "response_format" not in body and "grammar" not in body
        assert '"enum"' not in text and '"strict"' not in text
        forced = _forced(body)
        if forced is not None and "word" in forced["properties"]:
            assert forced["properties"]["word"]["pattern"] == "^[A-Za-z]+$"  # as always
    assert "structured" not in transcript.seats[seat]
    assert "[" not in transcript.seats[seat]["player"]
    assert "structured" not in transcript.result["adherence"][str(seat)]


def test_stille_post_asks_for_a_roster_id_and_legal_guess_model_arguments(
        emu: Emulator, tmp_path: Path) -> None:
    bodies, transcript, seat = _play("stille-post", emu, tmp_path, "schema")
    guesses = [b for b in bodies if _text_schema(b) is not None]
    assert guesses, "no identity guess was asked"
    for b in guesses:
        ids = _text_schema(b)["enum"]  # type: ignore[index]
        assert "gpt-5-mini" in ids and len(ids) == len(set(ids)) > 10
    turns = [b for b in bodies if b.get("tool_choice") == "auto"]
    assert turns
    for b in turns:
        tools = {t["function"]["name"]: t["function"]["parameters"] for t in b["tools"]}
        player = tools["guess_model"]["properties"]["player_id"]
        assert seat not in player["enum"] and set(player["enum"]) <= {1, 2, 3, 4}
    # Free text stays free: the introduction carries no schema (and, for this provider
    # kind, no tools: providers/structured.py FREE_TEXT_TOOLS).
    intro = bodies[0]
    assert "response_format" not in intro and "tools" not in intro
    assert transcript.seats[seat]["structured"] == "schema"
    assert transcript.seats[seat]["player"].endswith(" (schema)")


def test_elimination_votes_and_rankings_name_only_legal_players(
        emu: Emulator, tmp_path: Path) -> None:
    bodies, transcript, seat = _play("elimination", emu, tmp_path, "schema")
    votes = [_forced(b) for b in bodies if (_forced(b) or {}).get("properties", {}).get(
        "target")]
    rankings = [_forced(b) for b in bodies if (_forced(b) or {}).get("properties", {}).get(
        "ranking")]
    assert votes and rankings
    for v in votes:
        target = v["properties"]["target"]  # type: ignore[index]
        assert seat not in target["enum"] and target["type"] == "integer"
    for r in rankings:
        ranking = r["properties"]["ranking"]  # type: ignore[index]
        assert ranking["minItems"] == ranking["maxItems"] == len(ranking["items"]["enum"])
        assert ranking["uniqueItems"] is True and seat not in ranking["items"]["enum"]
    tally = transcript.result["adherence"][str(seat)]
    assert tally["structured"] == len(votes) + len(rankings) > 0


@pytest.mark.parametrize("mode", ["schema", "legal"])
def test_connections_words_carry_the_revealed_prefix(mode: str, emu: Emulator,
                                                     tmp_path: Path) -> None:
    bodies, transcript, _seat = _play("connections", emu, tmp_path, mode)
    words = [_forced(b)["properties"]["word"] for b in bodies if _forced(b)]  # type: ignore[index]
    assert words
    prefixes = [e.data["prefix"] for e in transcript.events if e.type == "prefix"]
    for w in words:
        if mode == "schema":
            assert w["pattern"].startswith("^[" + prefixes[0].lower())
            # bounded by the dictionary's word lengths: the prefix alone is no word
            assert re.fullmatch(w["pattern"], prefixes[0]) is None
            assert "enum" not in w
        else:
            assert 0 < len(w["enum"]) <= 300
            assert all(x.startswith(prefixes[0]) for x in w["enum"])
    if mode == "legal":
        # A word scored in one attempt (used or blocked) is never offered again.
        scored = [e for e in transcript.events if e.type == "scored" and e.data["word"]]
        assert scored
        late = [w for w in words][-1]["enum"]
        assert not {e.data["word"] for e in scored[:-1]} & set(late)


def test_the_chameleon_asks_one_word_a_player_number_and_a_card_word(
        emu: Emulator, tmp_path: Path) -> None:
    bodies, transcript, seat = _play("chameleon", emu, tmp_path, "schema")
    schemas = [_text_schema(b) for b in bodies]
    assert all(s is not None for s in schemas)
    word, vote = schemas[0], schemas[1]
    assert word["pattern"] == "^[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*$"  # type: ignore[index]
    assert vote["enum"] == ["1", "2", "3", "4"]  # type: ignore[index]
    tally = transcript.result["adherence"][str(seat)]
    assert tally["structured"] == tally["decisions"] == len(bodies)
