"""Who sits where in each game of a pool tournament.

- `sampled`: each game draws its seats uniformly from the pool (the seed rules' way of
  choosing models), from an rng derived from the tournament seed and the game index.
- `balanced`: a greedy rotation. Each game starts from the least-played model and adds
  the models that have met the ones already chosen least often, so play counts stay
  within one of each other and pair counts stay close to even. The seat order inside a
  game is then shuffled so that no model always speaks first.

Both are pure functions of (pool, seats, N, seed): every shard of a tournament computes
the same schedule and keeps its own games.

- `adaptive` (`AdaptiveSeating`, `adaptive_seats`): the games in rounds of K. Each round's
  tables go to the players of largest `seat_value` = rank density · σ⁴: uncertain
  players in crowded parts of the ranking, where the Spearman against the true order is
  still at stake, rather than settled players or players whose order against everyone is
  already sure. Within a round each table is planned on ratings whose σ already counts
  the round's earlier tables (`expect_game`), so a round from fresh ratings seats the
  whole pool evenly. A round depends on the results of the rounds before it, so it is
  not a schedule: the runner chooses a round once the earlier ones have finished and
  keeps it in the folder's seating.jsonl (runner._play_rounds); the simulation is
  benchmarks/bench_matchmaking.py (docs/campaigns.md).

Role balance: a game whose roles sit at fixed seats (a setter at seat 1, say) names those
seats, and `balanced` then gives each fixed seat, game after game, to the chosen model
that has held it least, so every model plays every role about as often.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations
from pathlib import Path

from stille_post.core.errors import ConfigError
from stille_post.tournament.ratings import BETA, MU, SIGMA, FastRater


def seat_schedule(pool: Sequence[str], seats: int, games: int, *, seed: int,
                  mode: str, role_seats: Sequence[int] = ()) -> Iterator[tuple[str, ...]]:
    if mode == "sampled":
        for i in range(games):
            yield tuple(random.Random(f"{seed}:seating:{i}").sample(list(pool), seats))
        return
    if mode != "balanced":
        raise ValueError(f"unknown seating mode {mode!r}")
    rng = random.Random(f"{seed}:seating")
    plays = dict.fromkeys(pool, 0)
    met: dict[frozenset[str], int] = {frozenset(p): 0 for p in combinations(pool, 2)}
    held: Counter[tuple[int, str]] = Counter()
    for _ in range(games):
        chosen: list[str] = []
        rest = list(pool)
        rng.shuffle(rest)  # random tie-breaks, so equal counts do not favour pool order
        while len(chosen) < seats:
            best = min(rest, key=lambda m: (plays[m],
                                            sum(met[frozenset((m, c))] for c in chosen)))
            rest.remove(best)
            chosen.append(best)
        for a, b in combinations(chosen, 2):
            met[frozenset((a, b))] += 1
        for m in chosen:
            plays[m] += 1
        rng.shuffle(chosen)  # the random tie-breaks of give_role_seats
        give_role_seats(chosen, role_seats, held)
        yield tuple(chosen)


def give_role_seats(table: list[str], role_seats: Sequence[int],
                    held: Counter[tuple[int, str]]) -> None:
    """Each fixed role seat (ascending) to the player of `table` who has held it least
    (`held`: (seat, player) -> games), swapped into place; ties keep the table's order.
    `held` counts the result."""
    for seat in role_seats:
        if 1 <= seat <= len(table):
            i = min(range(seat - 1, len(table)), key=lambda j: held[(seat, table[j])])
            table[seat - 1], table[i] = table[i], table[seat - 1]
            held[(seat, table[seat - 1])] += 1


def rank_density(ratings: Mapping[str, tuple[float, float]], player: str) -> float:
    """How many players are expected per unit of μ around `player`, each spread by the
    uncertainty of the pair: Σ_j φ((μ_i - μ_j) / h_ij) / h_ij, h_ij = √(σ_i² + σ_j²).

    A player's rank error is about this density times its μ error, so the Spearman
    between ratings and the true order is most sensitive where it is high: a crowded
    middle of the table needs more games than a settled extreme."""
    mu, sigma = ratings[player]
    total = 0.0
    for other, (mu_j, sigma_j) in ratings.items():
        if other == player:
            continue
        h = math.sqrt(sigma * sigma + sigma_j * sigma_j)
        total += math.exp(-0.5 * ((mu - mu_j) / h) ** 2) / h
    return total / _SQRT_2PI


_SQRT_2PI = math.sqrt(2 * math.pi)


def seat_value(ratings: Mapping[str, tuple[float, float]], player: str) -> float:
    """What one more game of `player` is worth to the ranking: rank density · σ⁴.

    One game lowers σ² by about σ⁴ times a constant (the precision a game adds is about
    the same for every player: with skills this close to each other relative to β every
    game is a close one), and the ranking's squared error moves by the density² times
    that. The square is what that argument gives, but the density comes from estimated
    μ: with it, a player whose μ had drifted into a gap of the table looked settled,
    stopped playing and kept its wrong rank (a heavy tail of games to converge,
    docs/campaigns.md). The first power still moves games from the settled extremes to
    the crowded middle, and measured best. As a player plays, σ⁴ falls and others come
    first."""
    return rank_density(ratings, player) * ratings[player][1] ** 4


def adaptive_seats(ratings: Mapping[str, tuple[float, float]], seats: int,
                   rng: random.Random) -> tuple[str, ...]:
    """The next game's players from `ratings` (label -> (μ, σ)): the `seats` players of
    largest `seat_value` (ties to `rng`), seat order shuffled."""
    if seats > len(ratings):
        raise ValueError(f"{seats} seats but {len(ratings)} players")
    names = sorted(ratings)
    order = [rng.random() for _ in names]  # tie-breaks, drawn whatever the values
    value = {m: seat_value(ratings, m) for m in names}
    chosen = [m for _, m in sorted(((-value[m], order[i]), m) for i, m in enumerate(names))
              ][:seats]
    rng.shuffle(chosen)
    return tuple(chosen)


def expect_game(ratings: dict[str, tuple[float, float]], table: Sequence[str]) -> None:
    """`ratings` as if the game `table` had been played, before its outcome is known: each
    seat's σ shrinks by the precision a close 8-seat game adds (about 1.28 / (2β² + 2σ²),
    measured from TrueSkill's updates), μ stays. This is how a round plans several games
    from the same ratings without seating the same players in all of them."""
    for m in table:
        mu, sigma = ratings[m]
        precision = sigma ** -2 + EXPECTED_PRECISION / (2 * BETA ** 2 + 2 * sigma ** 2)
        ratings[m] = (mu, precision ** -0.5)


EXPECTED_PRECISION = 1.28
DEFAULT_ROUND_GAMES = 8


class AdaptiveSeating:
    """`--seating adaptive`: the tournament in rounds of `round_games` games. A round's
    seats come from the ratings of every game of the rounds before it, in game order (one
    TrueSkill pass from fresh ratings with the tournament's rater), and from an rng seeded
    by (seed, round): nothing about timing, workers or resumes enters the choice.

    Use: `next_round(n)` gives the next round's n tables; once the round's games have
    finished, `record(table, placements)` each of them in game order. A round chosen
    before (read back from the results folder) is adopted with `next_round(n, tables)`.
    """

    def __init__(self, pool: Sequence[str], seats: int, *, seed: int,
                 role_seats: Sequence[int] = ()) -> None:
        if not 2 <= seats <= len(pool):
            raise ValueError(f"{seats} seats but {len(pool)} players")
        self.pool = tuple(pool)
        self.seats = seats
        self.seed = seed
        self.role_seats = tuple(role_seats)
        self.ratings: dict[str, tuple[float, float]] = dict.fromkeys(self.pool, (MU, SIGMA))
        self.rater = FastRater()
        self.rounds = 0
        self.held: Counter[tuple[int, str]] = Counter()

    def next_round(self, games: int, chosen: Sequence[Sequence[str]] | None = None
                   ) -> list[tuple[str, ...]]:
        rng = random.Random(f"{self.seed}:adaptive:{self.rounds}")
        self.rounds += 1
        if chosen is not None:
            tables = [tuple(t) for t in chosen]
            for t in tables:
                self._hold(t)
            return tables
        planned = dict(self.ratings)
        tables = []
        for _ in range(games):
            table = list(adaptive_seats(planned, self.seats, rng))
            expect_game(planned, table)
            give_role_seats(table, self.role_seats, self.held)  # as `balanced` does
            tables.append(tuple(table))
        return tables

    def _hold(self, table: Sequence[str]) -> None:
        for seat in self.role_seats:
            if 1 <= seat <= len(table):
                self.held[(seat, table[seat - 1])] += 1

    def record(self, table: Sequence[str], ranks: Sequence[int] | None) -> None:
        """A finished game: `ranks[i]` is seat i+1's placement (1 first; equal ranks tie).
        None: the game taught nothing (aborted, invalid), the ratings stay."""
        if ranks is None:
            return
        new = self.rater.rate([self.ratings[m] for m in table], list(ranks))
        for m, r in zip(table, new, strict=True):
            self.ratings[m] = r


# --- an adaptive tournament's rounds, as the results folder keeps them -------------------

SEATING_FILE = "seating.jsonl"


def append_round(folder: Path, pool: Sequence[str], number: int,
                 tables: Sequence[Sequence[str]], *, durable: bool = True) -> None:
    """Add round `number`'s tables to `folder`'s seating.jsonl, before its games start.
    Seats are written as positions in the pool (a seat spec may hold a credential)."""
    where = {m: i for i, m in enumerate(pool)}
    line = json.dumps({"round": number, "games": [[where[m] for m in t] for t in tables]})
    with (folder / SEATING_FILE).open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
        fh.flush()
        if durable:
            os.fsync(fh.fileno())


def _member(pool: Sequence[str], i: object) -> str:
    # Not `pool[i]` alone: -1 or `true` would name a player of the pool too.
    if type(i) is not int or not 0 <= i < len(pool):
        raise ValueError(f"{i!r} is not a position in the pool of {len(pool)}")
    return pool[i]


def read_rounds(folder: Path, pool: Sequence[str]) -> list[list[tuple[str, ...]]]:
    """The rounds recorded in `folder` (none if there is no file). A line cut short by a
    crash ends the list and is dropped from the file: its round was never played, since a
    round's games start only after its line is written. Anything else that does not fit
    the pool is one ConfigError."""
    path = folder / SEATING_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: unreadable ({exc})") from None
    rounds: list[list[tuple[str, ...]]] = []
    for number, line in enumerate(lines):
        try:
            data = json.loads(line)
        except ValueError:
            if number == len(lines) - 1:  # cut short by a crash while it was written
                tmp = path.with_name(path.name + ".tmp")
                tmp.write_text("".join(f"{x}\n" for x in lines[:number]), encoding="utf-8")
                os.replace(tmp, path)
                break
            raise ConfigError(f"{path}:{number + 1}: not JSON") from None
        try:
            if data["round"] != number:
                raise ValueError(f"round {data['round']} where {number} was due")
            tables = [tuple(_member(pool, i) for i in t) for t in data["games"]]
            if any(len(set(t)) != len(t) for t in tables):
                raise ValueError("a player seated twice in one game")
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise ConfigError(f"{path}:{number + 1}: not a round of this tournament "
                              f"({exc})") from None
        rounds.append(tables)
    return rounds
