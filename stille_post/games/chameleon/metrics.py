"""The Chameleon's metrics, computed from transcripts alone (the tournament's hook).

`compute_metrics(transcripts)` returns JSON-safe data in the shape every game shares:
    {"overall": {...}, "per_player": {label: {...}}, "tables": {name: {columns, rows}}}

Definitions (the paper's, docs/rules.md §3):
- a game is *valid* when it completed with an outcome other than Fail; `valid_ratio` is
  valid / finished games (aborted games count as finished and not valid; transcripts cut
  off without a result line are only counted as `incomplete`);
- identification rate = games where the chameleon was accused / valid games;
- non-chameleon win rate = IdentifiedWin / valid games;
- second-chance success rate = IdentifiedLoss / games where the chameleon was accused.
Players are the seats' "player" labels (bot:trivial, openai:gpt-4o, ...). A matchup is
the chameleon's label against the non-chameleons' labels (joined with " + " if mixed).

Theory games (theory/) are counted in `overall.theory_games` and summarised per point of
Figure 2 in `tables.theory` (theory/figure.py): the measured rate beside its bound.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from stille_post.core.transcript import Transcript
from stille_post.core.usage import Usage
from stille_post.games.chameleon.rules import (
    FAIL,
    IDENTIFIED_LOSS,
    IDENTIFIED_WIN,
    OUTCOMES,
    trivial_win_probability,
)
from stille_post.games.chameleon.theory.figure import Points
from stille_post.games.chameleon.theory.figure import table as theory_table
from stille_post.games.kit.stats import ratio as _ratio
from stille_post.games.kit.stats import wilson

GAME = "chameleon"




class _Tally:
    """Counters for one group of games (all, one matchup)."""

    def __init__(self) -> None:
        self.c: Counter[str] = Counter()

    def add(self, outcome: str, valid: bool, identified: bool) -> None:
        self.c["games"] += 1
        self.c[outcome] += 1
        if valid:
            self.c["valid"] += 1
            self.c["identified"] += identified

    def rates(self) -> dict[str, Any]:
        c = self.c
        return {
            "games": c["games"],
            "valid": c["valid"],
            "valid_ratio": _ratio(c["valid"], c["games"]),
            "identified": c["identified"],
            "identification_rate": _ratio(c["identified"], c["valid"]),
            "non_chameleon_wins": c[IDENTIFIED_WIN],
            "non_chameleon_win_rate": _ratio(c[IDENTIFIED_WIN], c["valid"]),
            "non_chameleon_win_rate_ci95": wilson(c[IDENTIFIED_WIN], c["valid"]),
            "chameleon_win_rate": _ratio(c["valid"] - c[IDENTIFIED_WIN], c["valid"]),
            "second_chance_success_rate": _ratio(c[IDENTIFIED_LOSS], c["identified"]),
        }


def _player_label(seat_info: dict[str, Any]) -> str:
    return str(seat_info.get("player") or seat_info.get("model") or "?")


def compute_metrics(transcripts: Iterable[Transcript]) -> dict[str, Any]:
    overall = _Tally()
    matchups: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    players: dict[str, Counter[str]] = defaultdict(Counter)
    shapes: set[tuple[int, int]] = set()
    incomplete = aborted = 0
    points = Points()
    for t in transcripts:
        if t.game != GAME:
            continue
        if t.result is None:
            incomplete += 1
            continue
        summary = t.summary.flat()
        status = t.result.get("status")
        aborted += status != "completed"
        outcome = str(summary.get("outcome") or FAIL) if status == "completed" else "Aborted"
        valid = status == "completed" and outcome in OUTCOMES and outcome != FAIL
        identified = bool(summary.get("identified"))
        seats = {int(k): v for k, v in (t.header.get("seats") or {}).items()}
        chameleon = summary.get("chameleon")
        if chameleon is None:  # an aborted game's summary may lack it; the header has roles
            chameleon = next((s for s, v in seats.items() if v.get("role") == "chameleon"), 0)
        shapes.add((len(seats), int(summary.get("num_words") or len(t.header.get("words", [])))))
        labels = {s: _player_label(v) for s, v in seats.items()}
        others = sorted({labels[s] for s in labels if s != chameleon})
        key = (labels.get(chameleon, "?"), " + ".join(others))
        overall.add(outcome, valid, identified)
        mark = t.header.get("theory")
        if isinstance(mark, dict):
            points.add(mark, labels.get(chameleon, "?"), valid, outcome == IDENTIFIED_WIN)
        matchups[key].add(outcome, valid, identified)
        fail_seat = (summary.get("fail") or {}).get("seat")
        for seat, label in labels.items():
            _count_seat(players[label], seat == chameleon, outcome, valid, identified,
                        fail_seat == seat, t.usage(seat))
    result = overall.rates()
    theory_rows = points.rows()
    result.update(
        theory_games=sum(r["games"] for r in theory_rows),
        incomplete=incomplete,
        aborted=aborted,
        fail=overall.c[FAIL],
        outcomes={o: overall.c[o] for o in OUTCOMES},
        trivial_baseline=(trivial_win_probability(*next(iter(shapes)))
                          if len(shapes) == 1 else None),
    )
    tables = {"matchups": _matchup_table(matchups), "outcomes": _outcome_table(overall)}
    if theory_rows:
        tables["theory"] = theory_table(theory_rows)
    return {
        "overall": result,
        "per_player": {label: _player_rates(c) for label, c in sorted(players.items())},
        "tables": tables,
    }


def _count_seat(c: Counter[str], is_chameleon: bool, outcome: str, valid: bool,
                identified: bool, caused_fail: bool, usage: Usage) -> None:
    c["games"] += 1
    c["fails_caused"] += caused_fail
    c["input_tokens"] += usage.input_tokens
    c["output_tokens"] += usage.output_tokens
    if not valid:
        return
    c["valid"] += 1
    others_won = outcome == IDENTIFIED_WIN
    if is_chameleon:
        c["chameleon_games"] += 1
        c["chameleon_wins"] += not others_won
        c["caught"] += identified
        c["second_chance_wins"] += outcome == IDENTIFIED_LOSS
    else:
        c["non_chameleon_games"] += 1
        c["non_chameleon_wins"] += others_won
    c["wins"] += others_won != is_chameleon


def _player_rates(c: Counter[str]) -> dict[str, Any]:
    return {
        **{k: c[k] for k in ("games", "valid", "wins", "chameleon_games", "chameleon_wins",
                             "caught", "second_chance_wins", "non_chameleon_games",
                             "non_chameleon_wins", "fails_caused", "input_tokens",
                             "output_tokens")},
        "win_rate": _ratio(c["wins"], c["valid"]),
        "chameleon_win_rate": _ratio(c["chameleon_wins"], c["chameleon_games"]),
        "caught_rate": _ratio(c["caught"], c["chameleon_games"]),
        "second_chance_success_rate": _ratio(c["second_chance_wins"], c["caught"]),
        "non_chameleon_win_rate": _ratio(c["non_chameleon_wins"], c["non_chameleon_games"]),
        "fail_rate": _ratio(c["fails_caused"], c["games"]),
    }


_MATCHUP_COLUMNS = ["chameleon", "non_chameleons", "games", "valid", "valid_ratio",
                    "identification_rate", "non_chameleon_win_rate",
                    "second_chance_success_rate"]


def _matchup_table(matchups: dict[tuple[str, str], _Tally]) -> dict[str, Any]:
    rows = []
    for (cham, others), tally in sorted(matchups.items()):
        r = tally.rates()
        rows.append([cham, others, *(r[k] for k in _MATCHUP_COLUMNS[2:])])
    return {"columns": list(_MATCHUP_COLUMNS), "rows": rows}


def _outcome_table(overall: _Tally) -> dict[str, Any]:
    n = overall.c["games"]
    rows = [[o, overall.c[o], _ratio(overall.c[o], n)] for o in (*OUTCOMES, "Aborted")
            if o in OUTCOMES or overall.c[o]]
    return {"columns": ["outcome", "games", "share"], "rows": rows}
