"""The public Python API: play games, run tournaments, list games, read transcripts.

    import stille_post
    result = stille_post.play("chameleon", seed=3)    # the default bots
    result.placements, result.details, result.transcript

Only the names in `stille_post.__all__` are public; everything else may change. The
API goes through the same paths as the CLI (`session.play_game`, the tournament runner,
the kit's `prepare`), so a game played here writes the transcript `stille-post play`
writes, and bad input raises the CLI's one-line error as a `UsageError`
(`stille_post.core.errors`; its message is that line).

The synchronous functions run their own event loop; they also work where another loop
is running (a notebook), which they block while they run. In async code, `await
play_async(...)` instead.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stille_post.core.blocking import run_blocking
from stille_post.core.errors import UsageError
from stille_post.core.transcript import Transcript
from stille_post.games import DEFAULT_GAME, describe_all, get_game
from stille_post.tournament.public import TournamentResult, tournament

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class GameResult:
    """How one game ended: what `play` returns."""

    game: str
    seed: int
    status: str  # "completed" | "aborted"
    reason: str | None  # why an aborted (or void) game ended so
    placements: dict[int, int]  # seat -> rank (1 = best; ties share a rank)
    winners: tuple[int, ...]
    valid: bool  # False for a void game (nobody is ranked by it)
    details: dict[str, Any]  # the game's own facts (its README lists them)
    seats: dict[int, dict[str, Any]]  # seat -> who played it (the transcript header's)
    usage: dict[int, dict[str, Any]]  # seat -> tokens (and dollars for priced models)
    adherence: dict[int, dict[str, Any]]  # seat -> how its decisions went
    transcript: Path | None  # where the game was written (None: not kept)
    summary: dict[str, Any]  # exactly what `stille-post play --json` prints


def _seed(seed: int | None) -> int:
    if seed is None:
        return secrets.randbelow(2**31)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UsageError(f"seed {seed!r}: a non-negative integer")
    return seed


def _players(players: str | Sequence[str] | None) -> list[str] | None:
    if players is None:
        return None
    if isinstance(players, str):
        return [p.strip() for p in players.split(",") if p.strip()]
    if not all(isinstance(p, str) for p in players):
        raise UsageError("players: one seat spec (a string) per seat")
    return list(players)


def _unique(path: Path) -> Path:
    """Never overwrite a recorded game: -2, -3, ... as the CLI does."""
    if not path.exists():
        return path
    for i in range(2, 100_000):
        candidate = path.with_name(f"{path.stem}-{i}{path.suffix}")
        if not candidate.exists():
            return candidate
    raise UsageError(f"too many transcripts named like {path}")


async def play_async(
    game: str = DEFAULT_GAME,
    *,
    players: str | Sequence[str] | None = None,
    seed: int | None = None,
    options: Mapping[str, Any] | None = None,
    roles: Mapping[str, str] | None = None,
    preset: str | None = None,
    transcript: PathLike | None = None,
    online: bool = False,
    replay: PathLike | None = None,
    record: PathLike | None = None,
    models: PathLike | None = None,
) -> GameResult:
    """Play one game; see `play`."""
    from stille_post.players.llm_seats import llm_session
    from stille_post.session import play_game

    definition = get_game(game)
    seed = _seed(seed)
    seats = _players(players)
    keep = _unique(Path(transcript)) if transcript is not None else None
    with contextlib.ExitStack() as stack:
        if keep is None:  # written to a folder of its own, removed after
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="stille-post-"))
            out = Path(folder) / "game.jsonl"
        else:
            out = keep
        factory = stack.enter_context(llm_session(
            online=online, record=Path(record) if record is not None else None,
            replay=Path(replay) if replay is not None else None,
            models=Path(models) if models is not None else None,
            seats=[*(seats or []), *(roles or {}).values()]))
        try:
            run = await play_game(definition.name, seed=seed, out=out, players=seats,
                                  options=dict(options or {}), roles=dict(roles or {}),
                                  preset=preset, llm_factory=factory)
        finally:
            if factory is not None:
                await factory.aclose()
    o = run.outcome
    return GameResult(
        game=run.game, seed=seed, status=o.status, reason=o.reason,
        placements=dict(o.placements), winners=tuple(o.summary.winners),
        valid=o.summary.valid, details=dict(o.summary.details),
        seats={int(k): dict(v) for k, v in run.seats.items()}, usage=dict(run.usage),
        adherence=dict(o.adherence), transcript=keep, summary=run.summary())


def play(
    game: str = DEFAULT_GAME,
    *,
    players: str | Sequence[str] | None = None,
    seed: int | None = None,
    options: Mapping[str, Any] | None = None,
    roles: Mapping[str, str] | None = None,
    preset: str | None = None,
    transcript: PathLike | None = None,
    online: bool = False,
    replay: PathLike | None = None,
    record: PathLike | None = None,
    models: PathLike | None = None,
) -> GameResult:
    """Play one game of `game` and return how it ended.

    - `players`: one seat spec per seat, as `--players` takes them (a list, or one
      comma-separated string); default: the game's default bots.
    - `seed`: the game seed (a fresh one if omitted; `result.seed` says which).
    - `options`: the game's options (`{"words": 5}`, `{"num_players": 5}`), as flags and
      `--set` give them; `roles`: as `--role NAME=SPEC`; `preset`: as `--preset`.
    - `transcript`: where to write the game (never overwritten: -2, -3, ... is added);
      default: not kept.
    - `online`, `replay`, `record`, `models`: LLM seats live, replayed from a cassette,
      recorded, and the model registry, as the CLI's flags of the same names.
    """
    return run_blocking(play_async(game, players=players, seed=seed, options=options, roles=roles,
                           preset=preset, transcript=transcript, online=online,
                           replay=replay, record=record, models=models))


def games() -> dict[str, dict[str, Any]]:
    """Every registered game as data, by name: its roles, bots, options with their
    defaults, presets and events (what `stille-post games --json` prints)."""
    return describe_all()


def load_transcript(path: PathLike) -> Transcript:
    """A transcript read back: `header`, `events`, `result`, `summary`, `seats`,
    `complete` and `view(seat)`. A file that is not a transcript raises a `UsageError`
    naming the file (and the line)."""
    from stille_post.core.transcript import TranscriptError

    p = Path(path)
    if not p.is_file():
        raise UsageError(f"no transcript at {p}")
    try:
        return Transcript.load(p)
    except TranscriptError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot read {p}: {exc.strerror or exc}") from None


__all__ = ["GameResult", "TournamentResult", "games", "load_transcript", "play",
           "play_async", "tournament"]
