"""Connections' metrics, computed from transcripts alone (the tournament's hook).

`compute_metrics(transcripts)` returns JSON-safe data in the shape every game shares:
    {"overall": {...}, "per_player": {label: {...}}, "tables": {...}, "per_game": [...]}

Definitions:
- per game, the paper's Table 1 columns: `reveals` (letters revealed by Connections
  before the winning one), `guesser_wrong`, `setter_blocked`, `iterations` (their sum:
  the attempts before the winning one, as the paper counts), plus the secret word, the
  winner, `attempts` (every attempt played) and the letters-revealed curve (Figure 1);
- per player (the seat's label): clue success rate (its clues that made a Connection /
  clues it gave), block rate as setter (Setter Blocked / attempts it guessed as setter),
  guess accuracy (guesses equal to the clue word / guesses it made, as setter or guesser);
- overall: `attempts`, and `connection_rate`, `blocked_rate`, `wrong_rate` per attempt
  with Wilson 95% intervals. Games with oracle seats are counted as `oracle_games` and
  marked `oracle: true` in `per_game`: they are simulations, not play.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from stille_post.core.transcript import Transcript
from stille_post.games.kit.stats import ratio as _ratio
from stille_post.games.kit.stats import wilson

GAME = "connections"
OUTCOMES = ("connection", "setter_blocked", "guesser_wrong")




def _label(info: Mapping[str, Any]) -> str:
    return str(info.get("player") or info.get("model") or "?")


def game_row(t: Transcript) -> dict[str, Any] | None:
    """One game's Table 1 row (None for a transcript of another game or cut off)."""
    if t.game != GAME or t.result is None:
        return None
    d = dict(t.summary.details)
    seats = {int(k): v for k, v in (t.header.get("seats") or {}).items()}
    result = str(d.get("result") or ("aborted" if t.result.get("status") != "completed"
                                     else "void"))
    winner = {"guessers_win": "guessers", "setter_wins": "setter"}.get(result, "none")
    return {
        "seed": t.header.get("seed"),
        "word": d.get("secret"),
        "winner": winner,
        "result": result,
        "reveals": int(d.get("reveals") or 0),
        "guesser_wrong": int(d.get("guesser_wrong") or 0),
        "setter_blocked": int(d.get("setter_blocked") or 0),
        "iterations": int(d.get("iterations") or 0),
        "attempts": int(d.get("attempts") or 0),
        "guessers": len(d.get("guessers") or []),
        "setter": _label(seats.get(int(d.get("setter") or 1), {})),
        "guesser_players": " + ".join(sorted({_label(v) for s, v in seats.items()
                                              if s != int(d.get("setter") or 1)})),
        "oracle": bool(d.get("oracle")),
        "curve": list(d.get("curve") or []),
    }


def compute_metrics(transcripts: Iterable[Transcript]) -> dict[str, Any]:
    per_game: list[dict[str, Any]] = []
    outcomes: Counter[str] = Counter()
    players: dict[str, Counter[str]] = defaultdict(Counter)
    games = incomplete = aborted = oracle_games = 0
    results: Counter[str] = Counter()
    for t in transcripts:
        if t.game != GAME:
            continue
        if t.result is None:
            incomplete += 1
            continue
        row = game_row(t)
        assert row is not None
        games += 1
        aborted += t.result.get("status") != "completed"
        oracle_games += row["oracle"]
        results[row["result"]] += 1
        per_game.append(row)
        d = t.summary.details
        seats = {int(k): _label(v) for k, v in (t.header.get("seats") or {}).items()}
        setter = int(d.get("setter") or 1)
        for seat, label in seats.items():
            c = players[label]
            c["games"] += 1
            won = (row["winner"] == "setter") == (seat == setter) and row["winner"] != "none"
            c["wins"] += won
            c["setter_games" if seat == setter else "guesser_games"] += 1
        for h in d.get("history") or []:
            outcome = str(h.get("outcome"))
            outcomes[outcome] += 1
            word = h.get("word")
            giver = seats.get(int(h.get("giver") or 0), "?")
            players[giver]["clues"] += 1
            players[giver]["clue_connections"] += outcome == "connection"
            for s, g in (h.get("guesses") or {}).items():
                label = seats.get(int(s), "?")
                c = players[label]
                c["guesses"] += 1
                c["correct_guesses"] += g is not None and g == word
                if int(s) == setter:
                    c["setter_guesses"] += 1
                    c["blocks"] += outcome == "setter_blocked"
    attempts = sum(outcomes.values())
    overall: dict[str, Any] = {
        "games": games,
        "incomplete": incomplete,
        "aborted": aborted,
        "oracle_games": oracle_games,
        "results": dict(sorted(results.items())),
        "guessers_win_rate": _ratio(results["guessers_win"], games),
        "attempts": attempts,
        "connections": outcomes["connection"],
        "setter_blocked": outcomes["setter_blocked"],
        "guesser_wrong": outcomes["guesser_wrong"],
        "connection_rate": _ratio(outcomes["connection"], attempts),
        "connection_rate_ci95": wilson(outcomes["connection"], attempts),
        "blocked_rate": _ratio(outcomes["setter_blocked"], attempts),
        "blocked_rate_ci95": wilson(outcomes["setter_blocked"], attempts),
        "wrong_rate": _ratio(outcomes["guesser_wrong"], attempts),
        "wrong_rate_ci95": wilson(outcomes["guesser_wrong"], attempts),
        "mean_iterations": _ratio(sum(r["iterations"] for r in per_game), games),
    }
    return {
        "overall": overall,
        "per_player": {label: _player(c) for label, c in sorted(players.items())},
        "tables": {"table1": table1(per_game), "by_word": by_word(per_game)},
        "per_game": per_game,
    }


def _player(c: Counter[str]) -> dict[str, Any]:
    return {
        **{k: c[k] for k in ("games", "wins", "setter_games", "guesser_games", "clues",
                             "clue_connections", "setter_guesses", "blocks", "guesses",
                             "correct_guesses")},
        "win_rate": _ratio(c["wins"], c["games"]),
        "clue_success_rate": _ratio(c["clue_connections"], c["clues"]),
        "block_rate_as_setter": _ratio(c["blocks"], c["setter_guesses"]),
        "guess_accuracy": _ratio(c["correct_guesses"], c["guesses"]),
    }


TABLE1_COLUMNS = ["word", "reveals", "guesser_wrong", "setter_blocked", "iterations",
                  "attempts", "winner", "seed", "setter", "guessers", "oracle"]


def table1(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The paper's Table 1: one row per game, ordered by iterations."""
    ordered = sorted(rows, key=lambda r: (r["iterations"], str(r["word"]), str(r["seed"])))
    return {"columns": list(TABLE1_COLUMNS),
            "rows": [[r["word"], r["reveals"], r["guesser_wrong"], r["setter_blocked"],
                      r["iterations"], r["attempts"], r["winner"], r["seed"], r["setter"],
                      r["guesser_players"], r["oracle"]] for r in ordered]}


def by_word(rows: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[str(r["word"])].append(r)
    out = []
    for word, rs in sorted(groups.items()):
        n = len(rs)
        out.append([word, n, *(round(sum(r[k] for r in rs) / n, 2)
                               for k in ("reveals", "guesser_wrong", "setter_blocked",
                                         "iterations")),
                    sum(r["winner"] == "guessers" for r in rs)])
    return {"columns": ["word", "games", "reveals", "guesser_wrong", "setter_blocked",
                        "iterations", "guesser_wins"], "rows": out}
