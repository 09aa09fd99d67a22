"""Stille Post metrics, computed from transcripts alone (the report's per-game hook).

`compute_metrics(transcripts)` returns JSON-safe data in the shape every game's metrics
module shares:
    {"overall": {name: value}, "per_player": {label: {name: value}},
     "tables": {name: {"columns": [...], "rows": [[...], ...]}}}
Players are the seats' "player" labels (bot:detective, openai:gpt-5, ...), so a model
is measured across all the seats and identities it played.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from stille_post.core.transcript import Transcript
from stille_post.games.kit.stats import ratio as _ratio
from stille_post.providers.base import Usage
from stille_post.providers.pricing import recorded_cost_usd

GAME = "stille-post"

# Counters kept per player; the rates below are derived from them.
_COUNTS = (
    "games", "wins", "win_turn_sum", "eliminated", "survived",
    "identity_guesses", "identity_correct", "identity_invalid",
    "guess_model_calls", "guess_model_correct", "guess_model_refused",
    "hints", "no_hints_left",
    "roulette_pulls", "roulette_self_eliminated", "roulette_kills",
    "forfeits", "removed_unresponsive", "tool_calls", "invalid_tool_calls",
    "input_tokens", "output_tokens",
)



def compute_metrics(transcripts: Iterable[Transcript]) -> dict[str, Any]:
    c: dict[str, Counter[str]] = defaultdict(Counter)
    dollars: defaultdict[str, float] = defaultdict(float)
    ends: Counter[str] = Counter()
    causes: Counter[tuple[str, str]] = Counter()
    games = aborted = turns = 0
    for t in transcripts:
        if t.game != GAME:
            continue
        games += 1
        result = t.result or {}
        if result.get("status") != "completed":
            aborted += 1
        label = {s: str(info.get("player", f"seat {s}")) for s, info in t.seats.items()}
        summary = t.summary.flat()
        winners = {int(s) for s in summary.get("winners", [])}
        survivors = {int(s) for s in summary.get("survivors", [])}
        ends[str(summary.get("end", result.get("reason") or "unknown"))] += 1
        turns += int(summary.get("turns", 0))
        for seat, who in label.items():
            c[who]["games"] += 1
            c[who]["survived"] += seat in survivors
            row = t.usage_row(seat)
            usage = Usage.from_json(row)
            c[who]["input_tokens"] += usage.input_tokens
            c[who]["output_tokens"] += usage.output_tokens
            dollars[who] += recorded_cost_usd(who, row)
        _count_events(t, label, winners, c, causes)
    per_player = {who: _player_row(k, dollars[who]) for who, k in sorted(c.items())}
    total_pulls = sum(k["roulette_pulls"] for k in c.values())
    overall = {
        "games": games,
        "aborted": aborted,
        "mean_turns": _ratio(turns, games),
        "roulette_pulls": total_pulls,
        "roulette_self_elimination_rate": _ratio(
            sum(k["roulette_self_eliminated"] for k in c.values()), total_pulls),
        "identity_guess_accuracy": _ratio(sum(k["identity_correct"] for k in c.values()),
                                          sum(k["identity_guesses"] for k in c.values())),
        "tokens": sum(k["input_tokens"] + k["output_tokens"] for k in c.values()),
        "dollars": sum(dollars.values()),
    }
    return {
        "overall": overall,
        "per_player": per_player,
        "tables": {
            "game_end": {"columns": ["end", "games"],
                         "rows": [[e, n] for e, n in ends.most_common()]},
            "elimination_causes": {
                "columns": ["player", "cause", "count"],
                "rows": [[p, cause, n] for (p, cause), n in sorted(causes.items())]},
        },
    }


def _count_events(t: Transcript, label: dict[int, str], winners: set[int],
                  c: dict[str, Counter[str]], causes: Counter[tuple[str, str]]) -> None:
    for e in t.events:
        d = e.data
        actor = label.get(e.actor) if e.actor is not None else None
        seat_of = label.get(int(d["seat"])) if isinstance(d.get("seat"), int) else None
        if e.type == "identity_guess" and actor:
            c[actor]["identity_guesses"] += 1
            c[actor]["identity_correct"] += bool(d.get("correct"))
            c[actor]["identity_invalid"] += not d.get("valid", True)
        elif e.type == "identity_result":
            for s in d.get("winners", []):
                if int(s) in winners and int(s) in label:
                    c[label[int(s)]]["wins"] += 1
                    c[label[int(s)]]["win_turn_sum"] += e.turn
        elif e.type == "tool_calls" and actor:
            c[actor]["tool_calls"] += len(d.get("tool_calls", []))
        elif e.type == "tool_result" and actor:
            if d.get("tool") == "guess_model":
                c[actor]["guess_model_calls"] += 1
                c[actor]["guess_model_correct"] += bool(d.get("correct"))
            elif d.get("tool") == "russian_roulette":
                c[actor]["roulette_pulls"] += 1
                if d.get("victim") == e.actor:
                    c[actor]["roulette_self_eliminated"] += 1
                else:
                    c[actor]["roulette_kills"] += 1
        elif e.type == "tool_refused" and actor:
            c[actor]["invalid_tool_calls"] += 1
            if d.get("tool") == "guess_model":
                c[actor]["guess_model_refused"] += 1
        elif e.type == "hint" and seat_of:
            c[seat_of]["hints"] += 1
        elif e.type == "no_hints_left" and seat_of:
            c[seat_of]["no_hints_left"] += 1
        elif e.type == "forfeit" and seat_of:
            c[seat_of]["forfeits"] += 1
        elif e.type == "eliminated" and seat_of:
            c[seat_of]["eliminated"] += 1
            cause = str(d.get("cause", "unknown"))
            c[seat_of]["removed_unresponsive"] += cause == "unresponsive"
            causes[(seat_of, cause)] += 1


def _player_row(k: Counter[str], dollars: float) -> dict[str, Any]:
    g = k["games"]
    row: dict[str, Any] = {name: k[name] for name in _COUNTS if name != "win_turn_sum"}
    row.update({
        "win_rate": _ratio(k["wins"], g),
        "mean_win_turn": _ratio(k["win_turn_sum"], k["wins"]),
        "identity_accuracy": _ratio(k["identity_correct"], k["identity_guesses"]),
        "guess_model_accuracy": _ratio(k["guess_model_correct"], k["guess_model_calls"]),
        "hints_per_game": _ratio(k["hints"], g),
        # The puller's survival: pulls that eliminated someone else.
        "roulette_survival_rate": _ratio(k["roulette_kills"], k["roulette_pulls"]),
        "forfeits_per_game": _ratio(k["forfeits"], g),
        "invalid_tool_call_rate": _ratio(k["invalid_tool_calls"], k["tool_calls"]),
        "tokens": k["input_tokens"] + k["output_tokens"],
        "dollars": dollars,
        "dollars_per_game": _ratio(dollars, g),
    })
    return row
