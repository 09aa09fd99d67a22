"""Every Connections metric (metrics.py), computed on hand-made transcripts and checked
against values worked out by hand in the comments. The whole output is compared, so a
metric added later without a value here fails this test until it is worked out too.

The games (setter first; `bot:f` and `bot:s` are two players' labels):
- game 1 (seed 1): setter 1 `bot:f`, guessers 2 and 3 `bot:s`, secret cat; the guessers win.
    a1 giver 2 `car`: setter and 3 say car         -> setter blocked
    a2 giver 3 `cab`: setter cow, 2 cab            -> connection
    a3 giver 2 `cap`: setter cup, 3 cop            -> guesser wrong
    a4 giver 3 `cat`: setter cat, 2 cat            -> connection on the secret: the win
  Table 1: reveals 1, guesser wrong 1, setter blocked 1, iterations 3, attempts 4.
- game 2 (seed 2): setter 1 `bot:s`, guessers 2 and 3 `bot:f`, secret dog; setter wins.
    a1 giver 2 `day`: setter dig, 3 den            -> guesser wrong
    a2 giver 3 forfeits (no word, nobody guesses)  -> guesser wrong
  Table 1: 0, 2, 0, iterations 2, attempts 2.
- game 3 (seed 3): aborted before any attempt (setter 1 `bot:f`, guessers `bot:s`).
- a transcript cut off without its result line, and one of another game.
"""

from __future__ import annotations

from typing import Any

from stille_post.core.transcript import Transcript
from stille_post.games.connections.metrics import compute_metrics
from tests.stille_post.valuecheck import close

SEATS_1 = {"1": {"player": "bot:f", "role": "setter"}, "2": {"player": "bot:s"},
           "3": {"player": "bot:s"}}
SEATS_2 = {"1": {"player": "bot:s", "role": "setter"}, "2": {"player": "bot:f"},
           "3": {"player": "bot:f"}}


def attempt(n: int, giver: int, word: str | None, guesses: dict[str, str],
            outcome: str) -> dict[str, Any]:
    return {"attempt": n, "giver": giver, "word": word, "guesses": guesses,
            "outcome": outcome}


def transcript(seed: int, seats: dict[str, Any], status: str,
               details: dict[str, Any] | None) -> Transcript:
    header = {"kind": "header", "game": "connections", "seed": seed, "seats": seats}
    if details is None:
        return Transcript(header=header)
    return Transcript(header=header, result={"kind": "result", "status": status,
                                             "summary": {"details": details}})


def games() -> list[Transcript]:
    g1 = {"result": "guessers_win", "secret": "cat", "setter": 1, "guessers": [2, 3],
          "reveals": 1, "guesser_wrong": 1, "setter_blocked": 1, "iterations": 3,
          "attempts": 4, "curve": [1, 2, 2, 2], "history": [
              attempt(1, 2, "car", {"1": "car", "3": "car"}, "setter_blocked"),
              attempt(2, 3, "cab", {"1": "cow", "2": "cab"}, "connection"),
              attempt(3, 2, "cap", {"1": "cup", "3": "cop"}, "guesser_wrong"),
              attempt(4, 3, "cat", {"1": "cat", "2": "cat"}, "connection")]}
    g2 = {"result": "setter_wins", "secret": "dog", "setter": 1, "guessers": [2, 3],
          "reveals": 0, "guesser_wrong": 2, "setter_blocked": 0, "iterations": 2,
          "attempts": 2, "curve": [1, 1], "history": [
              attempt(1, 2, "day", {"1": "dig", "3": "den"}, "guesser_wrong"),
              attempt(2, 3, None, {}, "guesser_wrong")]}
    return [transcript(1, SEATS_1, "completed", g1), transcript(2, SEATS_2, "completed", g2),
            transcript(3, SEATS_1, "aborted", {}), transcript(4, SEATS_1, "", None),
            Transcript(header={"game": "chameleon", "seats": {}},
                       result={"status": "completed", "summary": {}})]


def test_every_metric_on_hand_made_games() -> None:
    m = compute_metrics(games())
    row1 = {"seed": 1, "word": "cat", "winner": "guessers", "result": "guessers_win",
            "reveals": 1, "guesser_wrong": 1, "setter_blocked": 1, "iterations": 3,
            "attempts": 4, "guessers": 2, "setter": "bot:f", "guesser_players": "bot:s",
            "oracle": False, "curve": [1, 2, 2, 2]}
    row2 = {"seed": 2, "word": "dog", "winner": "setter", "result": "setter_wins",
            "reveals": 0, "guesser_wrong": 2, "setter_blocked": 0, "iterations": 2,
            "attempts": 2, "guessers": 2, "setter": "bot:s", "guesser_players": "bot:f",
            "oracle": False, "curve": [1, 1]}
    # The aborted game has no details: its row says so, with zeros.
    row3 = {"seed": 3, "word": None, "winner": "none", "result": "aborted", "reveals": 0,
            "guesser_wrong": 0, "setter_blocked": 0, "iterations": 0, "attempts": 0,
            "guessers": 0, "setter": "bot:f", "guesser_players": "bot:s", "oracle": False,
            "curve": []}
    f = {  # setter of games 1 and 3, guesser (seats 2 and 3) of game 2
        "games": 4, "wins": 0, "setter_games": 2, "guesser_games": 2,
        "clues": 2, "clue_connections": 0,      # game 2: a1 (wrong), a2 (forfeit)
        "setter_guesses": 4, "blocks": 1,       # game 1: car, cow, cup, cat; a1 blocked
        "guesses": 5, "correct_guesses": 2,     # + game 2's den; car and cat were right
        "win_rate": 0.0,                        # 0 / 4
        "clue_success_rate": 0.0,               # 0 / 2
        "block_rate_as_setter": 0.25,           # 1 block / 4 guesses as setter
        "guess_accuracy": 0.4,                  # 2 / 5
    }
    s = {  # guessers of games 1 and 3, setter of game 2
        "games": 5, "wins": 3,                  # game 1 (two seats) and game 2
        "setter_games": 1, "guesser_games": 4,
        "clues": 4, "clue_connections": 2,      # game 1: cab and cat connected
        "setter_guesses": 1, "blocks": 0,       # game 2: dig
        "guesses": 5, "correct_guesses": 3,     # car, cab, cat right; cop, dig wrong
        "win_rate": 0.6,                        # 3 / 5
        "clue_success_rate": 0.5,               # 2 / 4
        "block_rate_as_setter": 0.0,            # 0 / 1
        "guess_accuracy": 0.6,                  # 3 / 5
    }
    table_columns = ["word", "reveals", "guesser_wrong", "setter_blocked", "iterations",
                     "attempts", "winner", "seed", "setter", "guessers", "oracle"]
    expected = {
        "overall": {
            "games": 3, "incomplete": 1, "aborted": 1, "oracle_games": 0,
            "results": {"aborted": 1, "guessers_win": 1, "setter_wins": 1},
            "guessers_win_rate": 1 / 3,         # 1 / 3 games
            "attempts": 6,                      # 4 + 2
            "connections": 2, "setter_blocked": 1, "guesser_wrong": 3,
            "connection_rate": 1 / 3,           # 2 / 6
            # Wilson, z = 1.959964, z² = 3.841459, 1 + z²/6 = 1.640243; 2 of 6:
            # centre (1/3 + z²/12) / 1.640243 = 0.398391,
            # half z·sqrt((1/3)(2/3)/6 + z²/144) / 1.640243 = 0.301618
            "connection_rate_ci95": [0.0968, 0.7000],
            "blocked_rate": 1 / 6,
            # 1 of 6: centre (1/6 + z²/12) / 1.640243 = 0.296778,
            # half z·sqrt((1/6)(5/6)/6 + z²/144) / 1.640243 = 0.266724
            "blocked_rate_ci95": [0.0301, 0.5635],
            "wrong_rate": 0.5,
            # 3 of 6: centre 0.5, half z·sqrt(1/24 + z²/144) / 1.640243 = 0.312384
            "wrong_rate_ci95": [0.1876, 0.8124],
            "mean_iterations": 5 / 3,           # (3 + 2 + 0) / 3
        },
        "per_player": {"bot:f": f, "bot:s": s},
        "tables": {
            # ordered by iterations: the aborted game (0), game 2 (2), game 1 (3)
            "table1": {"columns": table_columns, "rows": [
                [None, 0, 0, 0, 0, 0, "none", 3, "bot:f", "bot:s", False],
                ["dog", 0, 2, 0, 2, 2, "setter", 2, "bot:s", "bot:f", False],
                ["cat", 1, 1, 1, 3, 4, "guessers", 1, "bot:f", "bot:s", False]]},
            "by_word": {"columns": ["word", "games", "reveals", "guesser_wrong",
                                    "setter_blocked", "iterations", "guesser_wins"],
                        "rows": [["None", 1, 0.0, 0.0, 0.0, 0.0, 0],
                                 ["cat", 1, 1.0, 1.0, 1.0, 3.0, 1],
                                 ["dog", 1, 0.0, 2.0, 0.0, 2.0, 0]]},
        },
        "per_game": [row1, row2, row3],
    }
    # The intervals are worked to 4 decimals above; compare them to that precision.
    for key in ("connection_rate_ci95", "blocked_rate_ci95", "wrong_rate_ci95"):
        got, want = m["overall"].pop(key), expected["overall"].pop(key)
        assert [round(x, 4) for x in got] == [round(x, 4) for x in want], (key, got)
    close(m, expected)
