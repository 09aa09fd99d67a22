"""The Elimination Game's metrics, from transcripts alone (seed 001's charts, docs/rules.md §2).

`compute_metrics(transcripts)` returns the shape every game shares:
    {"overall": {...}, "per_player": {label: {...}}, "tables": {name: {columns, rows}}}

Per player label (bot:sheep, openai:gpt-5, ...; several seats of one label add up):
- `rank_distribution`: {rank: games}; `first_place`; `earliest_out` (first eliminated);
- `final2_win_rate`: games won / games reached as a finalist;
- `betrayal_rate` (docs/rules.md §2): votes cast against the seat's own private chat partner
  of that round / the seat's private chats; `betrayed_rate`: the same from the victim's
  side (votes received from that round's partner / the seat's private chats). Main votes
  only: a re-vote is among the tied, not a free choice;
- `words_per_message`: mean words over public, tie-break and final statements (the
  seed's "wordiness"; private messages have their own, smaller limits);
- `partial_points`: mean of (n - rank) / (n - 1).
`overall.over_limit_messages` counts the message events cut at their word limit (or, in an
imported log whose texts are kept whole, marked `over_limit`).

A transcript is untrusted input: a field of the wrong shape is skipped, never a crash.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from stille_post.core.events import Event
from stille_post.core.transcript import Transcript
from stille_post.games.elimination.rules import partial_points

GAME = "elimination"
MESSAGES = ("public_message", "private_message", "tie_break_message", "final_message")
WORDY = ("public_message", "tie_break_message", "final_message")


def _int(x: Any) -> int | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, str) and x.isdigit():
        return int(x)
    return None


def _ranks(t: Transcript) -> dict[int, int]:
    raw = t.summary.details.get("ranks")
    if not isinstance(raw, Mapping):
        raw = (t.result or {}).get("placements") or {}
    out: dict[int, int] = {}
    if isinstance(raw, Mapping):
        for k, v in raw.items():
            s, r = _int(k), _int(v)
            if s is not None and r is not None:
                out[s] = r
    return out


class _Player:
    def __init__(self) -> None:
        self.c: Counter[str] = Counter()
        self.ranks: Counter[int] = Counter()
        self.points = 0.0

    def to_json(self) -> dict[str, Any]:
        c = self.c

        def ratio(a: str, b: str) -> float | None:
            return c[a] / c[b] if c[b] else None

        return {
            "games": c["games"],
            "wins": c["wins"],
            "rank_distribution": {str(r): n for r, n in sorted(self.ranks.items())},
            "first_place": c["wins"],
            "earliest_out": c["earliest_out"],
            "final2": c["final2"],
            "final2_win_rate": ratio("wins", "final2"),
            "chats": c["chats"],
            "betrayals": c["betrayals"],
            "betrayed": c["betrayed"],
            "betrayal_rate": ratio("betrayals", "chats"),
            "betrayed_rate": ratio("betrayed", "chats"),
            "messages": c["messages"],
            "words_per_message": ratio("words", "messages"),
            "partial_points": self.points / c["games"] if c["games"] else None,
            "over_limit_messages": c["over_limit"],
            "empty_messages": c["empty"],
        }


def compute_metrics(transcripts: Iterable[Transcript]) -> dict[str, Any]:
    players: dict[str, _Player] = defaultdict(_Player)
    overall: Counter[str] = Counter()
    decided_by: Counter[str] = Counter()
    per_game: list[dict[str, Any]] = []
    for t in transcripts:
        if t.game != GAME:
            continue
        overall["transcripts"] += 1
        if not t.complete or (t.result or {}).get("status") != "completed":
            overall["not_completed"] += 1
            continue
        labels = {s: str(info.get("player", f"seat {s}")) for s, info in t.seats.items()}
        ranks = _ranks(t)
        n = len(labels)
        if not ranks or n < 2:
            overall["unranked"] += 1
            continue
        overall["games"] += 1
        game_cuts = _events(t.events, labels, players, overall, decided_by)
        details = t.summary.details
        finalists = [s for s in (details.get("finalists") or []) if _int(s) is not None]
        for seat, label in labels.items():
            p, rank = players[label], ranks.get(seat)
            if rank is None:
                continue
            p.c["games"] += 1
            p.ranks[rank] += 1
            p.points += partial_points(rank, n)
            p.c["wins"] += rank == 1
            p.c["earliest_out"] += rank == n
            p.c["final2"] += seat in finalists
        per_game.append({"id": t.header.get("id") or t.header.get("seed"),
                         "winner": details.get("winner"), "rounds": details.get("rounds"),
                         "over_limit_messages": game_cuts})
    out_players = {label: p.to_json() for label, p in sorted(players.items())}
    columns = ["player", "games", "first_place", "earliest_out", "final2", "final2_win_rate",
               "betrayal_rate", "betrayed_rate", "words_per_message", "partial_points",
               "over_limit_messages"]
    rows = [[label, *(m[c] for c in columns[1:])] for label, m in out_players.items()]
    return {
        "overall": {
            "games": overall["games"],
            "not_completed": overall["not_completed"],
            "messages": overall["messages"],
            "over_limit_messages": overall["over_limit"],
            "empty_messages": overall["empty"],
            "pairs": overall["pairs"],
            "unpaired": overall["unpaired"],
            "ties": overall["ties"],
            "eliminations_decided_by": dict(sorted(decided_by.items())),
        },
        "per_player": out_players,
        "tables": {"elimination_players": {"columns": columns, "rows": rows}},
        "per_game": per_game,
    }


def _events(events: Iterable[Event], labels: Mapping[int, str],
            players: Mapping[str, _Player], overall: Counter[str],
            decided_by: Counter[str]) -> int:
    """Message counts, betrayals and ties of one game; returns its cut messages."""
    partner: dict[tuple[int, int], int] = {}  # (round, seat) -> partner
    cuts = 0
    for e in events:
        d = e.data if isinstance(e.data, Mapping) else {}
        label = labels.get(e.actor) if isinstance(e.actor, int) else None
        if e.type in MESSAGES:
            overall["messages"] += 1
            # Cut by our engine, or (an imported log, kept whole) marked as over its limit.
            cut = d.get("truncated_from_words") is not None or d.get("over_limit") is True
            cuts += cut
            overall["over_limit"] += cut
            overall["empty"] += bool(d.get("empty"))
            if label is not None:
                p = players[label]
                p.c["over_limit"] += cut
                p.c["empty"] += bool(d.get("empty"))
                words = _int(d.get("words"))
                if e.type in WORDY and words is not None:
                    p.c["messages"] += 1
                    p.c["words"] += words
        elif e.type == "pairing":
            for pair in d.get("pairs") or []:
                if not (isinstance(pair, list) and len(pair) == 2):
                    continue
                a, b = _int(pair[0]), _int(pair[1])
                if a is None or b is None:
                    continue
                overall["pairs"] += 1
                partner[(e.round, a)], partner[(e.round, b)] = b, a
                for s in (a, b):
                    if s in labels:
                        players[labels[s]].c["chats"] += 1
            overall["unpaired"] += len(d.get("unpaired") or [])
        elif e.type == "vote" and d.get("stage") == "vote" and d.get("valid") is True:
            voter, target = _int(d.get("voter")), _int(d.get("target"))
            if voter is not None and target is not None \
                    and partner.get((e.round, voter)) == target:
                if voter in labels:
                    players[labels[voter]].c["betrayals"] += 1
                if target in labels:
                    players[labels[target]].c["betrayed"] += 1
        elif e.type == "tie" and d.get("stage") == "vote":
            overall["ties"] += 1
        elif e.type == "elimination":
            decided_by[f"{d.get('stage')}:{d.get('decided_by')}"] += 1
    return cuts
