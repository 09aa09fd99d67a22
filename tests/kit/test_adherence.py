"""Rule adherence, counted by the kit for every game and read back by the report
(games/kit/adherence.py, tournament/adherence.py, docs/adherence.md)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.errors import ParseError
from stille_post.core.transcript import Transcript, TranscriptWriter
from stille_post.games.kit.adherence import AdherenceLog, classify
from stille_post.players.base import Action
from stille_post.providers.base import Tool, ToolCall
from stille_post.tournament.adherence import AdherenceReport
from stille_post.tournament.ratings import rated_game
from tests import clirun

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "STILLE_POST_GAMES": "tests.toy_rps:GAME"}
VOTE = Tool("cast_vote", "vote", {"type": "object"})


@pytest.mark.parametrize(("reason", "action", "tools", "kind", "expected"), [
    ("x", Action(tool_calls=(ToolCall("fly", {}),)), (VOTE,), "vote", "unknown_tool"),
    ("x", Action(tool_calls=(ToolCall("cast_vote", {}, malformed="bad JSON"),)), (VOTE,),
     "vote", "bad_arguments"),
    ("unknown target", Action(tool_calls=(ToolCall("cast_vote", {"target": 9}),)), (VOTE,),
     "vote", "bad_arguments"),
    ("no vote", Action(text="I vote 3"), (VOTE,), "vote", "text_not_vote"),
    ("no ranking", Action(text="3, 1, 2"), (VOTE,), "ranking", "no_tool"),
    ("your message has 90 words and the limit is 80", Action(text="w " * 90), (), "public",
     "over_limit"),
    ("empty", Action(text="  "), (VOTE,), "vote", "empty"),
    ("the reply has 2 words", Action(text="two words"), (), "word", "bad_text"),
    ("a vote in text", Action(text="Player seven"), (), "vote", "text_not_vote"),
    ("unreachable", None, (), "word", "no_answer"),
])
def test_classify(reason: str, action: Action | None, tools: tuple[Tool, ...], kind: str,
                  expected: str) -> None:
    assert classify(reason, action, tools, kind) == expected


class Replies:
    """A seat that answers with the given actions, in order."""

    name = "scripted"

    def __init__(self, *actions: Action) -> None:
        self.actions = list(actions)

    async def decide(self, decision: Any) -> Action:
        return self.actions.pop(0)


def _vote(action: Action) -> int:
    calls = [c for c in action.tool_calls if c.name == "cast_vote"]
    if not calls or not isinstance(calls[0].arguments.get("target"), int):
        raise ParseError("no vote: call cast_vote")
    return int(calls[0].arguments["target"])


def _message(action: Action) -> str:
    if not action.text.strip():
        raise ParseError("your message was empty")
    return action.text


FENCED_VOTE = '```json\n{"name": "cast_vote", "arguments": {"target": 2}}\n```'


@pytest.mark.parametrize(("decision", "validate", "first", "value", "errors"), [
    # an offered tool's call written as text, which the rules accept: taken as the call
    ("vote", _vote, FENCED_VOTE, 2, {}),
    # the same text where a message is asked: no message, re-asked
    ("public", _message, FENCED_VOTE, "Hello all.", {"call_as_text": 1}),
    # a tool nobody offered (Qwen's invented `write_message`) around one string: the text
    ("public", _message, '```json\n{"name": "write_message", "arguments": {"message": '
     '"Hi there"}}\n```', "Hi there", {}),
    # arguments that are a bare string (seen from Qwen): the same
    ("public", _message, '```json\n{"name": "write_message", "arguments": "Hi all"}\n```',
     "Hi all", {}),
    # ... but not where the rules refuse that text (a vote), nor with more arguments
    ("vote", _vote, '{"name": "write_message", "arguments": {"message": "3"}}', 3,
     {"call_as_text": 1}),
    ("public", _message, '{{"name": "post", "arguments": {"to": "all", "text": "Hi"}}}}\n'
     "This JSON object represents my message.", "Hello all.", {"call_as_text": 1}),
    # an offered tool whose written call the rules refuse (a target that is no number)
    ("vote", _vote, '<tool_call>{"name": "cast_vote", "arguments": {"target": "me"}}',
     3, {"call_as_text": 1}),
    # JSON that is no call stays what the game makes of it
    ("public", _message, '({"private_message": "hi"})', '({"private_message": "hi"})', {}),
])
def test_a_tool_call_written_as_text(decision: str, validate: Any, first: str, value: Any,
                                     errors: dict[str, int]) -> None:
    from stille_post.core.rng import make_rng
    from stille_post.games.kit import Table

    second = Action(text="Hello all.") if decision == "public" else \
        Action(tool_calls=(ToolCall("cast_vote", {"target": 3}),))
    table = Table("t", {1: Replies(Action(text=first), second)}, make_rng(0),
                  repair_attempts=1)

    async def run() -> Any:
        table.start(None)
        return await table.ask(1, decision, observe=lambda s, e: None, validate=validate,
                               tools=(VOTE,))

    answer = asyncio.run(run())
    assert answer.value == value
    tally = table.adherence.seats[1]
    assert dict(tally.errors) == errors
    assert tally.valid_first_try == (0 if errors else 1)
    repairs = [e.data for e in table.log.events if e.type == "repair_request"]
    assert [r["error"] for r in repairs] == list(errors)
    if errors:
        assert "tool call out as text" in repairs[0]["reason"]


def test_the_tally_counts_first_tries_reasks_and_forfeits() -> None:
    log = AdherenceLog([1])
    log.record(1, [], None)  # clean
    log.record(1, ["bad_text"], None)  # one re-ask, then usable
    log.record(1, ["bad_text", "over_limit"], "over_limit")  # re-asked, then forfeited
    log.record(1, [], "no_answer")  # the provider failed at once
    row = log.to_json([])[1]
    assert row == {"decisions": 4, "valid_first_try": 1, "reasked": 2, "reasks": 2,
                   "forfeits": 2, "over_limit": 1,
                   "errors": {"bad_text": 2, "over_limit": 1},
                   "forfeited_for": {"no_answer": 1, "over_limit": 1}}


def _toy(tmp_path: Path, replies: list[str], *, games: int = 3) -> dict[str, Any]:
    script = tmp_path / "seat1.yaml"
    script.write_text("".join(f"- {r}\n" for r in replies), encoding="utf-8")
    folder = tmp_path / "t"
    done = clirun.run_cli("tournament", "toy-rps", "--games", str(games), "--seed", "1",
                          "--rounds", "3", "--players", f"script:{script},rock",
                          "--out", str(folder), "--json", env=ENV)
    assert done.returncode == 0, done.stderr
    done = clirun.run_cli("report", str(folder), "--passes", "2", "--json", "--html",
                          str(tmp_path / "r.html"), env=ENV)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_a_script_seat_with_invalid_replies_shows_in_the_report(tmp_path: Path) -> None:
    report = _toy(tmp_path, ["not a throw", "paper", "rock", "scissors"])
    per_player = report["metrics"]["per_player"]
    script = next(v["adherence"] for k, v in per_player.items() if k.startswith("script:"))
    bot = per_player["bot:rock"]["adherence"]
    assert set(script) == {"decisions", "valid_first_try", "reasks", "forfeits", "over_limit"}
    # 3 games x 3 throws; the first throw of each game earned one re-ask.
    assert script["decisions"] == 9
    assert script["valid_first_try"]["count"] == 6 and script["valid_first_try"]["rate"] < 1
    assert script["reasks"]["count"] == 3 and script["reasks"]["rate"] > 0
    lo, hi = script["valid_first_try"]["ci"]
    assert lo < 6 / 9 < hi < 1  # a 95% Wilson interval around 2/3
    assert bot["decisions"] == 9 and bot["valid_first_try"]["rate"] == 1.0
    assert bot["forfeits"]["count"] == 0
    table = report["metrics"]["tables"]["rule adherence: refused replies by kind"]
    assert ["script" in str(r[0]) and r[2] for r in table["rows"]] == [False, 3]
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert 'id="adherence"' in page and "67% (" in page


def test_a_forfeiting_seat_and_the_error_survival_check(tmp_path: Path) -> None:
    # Two bad replies in a row: with one re-ask, the first throw is forfeited.
    report = _toy(tmp_path, ["nope", "never", "rock", "scissors"], games=2)
    script = next(v["adherence"] for k, v in report["metrics"]["per_player"].items()
                  if k.startswith("script:"))
    assert script["forfeits"]["count"] == 2 and script["reasks"]["count"] == 2
    survival = report["error_survival"]
    assert survival["games_with_forfeits"] == 2 and survival["clean_games"] == 0
    assert survival["players"]["bot:rock"]["opponent_forfeited"]["games"] == 2


def _transcript(path: Path, seats: dict[int, str], winners: list[int],
                forfeits: dict[int, int] | None) -> Transcript:
    with TranscriptWriter(path, fsync=False) as w:
        w.header(game="toy-rps", config={}, seed=str(path.name),
                 seats={str(s): {"player": p} for s, p in seats.items()})
        adherence = None if forfeits is None else {
            s: {"decisions": 3, "valid_first_try": 3 - forfeits.get(s, 0), "reasked": 0,
                "reasks": 0, "forfeits": forfeits.get(s, 0), "over_limit": 0}
            for s in seats}
        w.result(status="completed", placements={s: 1 if s in winners else 2 for s in seats},
                 summary={"winners": winners}, adherence=adherence)
    return Transcript.load(path)


def test_error_survival_splits_win_rates_and_flags_a_changed_top(tmp_path: Path) -> None:
    """a beats b only in games where b forfeited; in clean games b wins: the top
    changes when the games with forfeits are left out."""
    rep = AdherenceReport()
    seats = {1: "a", 2: "b"}
    for i in range(4):
        t = _transcript(tmp_path / f"f{i}.jsonl", seats, [1], {2: 1})
        rep.feed(t, rated_game(str(i), {"1": "a", "2": "b"}, {"1": 1, "2": 2}, ["1"]))
    t = _transcript(tmp_path / "c.jsonl", seats, [2], {})
    rep.feed(t, rated_game("c", {"1": "a", "2": "b"}, {"1": 2, "2": 1}, ["2"]))
    board = [{"player": "a"}, {"player": "b"}]
    survival = rep.survival(board, lambda: [{"player": "b"}, {"player": "a"}])
    a = survival["players"]["a"]
    assert a["opponent_forfeited"]["games"] == 4 and a["opponent_forfeited"]["win_rate"] == 1
    assert a["clean"]["games"] == 1 and a["clean"]["win_rate"] == 0
    assert "opponent_forfeited" in survival["players"]["b"]
    assert survival["players"]["b"]["opponent_forfeited"]["games"] == 0  # only b forfeited
    assert survival["top_ranks_change"] is True and survival["clean_top"] == ["b", "a"]
    same = rep.survival(board, lambda: [{"player": "a"}, {"player": "b"}])
    assert same["top_ranks_change"] is False


def test_transcripts_without_adherence_still_load_and_report(tmp_path: Path) -> None:
    """Transcripts written before the kit counted adherence have no such line: they add
    nothing, and a damaged row reads as absent."""
    old = _transcript(tmp_path / "old.jsonl", {1: "a", 2: "b"}, [1], None)
    assert "adherence" not in (old.result or {})
    rep = AdherenceReport()
    assert rep.feed(old, None) is True and rep.per_player() == {}
    bad = tmp_path / "bad.jsonl"
    lines = (tmp_path / "old.jsonl").read_text(encoding="utf-8").splitlines()
    result = json.loads(lines[-1])
    result["adherence"] = {"1": "nonsense", "2": {"decisions": -4, "forfeits": True},
                           "x": {"decisions": 2}}
    bad.write_text("\n".join([*lines[:-1], json.dumps(result)]) + "\n", encoding="utf-8")
    rep.feed(Transcript.load(bad), None)
    assert rep.per_player()["b"]["decisions"] == 0


def test_every_real_model_cassette_transcript_has_adherence() -> None:
    """The committed whole-game transcripts carry the kit's tally for every seat."""
    paths = sorted((ROOT / "cassettes" / "providers").glob("*/*.transcript.jsonl"))
    assert len(paths) >= 12
    for path in paths:
        t = Transcript.load(path)
        rows = (t.result or {}).get("adherence")
        assert isinstance(rows, dict) and set(rows) == {str(s) for s in t.seats}, path


def test_play_records_adherence_for_every_registered_game(tmp_path: Path) -> None:
    from stille_post.games import all_games
    from stille_post.session import play_game

    for name in sorted(all_games()):
        out = tmp_path / f"{name}.jsonl"
        run = asyncio.run(play_game(name, seed=3, out=out))
        rows = run.outcome.adherence
        assert rows and all(r["decisions"] > 0 for r in rows.values()), name
        assert Transcript.load(out).result["adherence"] == {  # type: ignore[index]
            str(s): r for s, r in rows.items()}
