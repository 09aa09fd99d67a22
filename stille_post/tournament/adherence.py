"""Rule adherence in the report, and the error-survival check (docs/adherence.md).

Read from each transcript's result line (`adherence`, written by the kit for every
game: games/kit/adherence.py). A transcript written before that line existed adds
nothing, so its players may have no adherence row.

- `metrics.per_player.<player>.adherence` = `{decisions, valid_first_try, reasks,
  forfeits, over_limit}`: `decisions` is a count, the others are
  `{"count", "rate", "ci"}` over decisions, with a 95% Wilson interval. `reasks` is the
  share of decisions that needed at least one re-ask.
- The error-survival check (after the "error-survival confound" of the MindGames arena):
  per player, its win rate in games where an opponent forfeited at least once against its
  win rate in clean games (no forfeit at all); and whether the leaderboard's top ranks
  change when the games with forfeits are left out.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stille_post.core.transcript import Transcript
from stille_post.games.kit.adherence import ERROR_KINDS, SeatAdherence
from stille_post.games.kit.stats import ratio, wilson
from stille_post.tournament.ratings import RatedGame

# How many places at the top of the leaderboard the error-survival flag compares.
TOP_RANKS = 3


def seat_rows(t: Transcript) -> dict[int, SeatAdherence]:
    """The result line's adherence per seat ({} for a transcript without it)."""
    raw = (t.result or {}).get("adherence")
    if not isinstance(raw, Mapping):
        return {}
    out: dict[int, SeatAdherence] = {}
    for k, v in raw.items():
        row = SeatAdherence.from_json(v)
        if row is not None and str(k).isdigit():
            out[int(k)] = row
    return out


def forfeiting_seats(t: Transcript) -> set[int]:
    return {s for s, row in seat_rows(t).items() if row.forfeits}


def _rate(count: int, n: int) -> dict[str, Any]:
    return {"count": count, "rate": ratio(count, n), "ci": wilson(count, n)}


def rates(row: SeatAdherence) -> dict[str, Any]:
    """The report's shape (a contract: the cross-game leaderboard reads it)."""
    n = row.decisions
    return {"decisions": n, "valid_first_try": _rate(row.valid_first_try, n),
            "reasks": _rate(row.reasked, n), "forfeits": _rate(row.forfeits, n),
            "over_limit": _rate(row.over_limit, n)}


@dataclass
class _Record:
    won: Counter[str] = field(default_factory=Counter)
    games: Counter[str] = field(default_factory=Counter)


@dataclass
class AdherenceReport:
    """Fed one transcript at a time (with its rated game, if it has one)."""

    players: defaultdict[str, SeatAdherence] = field(
        default_factory=lambda: defaultdict(SeatAdherence))
    rated_count: int = 0
    clean_count: int = 0
    _survival: defaultdict[str, _Record] = field(default_factory=lambda: defaultdict(_Record))

    def feed(self, t: Transcript, game: RatedGame | None) -> bool:
        """Adds one game; True when it is clean (no seat forfeited a decision)."""
        rows = seat_rows(t)
        for seat, row in rows.items():
            info = t.seats.get(seat, {})
            self.players[str(info.get("player", f"seat {seat}"))].add(row)
        forfeited = {s for s, row in rows.items() if row.forfeits}
        clean = not forfeited
        if game is not None:
            self.rated_count += 1
            self.clean_count += clean
            # The rated game's seats are in the order of the placements' seat numbers.
            seats = sorted(int(s) for s in (t.result or {}).get("placements") or {})
            won = game.won or (False,) * game.n
            for i, ((label, _rank), w) in enumerate(zip(game.seats, won, strict=True)):
                mine = {seats[i]} if i < len(seats) else set()
                if clean:
                    bucket = "clean"
                elif forfeited - mine:
                    bucket = "opponent_forfeited"
                else:
                    continue  # only this seat forfeited: neither kind of game
                self._survival[label].games[bucket] += 1
                self._survival[label].won[bucket] += bool(w)
        return clean

    def per_player(self) -> dict[str, dict[str, Any]]:
        return {label: rates(row) for label, row in sorted(self.players.items())}

    def errors_table(self) -> dict[str, Any]:
        """Refused replies by kind, per player (what the proving ground prints too)."""
        kinds = [k for k in ERROR_KINDS
                 if any(row.errors.get(k) for row in self.players.values())]
        rows = [[label, row.decisions, *(row.errors.get(k, 0) for k in kinds)]
                for label, row in sorted(self.players.items())]
        return {"columns": ["player", "decisions", *kinds], "rows": rows}

    def survival(self, board: Sequence[Mapping[str, Any]],
                 rerate_clean: Callable[[], list[dict[str, Any]]]
                 ) -> dict[str, Any]:
        """Win rates with and without opponents' forfeits, and whether the top ranks
        hold when the games with forfeits are left out. `rerate_clean()` is the
        leaderboard of the clean games alone (the caller keeps the games: the report, in
        its compact table); it is called only when some rated game had a forfeit and
        some had none."""
        players: dict[str, Any] = {}
        for label in sorted(self._survival):
            rec = self._survival[label]
            players[label] = {
                bucket: {"games": rec.games[bucket], "wins": rec.won[bucket],
                         "win_rate": ratio(rec.won[bucket], rec.games[bucket]),
                         "ci": wilson(rec.won[bucket], rec.games[bucket])}
                for bucket in ("opponent_forfeited", "clean")}
        with_forfeits = self.rated_count - self.clean_count
        top = [str(r["player"]) for r in board[:TOP_RANKS]]
        clean_top: list[str] | None = None
        if with_forfeits:
            clean_board = rerate_clean() if self.clean_count else []
            clean_top = [str(r["player"]) for r in clean_board[:TOP_RANKS]]
        changed = clean_top is not None and clean_top != top[:len(clean_top) or TOP_RANKS]
        return {"games_with_forfeits": with_forfeits, "clean_games": self.clean_count,
                "top": top, "clean_top": clean_top, "top_ranks_change": changed,
                "players": players}
