"""The decision record every ask writes (games/kit/table.py), and the re-play built on it
(export/replay.py): one log-only record per decision of every seat, with each reply and
its fate, enough to play the game again and get the same transcript."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import Transcript, dumps
from stille_post.export.records import decision_records
from stille_post.export.replay import replay
from stille_post.games import all_games, get_game
from stille_post.session import play_game

GAMES = ("chameleon", "stille-post", "elimination", "connections")
OPTIONS: dict[str, dict[str, Any]] = {"elimination": {"num_players": 4, "private_subrounds": 1},
                                      "connections": {"word": "goldfish", "max_attempts": 2}}


def play(tmp_path: Path, game: str, seed: int = 3, players: list[str] | None = None,
         options: dict[str, Any] | None = None, name: str = "t.jsonl") -> Path:
    out = tmp_path / name
    asyncio.run(play_game(game, seed=seed, out=out, players=players,
                          options=options if options is not None else OPTIONS.get(game, {})))
    return out


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("game", GAMES)
def test_every_ask_writes_one_log_only_record(tmp_path: Path, game: str) -> None:
    path = play(tmp_path, game)
    t = Transcript.load(path)
    records = decision_records(t.events)
    assert t.header["format"] == 3
    per_seat: dict[int, int] = {}
    for r in records:
        assert r.event.visibility.seats == frozenset()  # the log only: no player sees it
        per_seat[r.seat] = per_seat.get(r.seat, 0) + 1
    assert per_seat == {int(s): a["decisions"] for s, a in t.result["adherence"].items()
                        if a["decisions"]}
    for seat in t.seats:  # never in a seat's view, so never in a prompt
        assert all(e.type != "decision" for e in t.view(seat))


def _script(tmp_path: Path, entries: list[Any]) -> str:
    path = tmp_path / "seat.yaml"
    path.write_text(json.dumps(entries), encoding="utf-8")  # JSON is YAML
    return f"script:{path}"


def test_re_asks_and_forfeits_are_recorded_and_replayed(tmp_path: Path) -> None:
    # Seat 1 of a Chameleon game: two words (re-asked), then one; its vote fails twice
    # (a provider failure after retries: no reply at all).
    seat = _script(tmp_path, ["two words", "apple", {"error": "503 overloaded"}])
    path = play(tmp_path, "chameleon", seed=5, players=[seat, "bot", "bot", "bot"])
    t = Transcript.load(path)
    mine = [r for r in decision_records(t.events) if r.seat == 1]
    word, vote = mine[0], mine[1]
    assert [r.action.text for r in word.replies] == ["two words", "apple"]
    assert word.replies[0].error == "bad_text" and word.replies[0].reason
    assert (word.replies[1].error, word.forfeited) == (None, None)
    assert vote.replies == () and vote.forfeited == "no_answer"
    assert vote.failure is not None and "503 overloaded" in vote.failure
    assert vote.asks == 1
    # The script file is not needed to re-play: the records answer for the seat.
    Path(seat.removeprefix("script:")).unlink()
    got = asyncio.run(replay(Transcript.load(path, keep_lines=True), get_game("chameleon")))
    assert got.problem is None
    assert got.prompts is not None
    asks = [len(p) for r, p in zip(got.records, got.prompts, strict=True) if r.seat == 1]
    assert asks[:2] == [2, 1]
    first, reask = got.prompts[got.records.index(next(r for r in got.records if r.seat == 1))]
    assert first.request is not None and reask.request is not None
    said = [m.content for m in reask.request.messages]
    assert any("reply has 2 words" in m for m in said)  # the re-ask says why
    assert not any("reply has 2 words" in m.content for m in first.request.messages)


@pytest.mark.parametrize("game", GAMES)
def test_a_bot_game_replays_with_a_prompt_for_every_ask(tmp_path: Path, game: str) -> None:
    path = play(tmp_path, game)
    got = asyncio.run(replay(Transcript.load(path, keep_lines=True), get_game(game)))
    assert got.problem is None and got.prompts is not None
    assert all(len(p) == r.asks and all(x.request is not None for x in p)
               for r, p in zip(got.records, got.prompts, strict=True))


def test_an_older_transcript_of_bots_replays_by_re_running_them(tmp_path: Path) -> None:
    """Format 2 (no records): bots are re-run, and the prompts are the same as from a
    format-3 transcript of the same game."""
    path = play(tmp_path, "elimination")
    old = tmp_path / "old.jsonl"
    kept = []
    for obj in lines(path):
        if obj.get("type") == "decision":
            continue
        if obj["kind"] == "header":
            obj["format"] = 2
        if obj["kind"] == "event":
            obj["seq"] = len(kept)  # renumbered as a format-2 writer numbered them
        kept.append(obj)
    old.write_text("".join(dumps(o) + "\n" for o in kept), encoding="utf-8")
    game = get_game("elimination")
    new = asyncio.run(replay(Transcript.load(path, keep_lines=True), game))
    was = asyncio.run(replay(Transcript.load(old, keep_lines=True), game))
    assert was.problem is None and was.prompts is not None and new.prompts is not None
    assert [r.kind for r in was.records] == [r.kind for r in new.records]
    assert [[p.request for p in ps] for ps in was.prompts] == \
        [[p.request for p in ps] for ps in new.prompts]


def test_an_older_transcript_with_a_model_seat_has_no_prompts(tmp_path: Path) -> None:
    from tests.export.cassette_games import cassette_games

    source = next(g for g in cassette_games() if g.name == "openai/game_4seat")
    old = tmp_path / "old.jsonl"
    objs = [o for o in lines(source.transcript) if o.get("type") != "decision"]
    objs[0]["format"] = 2
    old.write_text("".join(dumps(o) + "\n" for o in objs), encoding="utf-8")
    got = asyncio.run(replay(Transcript.load(old, keep_lines=True), get_game("stille-post")))
    assert got.prompts is None and got.problem is not None
    assert "before decision records" in got.problem


@pytest.mark.parametrize("edit, named", [
    (lambda o: o["data"].__setitem__("text", o["data"]["text"] + " (edited)"), "differs"),
    (lambda o: o.__setitem__("round", o["round"] + 1), "differs"),
])
def test_a_replay_that_differs_is_named(tmp_path: Path, edit: Any, named: str) -> None:
    path = play(tmp_path, "chameleon")
    objs = lines(path)
    target = next(o for o in objs if o.get("type") == "word")
    edit(target)
    path.write_text("".join(dumps(o) + "\n" for o in objs), encoding="utf-8")
    got = asyncio.run(replay(Transcript.load(path, keep_lines=True), get_game("chameleon")))
    assert got.prompts is None and got.problem is not None
    assert named in got.problem and f"seq {target['seq']}" in got.problem


def test_an_edited_reply_is_named(tmp_path: Path) -> None:
    path = play(tmp_path, "chameleon")
    objs = lines(path)
    record = next(o for o in objs if o.get("type") == "decision")
    record["data"]["attempts"][0]["text"] = "zebra"
    path.write_text("".join(dumps(o) + "\n" for o in objs), encoding="utf-8")
    got = asyncio.run(replay(Transcript.load(path, keep_lines=True), get_game("chameleon")))
    assert got.problem is not None and "differs" in got.problem


def test_a_changed_config_is_named(tmp_path: Path) -> None:
    path = play(tmp_path, "chameleon")
    objs = lines(path)
    objs[0]["config"]["words"] = objs[0]["config"]["words"] - 1
    path.write_text("".join(dumps(o) + "\n" for o in objs), encoding="utf-8")
    got = asyncio.run(replay(Transcript.load(path, keep_lines=True), get_game("chameleon")))
    assert got.problem is not None


def test_the_kit_declares_its_record_for_every_game() -> None:
    for game in all_games().values():
        assert game.events["decision"].generic == "silent", game.name
