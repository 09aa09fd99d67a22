"""What a tournament plays, as data: the game, N seeds from S, how seats are filled, the
game options, and (optionally) which shard of the games this run owns.

The config is written to the results folder as `tournament.json`. `--resume` and `merge`
compare configs by `identity()`: everything that changes which games exist or how they
are played. Concurrency and rate limits only change how fast they are played, so they
may differ between a run and its resume.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from stille_post.core.errors import ConfigError
from stille_post.tournament.seating import seat_schedule

Seating = Literal["fixed", "balanced", "sampled", "adaptive"]
CONFIG_FILE = "tournament.json"
MAX_GAMES = 1_000_000


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1-based, as the user writes `--shard 2/3`)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        head, sep, tail = text.partition("/")
        try:
            index, count = int(head), int(tail)
        except ValueError:
            index, count = 0, 0
        if not sep or count < 1 or not 1 <= index <= count:
            raise ConfigError(f"--shard {text!r}: write i/n with 1 <= i <= n, e.g. 1/4")
        return cls(index, count)

    def owns(self, game_index: int) -> bool:
        # Round-robin rather than contiguous blocks: shards then see similar seatings
        # and game lengths, so they finish at about the same time.
        return game_index % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class GameSpec:
    """One game of the tournament: its position, seed, id and seat specs."""

    index: int
    seed: int
    players: tuple[str, ...] | None  # None: the game's own default seats
    name: str | None = None  # an imported game's own id

    @property
    def id(self) -> str:
        if self.name is not None:
            return self.name
        # The index first, so a directory listing sorts in play order.
        return f"g{self.index:06d}-s{self.seed}"


def imported_index(game_id: str) -> int:
    """The index row's `idx` of an imported game: derived from its id, not its position,
    so that two imported folders merge without renumbering (56 bits: no collision in
    practice among thousands of games)."""
    return int.from_bytes(hashlib.blake2b(game_id.encode("utf-8"), digest_size=7).digest(),
                          "big")


@dataclass(frozen=True)
class TournamentConfig:
    game: str
    games: int
    seed: int
    seating: Seating = "fixed"
    players: tuple[str, ...] | None = None  # seating "fixed": one spec per seat
    pool: tuple[str, ...] | None = None  # seating "balanced" / "sampled" / "adaptive"
    seats: int | None = None  # seats drawn from the pool per game (the game's num_players)
    options: Mapping[str, Any] = field(default_factory=dict)  # the game's own options
    shard: Shard | None = None
    roles: Mapping[str, str] = field(default_factory=dict)  # role -> seat spec
    preset: str | None = None  # a game's named configuration, under `options`
    # Imported games (e.g. "elimination-logs"): no seeds; the plan is the imported ids.
    source: str | None = None
    imported: tuple[str, ...] | None = None
    # seating "adaptive": games per round; a round's seats come from the ratings of every
    # game of the earlier rounds (tournament/seating.py, AdaptiveSeating).
    round_games: int | None = None

    def __post_init__(self) -> None:
        if self.source is not None:
            if self.imported is None or self.games != len(self.imported):
                raise ConfigError("an imported folder's config must list its games")
            return
        if self.games < 1:
            raise ConfigError("--games must be at least 1")
        if self.games > MAX_GAMES:
            # Refused before the plan is built: 10^8 games would take gigabytes of plan.
            raise ConfigError(f"--games must be at most {MAX_GAMES:,}; split bigger runs "
                              "into several tournaments")
        if self.seating == "fixed":
            if self.pool:
                raise ConfigError("a model pool needs --seating balanced, sampled or adaptive")
        else:
            if not self.pool:
                raise ConfigError(f"--seating {self.seating} needs --pool MODEL,MODEL,...")
            if self.players:
                raise ConfigError("give either --players (fixed seats) or --pool, not both")
            n = self.seats
            if n is None or not 2 <= n <= len(self.pool):
                raise ConfigError(f"seats per game must be between 2 and the pool size "
                                  f"{len(self.pool)}, got {n}")
            if len(set(self.pool)) != len(self.pool):
                raise ConfigError("the pool names a model twice")
        if self.seating == "adaptive":
            if self.round_games is None or self.round_games < 1:
                raise ConfigError("--seating adaptive needs --round-games of at least 1")
            if self.shard is not None:
                # A shard would need the other shards' results to choose its next round.
                raise ConfigError("--seating adaptive cannot be split with --shard: each "
                                  "round's seats depend on every earlier game; use --workers")
        elif self.round_games is not None:
            raise ConfigError("--round-games is for --seating adaptive only")

    # --- the games ---------------------------------------------------------------------

    def plan(self) -> list[GameSpec]:
        """Every game of the whole tournament, shard or not: shards must agree on the
        seating, so it is computed over all N games and then filtered."""
        if self.imported is not None:
            return [GameSpec(imported_index(i), 0, None, i) for i in self.imported]
        if self.seating == "fixed":
            seats: list[tuple[str, ...] | None] = [self.players] * self.games
        elif self.seating == "adaptive":
            # Chosen round by round as the games finish (runner.py): not known up front.
            seats = [None] * self.games
        else:
            assert self.pool is not None and self.seats is not None
            seats = list(seat_schedule(self.pool, self.seats, self.games,
                                       seed=self.seed, mode=self.seating,
                                       role_seats=_role_seats(self.game)))
        return [GameSpec(i, self.seed + i, seats[i]) for i in range(self.games)]

    def shard_plan(self) -> list[GameSpec]:
        return [g for g in self.plan() if self.shard is None or self.shard.owns(g.index)]

    def seated_plan(self) -> list[GameSpec]:
        """`plan` with seats in every game: an adaptive tournament's games stand in as
        `balanced` would seat them (the same play counts in expectation), for what needs
        seats before any game is played (checking the seat specs, estimates). Adaptive
        refuses shards, so its whole plan is its shard's."""
        if self.seating != "adaptive":
            return self.plan()
        assert self.pool is not None and self.seats is not None
        seats = seat_schedule(self.pool, self.seats, self.games, seed=self.seed,
                              mode="balanced", role_seats=_role_seats(self.game))
        return [GameSpec(i, self.seed + i, s) for i, s in enumerate(seats)]

    def role_seats(self) -> tuple[int, ...]:
        return _role_seats(self.game)

    # --- persistence ---------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The config as tournament.json, `report --json` and `identity()` hold it: seat
        specs with URL passwords and key parameters masked (`has_masked_seats`)."""
        from stille_post.providers.secrets import redact

        data = asdict(self)
        data["shard"] = str(self.shard) if self.shard else None
        data["options"] = {k: str(v) if isinstance(v, Path) else v
                           for k, v in self.options.items()}
        data["roles"] = {k: redact(v) for k, v in self.roles.items()}
        for key in ("players", "pool"):
            data[key] = [redact(s) for s in data[key]] if data[key] is not None else None
        data["imported"] = list(data["imported"]) if data["imported"] is not None else None
        if self.source is None:  # a played tournament's file stays as it always was
            del data["source"], data["imported"]
        if self.round_games is None:
            del data["round_games"]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TournamentConfig:
        d = dict(data)
        if "seats_per_game" in d:  # its name before one name per concept
            d["seats"] = d.pop("seats_per_game")
        d["shard"] = Shard.parse(d["shard"]) if d.get("shard") else None
        for key in ("players", "pool", "imported"):
            d[key] = tuple(d[key]) if d.get(key) is not None else None
        d["options"] = dict(d.get("options") or {})
        d["roles"] = dict(d.get("roles") or {})
        return cls(**d)

    def identity(self) -> dict[str, Any]:
        """What must match for two runs to be (parts of) the same tournament."""
        data = self.to_json()
        if self.source is not None:
            # Imported folders of one source are one collection whatever games each
            # holds: `merge` unions their games rather than refusing them.
            del data["games"], data["imported"]
        return data

    def has_masked_seats(self) -> bool:
        """Whether a seat spec holds a masked credential (a config read back from
        tournament.json): such seats cannot be played until they are given again."""
        from stille_post.providers.secrets import REDACTED, REDACTED_IN_URL

        specs = [*(self.players or ()), *(self.pool or ()), *self.roles.values()]
        return any(REDACTED in s or REDACTED_IN_URL in s for s in specs)

    def with_imported(self, ids: set[str] | tuple[str, ...]) -> TournamentConfig:
        """This imported collection with exactly `ids` as its games (sorted)."""
        games = tuple(sorted(ids))
        return TournamentConfig.from_json({**self.to_json(), "imported": list(games),
                                           "games": len(games)})

    def without_shard(self) -> TournamentConfig:
        return TournamentConfig.from_json({**self.to_json(), "shard": None})

    def save(self, folder: Path, run: Mapping[str, Any] | None = None) -> None:
        """`run` holds how the games are played (concurrency, rate limits, models file):
        not part of the tournament's identity, but kept so that `--resume --out FOLDER`
        needs nothing else. A save without it keeps the one already on disk."""
        if run is None:
            run = load_run_settings(folder)
        write_json_atomic(folder / CONFIG_FILE, {"tournament": self.to_json(),
                                                 "run": dict(run or {})})

    @classmethod
    def load(cls, folder: Path) -> TournamentConfig:
        path = folder / CONFIG_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls.from_json(data["tournament"])
        except FileNotFoundError:
            raise ConfigError(f"{folder} is not a tournament results folder "
                              f"(no {CONFIG_FILE})") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{path}: unreadable tournament config ({exc})") from None


def _role_seats(game: str) -> tuple[int, ...]:
    from stille_post.games import all_games

    definition = all_games().get(game)
    return definition.fixed_role_seats() if definition is not None else ()


def load_run_settings(folder: Path) -> dict[str, Any]:
    """The run settings recorded beside the config ({} when there are none)."""
    try:
        data = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    run = data.get("run") if isinstance(data, dict) else None
    return dict(run) if isinstance(run, dict) else {}


def write_json_atomic(path: Path, data: Any) -> None:
    """Write-then-rename: a crash leaves the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def split_list(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if not items:
        raise ConfigError("an empty comma-separated list")
    return items

