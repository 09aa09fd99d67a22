"""One script of moves, two games: played by our engine with seats that replay the
script, and rendered as the published log format then imported. Both must give the same
Elimination metrics: the importer's events mean what the engine's mean.

The script stays within the word limits: over them, the engine cuts and the importer
keeps the whole text (by design), so the word counts would differ.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.rng import make_rng
from stille_post.core.transcript import Transcript, TranscriptWriter
from stille_post.games.elimination import GAME
from stille_post.games.elimination import prompts as P
from stille_post.games.elimination.config import EliminationConfig
from stille_post.games.elimination.game import GAME_NAME, EliminationEngine
from stille_post.players.base import Action, Decision
from stille_post.providers.base import ToolCall
from tests.importers.eg import import_logs

MODELS = {1: "model-a", 2: "model-b", 3: "model-c", 4: "model-a"}  # seat 4: self-play

# Round 1: mutual first choices pair {1,2} and {3,4} in any entry order; 4 votes out its
# partner 3. Round 2: {1,2} pair again, 4 runs out of list; 4's self-vote does not count,
# so 1 and 2 tie, say their piece, and 4's re-vote puts 2 out. Final: 1 against 4.
SCRIPT: dict[str, Any] = {
    "rounds": [
        {"public": {1: "Good luck to all of you.", 2: "I will watch the votes closely.",
                    3: "Player 4 and I think alike.", 4: "Let us be fair this round."},
         "ranking": {1: [2, 3, 4], 2: [1, 3, 4], 3: [4, 1, 2], 4: [3, 1, 2]},
         "private": {1: ["Ally?", "Vote 3.", "Deal."], 2: ["Yes, ally.", "Agreed.", "Deal."],
                     3: ["Trust me, 4.", "We vote 1.", "Sure?"],
                     4: ["I trust you.", "Fine, 1.", "Sure."]},
         "votes": {1: 3, 2: 3, 3: 1, 4: 3},
         "reasons": {1: "3 is strong.", 2: "As agreed.", 3: "1 leads a pair.",
                     4: "3 would beat me."}},
        {"public": {1: "Three left now.", 2: "Stay calm.", 4: "I am no threat."},
         "ranking": {1: [2, 4], 2: [1, 4], 4: [1, 2]},
         "private": {1: ["Still with me?", "Vote 4?", "OK."],
                     2: ["Always.", "Hmm, maybe.", "OK."]},
         "votes": {1: 2, 2: 1, 4: 4},
         "reasons": {1: "2 hesitated.", 2: "1 pushes me.", 4: "I abstain."},
         "tie_break": {1: "Keep me: I kept every deal.", 2: "Keep me: 1 is the threat."},
         "revotes": {4: 2}, "revote_reasons": {4: "2 is the stronger finalist."}},
    ],
    "final": {"statements": {1: "I played it straight.", 4: "I survived on my own."},
              "jury": {3: 4, 2: 4}, "reasons": {3: "4 betrayed me.", 2: "1 was fair."}},
}


class ScriptSeat:
    """A seat that answers every decision from SCRIPT (as an LLM seat would, by text or
    by a tool call)."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.name = MODELS[seat]

    async def decide(self, decision: Decision[Any]) -> Action:
        obs = decision.observation
        rnd, me = obs.moment.round, self.seat
        final = rnd > len(SCRIPT["rounds"])
        r = SCRIPT["final"] if final else SCRIPT["rounds"][rnd - 1]
        kind = decision.kind
        if kind == P.PUBLIC:
            return Action(text=r["public"][me])
        if kind == P.FINAL:
            return Action(text=r["statements"][me])
        if kind == P.TIE_BREAK:
            return Action(text=r["tie_break"][me])
        if kind == P.PRIVATE:
            return Action(text=r["private"][me][obs.subround - 1])
        if kind == P.RANKING:
            return _tool(P.RANK_TOOL, {"ranking": r["ranking"][me]})
        votes, reasons = {P.VOTE: ("votes", "reasons"), P.REVOTE: ("revotes", "revote_reasons"),
                          P.JURY: ("jury", "reasons")}[kind]
        return _tool(P.VOTE_TOOL, {"target": r[votes][me], "reason": r[reasons][me]})


def _tool(name: str, args: dict[str, Any]) -> Action:
    return Action(tool_calls=(ToolCall(name, args, id="script"),))


def play_engine(path: Path) -> None:
    config = EliminationConfig(num_players=4, repair_attempts=0)
    players = {s: ScriptSeat(s) for s in MODELS}
    engine = EliminationEngine(config, GAME.table(config, players, make_rng(7)))
    with TranscriptWriter(path) as w:
        w.header(game=GAME_NAME, config=config.model_dump(mode="json"), seed=7,
                 seats={str(s): {"player": m} for s, m in MODELS.items()})
        outcome = asyncio.run(engine.play(w))
        assert outcome.status == "completed", outcome.reason
        w.result(status=outcome.status, placements=outcome.placements,
                 summary=outcome.summary.to_json())


def render_log(path: Path, game_id: str = "1754999999000001") -> None:
    """SCRIPT in the published log format, as the anchor's engine would have logged it."""
    def pid(seat: int) -> str:
        return f"Player{seat}_Game{game_id}_{MODELS[seat]}"

    lines: list[dict[str, Any]] = []

    def add(type_: str, **fields: Any) -> None:
        lines.append({"game_id": game_id, "type": type_, **fields})

    active = sorted(MODELS)
    for n, r in enumerate(SCRIPT["rounds"], start=1):
        for seat, text in r["public"].items():
            add("conversation", round=n, subround=0, player_id=pid(seat), message=text)
        pairs = _pairs(r["ranking"])
        add("preference_result", round=n, matched_pairs=[[f"P{a}", f"P{b}"] for a, b in pairs])
        for sub in range(3):
            for a, b in pairs:
                for x, y in ((a, b), (b, a)):
                    add("private", round=n, subround=sub + 1, speaker_id=pid(x),
                        target_id=pid(y), message=r["private"][x][sub])
        for seat, why in r["reasons"].items():
            add("private_vote_reason", voter_id=pid(seat), target_id=pid(r["votes"][seat]),
                reason=why)
        for seat, target in r["votes"].items():
            add("vote", round=n, voter_id=pid(seat), target_id=pid(target), public_vote=False)
        for seat, text in r.get("tie_break", {}).items():
            add("conversation", round=n, subround=0, player_id=pid(seat), message=text)
        for seat, why in r.get("revote_reasons", {}).items():
            add("private_revote_reason", voter_id=pid(seat),
                target_id=pid(r["revotes"][seat]), reason=why)
        for seat, target in r.get("revotes", {}).items():
            add("vote", round=n, voter_id=pid(seat), target_id=pid(target), public_vote=False)
        out = _loser(r, active)
        active.remove(out)
        add("elimination", round=n, eliminated_player=pid(out), tie_break="tie_break" in r,
            random_pick=False)
    f = SCRIPT["final"]
    for seat, text in f["statements"].items():
        add("conversation", round=len(SCRIPT["rounds"]) + 1, subround=0, player_id=pid(seat),
            message=text)
    for seat, target in f["jury"].items():
        add("private_jury_reason", voter_id=pid(seat), target_id=pid(target),
            reason=f["reasons"][seat])
    loser = max(set(f["jury"].values()), key=list(f["jury"].values()).count)
    winner = next(s for s in active if s != loser)
    out_order = [_loser(r, sorted(MODELS)) for r in SCRIPT["rounds"]]  # 3, then 2
    ranks = {winner: 1, loser: 2, **{s: len(MODELS) - i for i, s in enumerate(out_order)}}
    add("final_results", winners=[f"P{winner}"], winners_full=[pid(winner)],
        final_ranks={pid(s): rk for s, rk in ranks.items()})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def _pairs(ranking: dict[int, list[int]]) -> list[tuple[int, int]]:
    """The script's pairs: mutual first choices (what deferred acceptance gives here)."""
    return sorted({(min(s, r[0]), max(s, r[0])) for s, r in ranking.items()
                   if ranking.get(r[0], [0])[0] == s})


def _loser(r: dict[str, Any], active: list[int]) -> int:
    """Who the script's votes put out (the anchor's log states it; no ties left open)."""
    def top(votes: dict[int, int], allowed: list[int]) -> list[int]:
        counts = Counter(t for v, t in votes.items() if t != v and t in allowed)
        best = max(counts.values())
        return sorted(t for t, c in counts.items() if c == best)

    best = top(r["votes"], active)
    if len(best) > 1:
        best = top(r["revotes"], best)
    assert len(best) == 1
    return best[0]


def test_engine_and_import_give_the_same_metrics(tmp_path: Path) -> None:
    metrics = pytest.importorskip(
        "stille_post.games.elimination.metrics",
        reason="the Elimination engine's metrics module is not written yet")
    engine_path = tmp_path / "engine.jsonl"
    play_engine(engine_path)
    render_log(tmp_path / "log.jsonl")
    stats = import_logs([tmp_path / "log.jsonl"], tmp_path / "imported")
    assert stats.imported == 1, stats.skips
    played = Transcript.load(engine_path)
    imported = Transcript.load(tmp_path / "imported" / "games" / "eg-1754999999000001.jsonl")

    # The same game: who went out, how, and the ranks.
    assert played.summary.eliminated == imported.summary.eliminated == (3, 2, 4)
    assert played.result is not None and imported.result is not None
    assert played.result["placements"] == imported.result["placements"]
    for key in ("decided_by", "cumulative", "jury_votes", "finalists", "winner", "rounds"):
        assert played.summary.details[key] == imported.summary.details[key], key
    assert played.summary.turns == imported.summary.turns

    a = metrics.compute_metrics([played])
    b = metrics.compute_metrics([imported])
    a.pop("per_game", None)
    b.pop("per_game", None)
    assert a == b
    # and the script did exercise what the metrics count
    # seat 4 voted against its partner 3 in round 1, seat 1 against its partner 2 in round 2
    assert a["per_player"]["model-a"]["betrayals"] == 2
    assert (a["per_player"]["model-b"]["betrayed"], a["per_player"]["model-c"]["betrayed"]) \
        == (1, 1)
    assert a["overall"]["ties"] == 1 and a["overall"]["pairs"] == 3
    assert a["overall"]["eliminations_decided_by"] == {"jury:votes": 1, "vote:revote": 1,
                                                       "vote:votes": 1}


def test_the_event_streams_agree(tmp_path: Path) -> None:
    """Beyond the metrics: the same event types per round, and the same messages."""
    play_engine(tmp_path / "engine.jsonl")
    render_log(tmp_path / "log.jsonl")
    import_logs([tmp_path / "log.jsonl"], tmp_path / "imported")
    played = Transcript.load(tmp_path / "engine.jsonl")
    imported = Transcript.load(tmp_path / "imported" / "games" / "eg-1754999999000001.jsonl")

    def kinds(t: Transcript) -> list[tuple[int, str]]:
        # ranking events are the engine's own (the log has no full rankings), and so are
        # decision records (the kit's record of each ask: nothing was asked here)
        return sorted((e.round, e.type) for e in t.events
                      if e.type not in ("ranking", "decision"))

    def said(t: Transcript) -> list[tuple[str, int | None, str]]:
        return sorted((e.type, e.actor, str(e.data["text"])) for e in t.events
                      if e.type.endswith("_message"))

    assert kinds(played) == kinds(imported)
    assert said(played) == said(imported)
    votes = sorted((e.round, e.data["stage"], e.data["voter"], e.data["target"],
                    e.data["valid"]) for e in played.events if e.type == "vote")
    assert votes == sorted((e.round, e.data["stage"], e.data["voter"], e.data["target"],
                            e.data["valid"]) for e in imported.events if e.type == "vote")
