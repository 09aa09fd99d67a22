"""One game of the published Elimination Game logs -> one of our transcripts.

The log lines of a game (already parsed, in file order) become the Elimination Game's
events exactly as stille_post/games/elimination/EVENTS.md defines them, in the order our
engine emits them: round_start, the public statements, the pairing, the private chats,
the votes with their reasons, the vote result, the tie chain, the elimination; then the
final, the jury, game_over and reveal.

Rules of the conversion (the "why" of each is in the code):
- Texts are kept whole. A message over its word limit is marked (`over_limit: true`,
  with `limit_words` and `words`), never cut: the import is a record of what the models
  wrote, and our engine's limits did not exist when they wrote it.
- The log is the truth about outcomes: who was eliminated and the final ranks come from
  its `elimination` and `final_results` lines. Vote counts and the tie chain are
  recomputed with our rules (rules.py); where the recount would have eliminated someone
  else, the event says `recount_differs: true` instead of silently disagreeing.
- A log field with no counterpart in our vocabulary is kept under the event's data under
  its own name (`public_vote`, `timestamp`, `rank_of_target`, `cumu_check`, ...), or as
  `source_<name>` where that name is already ours.
- Seats keep their numbers; the model key of the full player id becomes the seat's
  `player` label (`unknown` for bare `P3` ids).
"""


import time
from collections.abc import Mapping, Sequence
from typing import Any

from stille_post import __version__
from stille_post.core.outcome import OutcomeSummary
from stille_post.core.transcript import FORMAT_VERSION, dumps
from stille_post.games.elimination import prompts as P
from stille_post.games.elimination import rules as R
from stille_post.games.elimination.config import EliminationConfig
from stille_post.games.elimination.importer.events import GameEvents, keyed
from stille_post.games.elimination.importer.lines import (
    GAME,
    LINE_TYPES,
    SOURCE_FORMAT,
    UNKNOWN,
    ConvertError,
    final_ranks,
    models,
    parse_player,
    seat_of,
    segment,
    winner_of,
)
from stille_post.games.kit.importing import ImportedGame, LogFormat

__all__ = [
    "GAME",
    "LINE_TYPES",
    "LOGS",
    "SOURCE_FORMAT",
    "ConvertError",
    "ImportedGame",
    "convert_game",
    "parse_player",
    "seat_of",
]

def convert_game(game_id: str, lines: Sequence[dict[str, Any]], *, sources: Sequence[str],
                 imported_at: str | None = None) -> ImportedGame:
    """The transcript of one game. Raises ConvertError for lines that make no game."""
    seat_models = models(lines)
    seats_seen = sorted(seat_models)
    n = len(seats_seen)
    if not 3 <= n <= 20 or seats_seen != list(range(1, n + 1)):
        raise ConvertError(f"seats {seats_seen[:12]} are not P1..Pn with 3 <= n <= 20")
    rounds, final, results = segment(lines, n)
    private_subs = [x.get("subround") for r in rounds for x in r.private]
    k = max([s for s in private_subs if isinstance(s, int) and not isinstance(s, bool)]
            + [0])
    k = min(max(k, 3 if any(r.proposals or r.result for r in rounds) else k), 3)
    config = EliminationConfig(num_players=n, private_subrounds=k)
    limits = [config.private_limit(i) for i in (1, 2, 3)]  # the anchor's three subrounds
    game = GameEvents(n, limits)
    log = game.log
    log.emit("game_start", num_players=n, seats=list(range(1, n + 1)), private_subrounds=k,
             word_limits={"public": config.public_words,
                          "private": limits[:k],
                          "tie_break": config.tie_break_words, "final": config.final_words},
             limit_policy="none", jury_tie=config.jury_tie,
             text=P.game_start_text(n, k))
    for rnd in rounds:
        game.round(rnd)
    ranks_logged = final_ranks(results, n)
    winner = winner_of(results, ranks_logged)
    game.final(final, winner)
    computed = R.ranks(game.eliminated, sorted(game.active), winner)
    ranks = {s: ranks_logged.get(s, computed[s]) for s in range(1, n + 1)}
    by_seat = keyed(ranks)
    log.emit("game_over", status="completed", winner=winner, finalists=game.finalists,
             ranks=by_seat, text=P.game_over_text(winner, "completed", None))
    log.emit("reveal", ranks=by_seat, eliminated=list(game.eliminated),
             cumulative=keyed(game.cumulative), text=P.reveal_text(by_seat))

    bare = all(m is None for m in seat_models.values())
    seats: dict[str, dict[str, Any]] = {}
    for s in range(1, n + 1):
        model = seat_models[s]
        row: dict[str, Any] = {"player": model or UNKNOWN}
        if model:
            row["model"] = model
        seats[str(s)] = row
    details = R.outcome_details(
        ranks=ranks, winner=winner, finalists=game.finalists, rounds=log.round,
        eliminated_in=game.eliminated_in, decided_by=game.decided_by,
        cumulative=game.cumulative, jury_votes=game.jury_votes,
        over_limit_messages=game.over_limit, num_players=n)
    details["imported"] = True
    if ranks != computed:
        details["computed_ranks"] = keyed(computed)  # what our rules would have ranked
    if "winners_full" in results:
        details["winners_full"] = results["winners_full"]
    summary = OutcomeSummary(winners=(winner,), eliminated=tuple(game.eliminated), valid=True,
                             turns=log.turn, notes=_notes(game, ranks, winner),
                             details=details)
    imported = {"format": SOURCE_FORMAT, "source": sources[0], "game_id": game_id,
                "lines": len(lines)}
    if len(sources) > 1:
        imported["sources"] = list(sources)
    header = {"kind": "header", "format": FORMAT_VERSION, "game": GAME, "version": __version__,
              "seed": None, "config": config.model_dump(mode="json"), "seats": seats,
              "rules": "lechmazur/elimination_game (imported)", "imported_from": imported,
              "timing": {"started_at": imported_at or
                         time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}}
    result = {"kind": "result", "status": "completed", "reason": None,
              "placements": by_seat, "usage": {}, "summary": summary.to_json(),
              "timing": {"seconds": 0.0}}
    out = [dumps(header), *(dumps(e) for e in log.events), dumps(result)]
    unlabelled = sum(m is None for m in seat_models.values())
    return ImportedGame(game_id, out, seats, ranks, summary, bare, unlabelled)


def _notes(game: GameEvents, ranks: Mapping[int, int], winner: int) -> dict[int, str]:
    out: dict[int, str] = {}
    for s in range(1, game.n + 1):
        if s == winner:
            out[s] = "won the jury vote"
        elif s in game.finalists:
            out[s] = "finalist, eliminated by the jury"
        else:
            out[s] = f"out in round {game.eliminated_in.get(s)} (rank {ranks[s]})"
    return out


def _convert(game_id: str, lines: Sequence[Mapping[str, Any]], sources: Sequence[str],
             imported_at: str | None) -> ImportedGame:
    return convert_game(game_id, [dict(line) for line in lines], sources=sources,
                        imported_at=imported_at)


# `stille-post import elimination logs PATH...` (games/elimination/__init__.py names it).
LOGS = LogFormat(
    name="logs", source=SOURCE_FORMAT,
    description="the published Elimination Game logs (lechmazur/elimination_game, JSONL)",
    line_types=LINE_TYPES, closing_type="final_results", transcript_prefix="eg-",
    convert=_convert)
