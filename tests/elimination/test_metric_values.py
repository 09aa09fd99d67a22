"""Every Elimination Game metric (metrics.py), computed on a hand-made transcript and
checked against values worked out by hand in the comments. The whole output is compared,
so a metric added later without a value here fails this test until it is worked out too.

The game: 4 seats, `bot:x` at seats 1 and 3, `bot:y` at 2, `bot:z` at 4.
  round 1  public statements: 1 (10 words), 2 (20 words, cut from 90), 3 (empty), 4 (30);
           pairs (1, 2) and (3, 4); private messages by 1 (5 words) and 2 (7 words);
           votes 1->2 (against its partner: a betrayal), 2->3, 3->2, 4->2, and an
           invalid vote by 2; seat 2 is out with 3 votes.
  round 2  pair (1, 4), seat 3 unpaired; votes 1->4 (a betrayal), 4->3, and 3 for
           itself (invalid); 3 and 4 tie, and seat 1 re-votes 4 (a re-vote is among the
           tied, not a free choice: no betrayal); seat 4 is out.
  final    statements by 1 (40 words) and 3 (50 words, marked over its limit, as an
           imported log is); the jury eliminates 3: seat 1 wins.
Ranks: 1 -> 1st, 3 -> 2nd, 4 -> 3rd, 2 -> 4th. A second transcript was aborted, and one
of another game is ignored.
"""

from __future__ import annotations

from typing import Any

from stille_post.core.events import Event, Visibility
from stille_post.core.transcript import Transcript
from stille_post.games.elimination.metrics import compute_metrics
from tests.stille_post.valuecheck import close


def ev(seq: int, etype: str, rnd: int, actor: int | None, **data: Any) -> Event:
    return Event(seq, etype, rnd, 0, actor, Visibility.public(), data)


def game() -> Transcript:
    events = [
        ev(1, "public_message", 1, 1, words=10),
        ev(2, "public_message", 1, 2, words=20, truncated_from_words=90),
        ev(3, "public_message", 1, 3, words=0, empty=True),
        ev(4, "public_message", 1, 4, words=30),
        ev(5, "pairing", 1, None, pairs=[[1, 2], [3, 4]], unpaired=[]),
        ev(6, "private_message", 1, 1, words=5),
        ev(7, "private_message", 1, 2, words=7),
        ev(8, "vote", 1, 1, stage="vote", voter=1, target=2, valid=True),
        ev(9, "vote", 1, 2, stage="vote", voter=2, target=3, valid=True),
        ev(10, "vote", 1, 3, stage="vote", voter=3, target=2, valid=True),
        ev(11, "vote", 1, 4, stage="vote", voter=4, target=2, valid=True),
        ev(12, "vote", 1, 2, stage="vote", voter=2, target=1, valid=False),
        ev(13, "elimination", 1, 2, seat=2, stage="vote", decided_by="votes"),
        ev(14, "pairing", 2, None, pairs=[[1, 4]], unpaired=[3]),
        ev(15, "vote", 2, 1, stage="vote", voter=1, target=4, valid=True),
        ev(16, "vote", 2, 4, stage="vote", voter=4, target=3, valid=True),
        ev(17, "vote", 2, 3, stage="vote", voter=3, target=3, valid=False),
        ev(18, "tie", 2, None, stage="vote", tied=[3, 4]),
        ev(19, "vote", 2, 1, stage="revote", voter=1, target=4, valid=True),
        ev(20, "elimination", 2, 4, seat=4, stage="vote", decided_by="revote"),
        ev(21, "final_message", 3, 1, words=40),
        ev(22, "final_message", 3, 3, words=50, over_limit=True),
        ev(23, "elimination", 3, 3, seat=3, stage="final", decided_by="votes"),
    ]
    header = {"kind": "header", "game": "elimination", "seed": 7,
              "seats": {"1": {"player": "bot:x"}, "2": {"player": "bot:y"},
                        "3": {"player": "bot:x"}, "4": {"player": "bot:z"}}}
    result = {"kind": "result", "status": "completed",
              "placements": {"1": 1, "2": 4, "3": 2, "4": 3},
              "summary": {"winners": [1], "details": {
                  "ranks": {"1": 1, "2": 4, "3": 2, "4": 3}, "finalists": [1, 3],
                  "winner": 1, "rounds": 3}}}
    return Transcript(header=header, events=events, result=result)


def aborted() -> Transcript:
    return Transcript(header={"game": "elimination", "seats": {"1": {"player": "bot:x"}}},
                      events=[ev(1, "public_message", 1, 1, words=99)],
                      result={"status": "aborted", "summary": {}})


def other() -> Transcript:
    return Transcript(header={"game": "connections", "seats": {"1": {"player": "bot:x"}}},
                      result={"status": "completed", "summary": {}})


def test_every_metric_on_a_hand_made_game() -> None:
    m = compute_metrics([game(), aborted(), other()])
    x = {  # seats 1 (1st) and 3 (2nd)
        "games": 2, "wins": 1, "rank_distribution": {"1": 1, "2": 1}, "first_place": 1,
        "earliest_out": 0,
        "final2": 2, "final2_win_rate": 0.5,   # 1 win / 2 finals reached
        # chats: seat 1 in rounds 1 and 2, seat 3 in round 1 (unpaired in round 2) = 3.
        # betrayals: 1->2 (round 1) and 1->4 (round 2); the re-vote 1->4 does not count.
        "chats": 3, "betrayals": 2, "betrayed": 0,
        "betrayal_rate": 2 / 3,              # 2 betrayals / 3 private chats (not / games)
        "betrayed_rate": 0.0,                # 0 / 3
        # public, tie-break and final statements: 10 + 0 + 40 + 50 = 100 words in 4
        "messages": 4, "words_per_message": 25.0,
        "partial_points": 5 / 6,             # ((4-1)/3 + (4-2)/3) / 2 = (1 + 2/3) / 2
        "over_limit_messages": 1,            # seat 3's final statement
        "empty_messages": 1,                 # seat 3's public statement
    }
    y = {  # seat 2, first out
        "games": 1, "wins": 0, "rank_distribution": {"4": 1}, "first_place": 0,
        "earliest_out": 1, "final2": 0, "final2_win_rate": None,
        "chats": 1, "betrayals": 0, "betrayed": 1,   # its partner 1 voted it out
        "betrayal_rate": 0.0, "betrayed_rate": 1.0,  # 0 / 1 and 1 / 1
        "messages": 1, "words_per_message": 20.0,    # the private message is not counted
        "partial_points": 0.0,                       # (4-4)/3
        "over_limit_messages": 1, "empty_messages": 0,
    }
    z = {  # seat 4, 3rd
        "games": 1, "wins": 0, "rank_distribution": {"3": 1}, "first_place": 0,
        "earliest_out": 0, "final2": 0, "final2_win_rate": None,
        # partner 3 in round 1 (voted 2), partner 1 in round 2 (voted 4): betrayed once
        "chats": 2, "betrayals": 0, "betrayed": 1,
        "betrayal_rate": 0.0, "betrayed_rate": 0.5,  # 0 / 2 and 1 / 2
        "messages": 1, "words_per_message": 30.0,
        "partial_points": 1 / 3,                     # (4-3)/3
        "over_limit_messages": 0, "empty_messages": 0,
    }
    columns = ["player", "games", "first_place", "earliest_out", "final2", "final2_win_rate",
               "betrayal_rate", "betrayed_rate", "words_per_message", "partial_points",
               "over_limit_messages"]
    expected = {
        "overall": {
            "games": 1,
            "not_completed": 1,          # the aborted transcript
            "messages": 8,               # 4 public + 2 private + 2 final
            "over_limit_messages": 2,    # seat 2's cut statement, seat 3's marked one
            "empty_messages": 1,
            "pairs": 3, "unpaired": 1, "ties": 1,
            "eliminations_decided_by": {"final:votes": 1, "vote:revote": 1, "vote:votes": 1},
        },
        "per_player": {"bot:x": x, "bot:y": y, "bot:z": z},
        "tables": {"elimination_players": {"columns": columns, "rows": [
            [label, *(p[c] for c in columns[1:])]
            for label, p in (("bot:x", x), ("bot:y", y), ("bot:z", z))]}},
        "per_game": [{"id": 7, "winner": 1, "rounds": 3, "over_limit_messages": 2}],
    }
    close(m, expected)
