"""Every Stille Post metric (metrics.py), computed on hand-made transcripts and checked
against values worked out by hand in the comments. The whole output is compared, so a
metric added later without a value here fails this test until it is worked out too.

The games (seats by player label):
- game A, completed, 6 turns, ended by max_rounds: seats 1 and 3 `bot:a`, seat 2 `bot:b`,
  seat 4 `bot:c`.
    turn 1  seat 2 calls guess_model (correct) and gets a hint;
    turn 2  seat 3 pulls the roulette: seat 4 dies (a kill);
    turn 3  seat 1 makes two calls: guess_model (wrong) and a refused proclaim;
            identity guesses: seat 1 right, seat 2 invalid, seat 3 wrong; seat 1 wins;
    turn 4  seat 2 pulls the roulette and dies (a self-elimination); no hints left for 2;
    turn 5  seat 3 forfeits its turn. Survivor: seat 3.
- game B, aborted ("provider failed"), 0 turns: seat 1 `bot:a`, seat 2 `bot:c`.
- a Chameleon transcript, which the Stille Post metrics ignore.
"""

from __future__ import annotations

from typing import Any

from stille_post.core.events import Event, Visibility
from stille_post.core.transcript import Transcript
from stille_post.games.stille_post.metrics import compute_metrics
from tests.stille_post.valuecheck import close


def ev(seq: int, etype: str, turn: int, actor: int | None, **data: Any) -> Event:
    return Event(seq, etype, 1, turn, actor, Visibility.public(), data)


def game_a() -> Transcript:
    events = [
        ev(1, "tool_calls", 1, 2, tool_calls=[{"name": "guess_model"}]),
        ev(2, "tool_result", 1, 2, tool="guess_model", correct=True),
        ev(3, "hint", 1, None, seat=2, kind="provider"),
        ev(4, "tool_calls", 2, 3, tool_calls=[{"name": "russian_roulette"}]),
        ev(5, "tool_result", 2, 3, tool="russian_roulette", victim=4),
        ev(6, "eliminated", 2, None, seat=4, cause="roulette"),
        ev(7, "tool_calls", 3, 1, tool_calls=[{"name": "guess_model"},
                                             {"name": "proclaim_superiority"}]),
        ev(8, "tool_result", 3, 1, tool="guess_model", correct=False),
        ev(9, "tool_refused", 3, 1, tool="proclaim_superiority"),
        ev(10, "identity_guess", 3, 1, correct=True, valid=True),
        ev(11, "identity_guess", 3, 2, correct=False, valid=False),
        ev(12, "identity_guess", 3, 3, correct=False, valid=True),
        ev(13, "identity_result", 3, None, winners=[1]),
        ev(14, "tool_calls", 4, 2, tool_calls=[{"name": "russian_roulette"}]),
        ev(15, "tool_result", 4, 2, tool="russian_roulette", victim=2),
        ev(16, "eliminated", 4, None, seat=2, cause="roulette"),
        ev(17, "no_hints_left", 4, None, seat=2),
        ev(18, "forfeit", 5, None, seat=3),
    ]
    header = {"kind": "header", "game": "stille-post", "seed": 1,
              "seats": {"1": {"player": "bot:a"}, "2": {"player": "bot:b"},
                        "3": {"player": "bot:a"}, "4": {"player": "bot:c"}}}
    result = {"kind": "result", "status": "completed", "reason": None,
              "usage": {"1": {"input_tokens": 100, "output_tokens": 10, "cost_usd": 0.5},
                        "2": {"input_tokens": 80, "output_tokens": 8, "cost_usd": 0.4},
                        "3": {"input_tokens": 50, "output_tokens": 5, "cost_usd": 0.25}},
              "summary": {"winners": [1], "eliminated": [4, 2], "turns": 6,
                          "details": {"survivors": [3], "end": "max_rounds"}}}
    return Transcript(header=header, events=events, result=result)


def game_b() -> Transcript:
    header = {"kind": "header", "game": "stille-post", "seed": 2,
              "seats": {"1": {"player": "bot:a"}, "2": {"player": "bot:c"}}}
    # Seat 2's row has no recorded price: a bot label has none, so it costs $0.
    result = {"kind": "result", "status": "aborted", "reason": "provider failed",
              "usage": {"1": {"input_tokens": 20, "output_tokens": 2, "cost_usd": 0.05},
                        "2": {"input_tokens": 10, "output_tokens": 1}},
              "summary": {"winners": [], "turns": 0, "details": {}}}
    return Transcript(header=header, events=[], result=result)


def other_game() -> Transcript:
    return Transcript(header={"game": "chameleon", "seats": {"1": {"player": "bot:a"}}},
                      result={"status": "completed", "summary": {"turns": 99}})


def test_every_metric_on_hand_made_games() -> None:
    m = compute_metrics([game_a(), game_b(), other_game()])
    # bot:a = seats 1 and 3 of game A and seat 1 of game B: 3 games.
    bot_a = {
        "games": 3,
        "wins": 1,                      # seat 1 of game A
        "eliminated": 0, "survived": 1,  # seat 3 of game A survived
        "identity_guesses": 2, "identity_correct": 1, "identity_invalid": 0,
        "guess_model_calls": 1, "guess_model_correct": 0, "guess_model_refused": 0,
        "hints": 0, "no_hints_left": 0,
        "roulette_pulls": 1, "roulette_self_eliminated": 0, "roulette_kills": 1,
        "forfeits": 1, "removed_unresponsive": 0,
        "tool_calls": 3,                # 2 (seat 1) + 1 (seat 3)
        "invalid_tool_calls": 1,        # the refused proclaim
        "input_tokens": 170,            # 100 + 50 + 20
        "output_tokens": 17,            # 10 + 5 + 2
        "win_rate": 1 / 3,              # 1 win / 3 games
        "mean_win_turn": 3.0,           # won at turn 3, 1 win
        "identity_accuracy": 0.5,       # 1 correct / 2 guesses
        "guess_model_accuracy": 0.0,    # 0 / 1
        "hints_per_game": 0.0,          # 0 / 3
        "roulette_survival_rate": 1.0,  # 1 kill / 1 pull
        "forfeits_per_game": 1 / 3,     # 1 / 3
        "invalid_tool_call_rate": 1 / 3,  # 1 refused / 3 calls
        "tokens": 187,                  # 170 + 17
        "dollars": 0.8,                 # 0.5 + 0.25 + 0.05
        "dollars_per_game": 0.8 / 3,
    }
    bot_b = {
        "games": 1, "wins": 0, "eliminated": 1, "survived": 0,
        "identity_guesses": 1, "identity_correct": 0, "identity_invalid": 1,
        "guess_model_calls": 1, "guess_model_correct": 1, "guess_model_refused": 0,
        "hints": 1, "no_hints_left": 1,
        "roulette_pulls": 1, "roulette_self_eliminated": 1, "roulette_kills": 0,
        "forfeits": 0, "removed_unresponsive": 0,
        "tool_calls": 2, "invalid_tool_calls": 0,
        "input_tokens": 80, "output_tokens": 8,
        "win_rate": 0.0,                # 0 / 1
        "mean_win_turn": None,          # no win to average
        "identity_accuracy": 0.0,       # 0 correct / 1 guess (an invalid guess counts)
        "guess_model_accuracy": 1.0,    # 1 / 1
        "hints_per_game": 1.0,          # 1 hint / 1 game
        "roulette_survival_rate": 0.0,  # 0 kills / 1 pull
        "forfeits_per_game": 0.0,
        "invalid_tool_call_rate": 0.0,  # 0 / 2 calls
        "tokens": 88, "dollars": 0.4, "dollars_per_game": 0.4,
    }
    # bot:c = seat 4 of game A (killed by the roulette) and seat 2 of game B.
    bot_c = {
        "games": 2, "wins": 0, "eliminated": 1, "survived": 0,
        "identity_guesses": 0, "identity_correct": 0, "identity_invalid": 0,
        "guess_model_calls": 0, "guess_model_correct": 0, "guess_model_refused": 0,
        "hints": 0, "no_hints_left": 0,
        "roulette_pulls": 0, "roulette_self_eliminated": 0, "roulette_kills": 0,
        "forfeits": 0, "removed_unresponsive": 0, "tool_calls": 0, "invalid_tool_calls": 0,
        "input_tokens": 10, "output_tokens": 1,
        "win_rate": 0.0, "mean_win_turn": None, "identity_accuracy": None,
        "guess_model_accuracy": None, "hints_per_game": 0.0, "roulette_survival_rate": None,
        "forfeits_per_game": 0.0, "invalid_tool_call_rate": None,
        "tokens": 11, "dollars": 0.0, "dollars_per_game": 0.0,
    }
    expected = {
        "overall": {
            "games": 2,                 # the Chameleon transcript is not counted
            "aborted": 1,
            "mean_turns": 3.0,          # (6 + 0) / 2
            "roulette_pulls": 2,
            "roulette_self_elimination_rate": 0.5,  # 1 self-elimination / 2 pulls
            "identity_guess_accuracy": 1 / 3,       # 1 correct / 3 guesses
            "tokens": 286,              # 187 + 88 + 11
            "dollars": 1.2,             # 0.8 + 0.4 + 0
        },
        "per_player": {"bot:a": bot_a, "bot:b": bot_b, "bot:c": bot_c},
        "tables": {
            "game_end": {"columns": ["end", "games"],
                         "rows": [["max_rounds", 1], ["provider failed", 1]]},
            "elimination_causes": {"columns": ["player", "cause", "count"],
                                   "rows": [["bot:b", "roulette", 1],
                                            ["bot:c", "roulette", 1]]},
        },
    }
    close(m, expected)


def test_no_games_no_rates() -> None:
    m = compute_metrics([other_game()])
    assert m["overall"] == {"games": 0, "aborted": 0, "mean_turns": None, "roulette_pulls": 0,
                            "roulette_self_elimination_rate": None,
                            "identity_guess_accuracy": None, "tokens": 0, "dollars": 0}
    assert m["per_player"] == {}
