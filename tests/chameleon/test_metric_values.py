"""Every Chameleon metric (metrics.py), computed on hand-made transcripts and checked
against values worked out by hand in the comments. The whole output is compared, so a
metric added later without a value here fails this test until it is worked out too.

Nine transcripts, N = 4 and K = 16 in all (labels: A = bot:a, B = bot:b, T = bot:theory):
  T1 IdentifiedWin       chameleon seat 2 (B), seats 1, 3, 4 A; caught, guessed wrong
  T2 IdentifiedLoss      chameleon seat 1 (B), seats 2, 3, 4 A; caught, guessed right
  T3 MisidentifiedLoss   chameleon seat 3 (A), seats 1, 2, 4 B; not caught
  T4 Fail                chameleon seat 4 (A), seats 1-3 B; seat 2's reply stayed invalid
  T5 aborted             every seat A, seat 1 the chameleon (known from the header only)
  T6 cut off             no result line
  T7 IdentifiedWin       a theory game (concealing, α = 0), every seat T, chameleon 1
  T8 MisidentifiedLoss   the same theory point, chameleon 2
  T9 another game's transcript
"""

from __future__ import annotations

from typing import Any

from stille_post.core.transcript import Transcript
from stille_post.games.chameleon.metrics import compute_metrics
from tests.stille_post.valuecheck import close

A, B, T = "bot:a", "bot:b", "bot:theory"
THEORY = {"kind": "concealing", "n": 4, "k": 16, "alpha": 0.0}


def game(labels: list[str], chameleon: int, outcome: str | None, identified: bool, *,
         status: str = "completed", fail_seat: int | None = None,
         usage: dict[str, Any] | None = None, theory: bool = False,
         result: bool = True) -> Transcript:
    seats = {str(s): {"player": label, "role": "chameleon" if s == chameleon else
                      "non-chameleon"} for s, label in enumerate(labels, start=1)}
    header: dict[str, Any] = {"kind": "header", "game": "chameleon", "seats": seats,
                              "words": [f"w{i}" for i in range(16)]}
    if theory:
        header["theory"] = dict(THEORY)
    if not result:
        return Transcript(header=header)
    details: dict[str, Any] = {}
    if outcome is not None:  # an aborted game's summary holds nothing
        details = {"outcome": outcome, "identified": identified, "chameleon": chameleon,
                   "num_words": 16}
    if fail_seat is not None:
        details["fail"] = {"seat": fail_seat}
    return Transcript(header=header, result={"kind": "result", "status": status,
                                             "usage": usage or {},
                                             "summary": {"details": details}})


def transcripts() -> list[Transcript]:
    return [
        game([A, B, A, A], 2, "IdentifiedWin", True,
             usage={"1": {"input_tokens": 5, "output_tokens": 1},
                    "2": {"input_tokens": 10, "output_tokens": 1}}),
        game([B, A, A, A], 1, "IdentifiedLoss", True),
        game([B, B, A, B], 3, "MisidentifiedLoss", False,
             usage={"3": {"input_tokens": 7, "output_tokens": 2}}),
        game([B, B, B, A], 4, "Fail", False, fail_seat=2),
        game([A, A, A, A], 1, None, False, status="aborted"),
        game([A, A, A, A], 1, None, False, result=False),
        game([T, T, T, T], 1, "IdentifiedWin", True, theory=True),
        game([T, T, T, T], 2, "MisidentifiedLoss", False, theory=True),
        Transcript(header={"game": "connections", "seats": {}},
                   result={"status": "completed", "summary": {}}),
    ]


def test_every_metric_on_hand_made_games() -> None:
    m = compute_metrics(transcripts())
    # 7 finished games (T1-T5, T7, T8); valid: T1, T2, T3, T7, T8 = 5; of these the
    # chameleon was caught in T1, T2, T7 = 3.
    overall = {
        "games": 7, "valid": 5,
        "valid_ratio": 5 / 7,
        "identified": 3,
        "identification_rate": 0.6,            # 3 caught / 5 valid
        "non_chameleon_wins": 2,               # T1, T7
        "non_chameleon_win_rate": 0.4,         # 2 / 5
        # IdentifiedLoss is a chameleon win too: (5 valid - 2 IdentifiedWin) / 5
        "chameleon_win_rate": 0.6,
        "second_chance_success_rate": 1 / 3,   # 1 IdentifiedLoss (T2) / 3 caught
        "theory_games": 2, "incomplete": 1, "aborted": 1, "fail": 1,
        "outcomes": {"IdentifiedWin": 2, "IdentifiedLoss": 1, "MisidentifiedLoss": 2,
                     "Fail": 1},
        "trivial_baseline": 15 / 64,           # (1/N)(K-1)/K, every game N = 4, K = 16
    }
    per_a = {  # T1 (3 seats), T2 (3 seats), T3 (chameleon), T4 (chameleon), T5 (4 seats)
        "games": 12, "valid": 7, "wins": 4,    # T1 x3 and T3
        "chameleon_games": 1, "chameleon_wins": 1, "caught": 0, "second_chance_wins": 0,
        "non_chameleon_games": 6, "non_chameleon_wins": 3,
        "fails_caused": 0, "input_tokens": 12, "output_tokens": 3,   # 5 + 7, 1 + 2
        "win_rate": 4 / 7,                     # wins / valid games
        "chameleon_win_rate": 1.0,             # 1 / 1
        "caught_rate": 0.0,                    # 0 / 1
        "second_chance_success_rate": None,    # never caught
        "non_chameleon_win_rate": 0.5,         # 3 / 6
        "fail_rate": 0.0,                      # 0 / 12
    }
    per_b = {  # T1 (chameleon), T2 (chameleon), T3 (3 seats), T4 (3 seats, seat 2 failed)
        "games": 8, "valid": 5, "wins": 1,     # T2, won on its second chance
        "chameleon_games": 2, "chameleon_wins": 1, "caught": 2, "second_chance_wins": 1,
        "non_chameleon_games": 3, "non_chameleon_wins": 0,
        "fails_caused": 1, "input_tokens": 10, "output_tokens": 1,
        "win_rate": 0.2,                       # 1 / 5
        "chameleon_win_rate": 0.5,             # 1 / 2
        "caught_rate": 1.0,                    # 2 / 2
        "second_chance_success_rate": 0.5,     # 1 / 2
        "non_chameleon_win_rate": 0.0,         # 0 / 3
        "fail_rate": 0.125,                    # 1 / 8
    }
    per_t = {  # T7 and T8, 4 seats each
        "games": 8, "valid": 8, "wins": 4,     # T7's three non-chameleons, T8's chameleon
        "chameleon_games": 2, "chameleon_wins": 1, "caught": 1, "second_chance_wins": 0,
        "non_chameleon_games": 6, "non_chameleon_wins": 3,
        "fails_caused": 0, "input_tokens": 0, "output_tokens": 0,
        "win_rate": 0.5, "chameleon_win_rate": 0.5, "caught_rate": 0.5,
        "second_chance_success_rate": 0.0,     # 0 / 1
        "non_chameleon_win_rate": 0.5,         # 3 / 6
        "fail_rate": 0.0,
    }
    matchup_columns = ["chameleon", "non_chameleons", "games", "valid", "valid_ratio",
                       "identification_rate", "non_chameleon_win_rate",
                       "second_chance_success_rate"]
    theory_columns = ["strategy", "chameleon", "N", "K", "alpha", "l", "games", "wins",
                      "measured", "ci_low", "ci_high", "bound", "bound_kind", "holds",
                      "resolvable", "slack", "exact"]
    expected = {
        "overall": overall,
        "per_player": {A: per_a, B: per_b, T: per_t},
        "tables": {
            "matchups": {"columns": matchup_columns, "rows": [
                [A, A, 1, 0, 0.0, None, None, None],          # T5: nothing valid
                [A, B, 2, 1, 0.5, 0.0, 0.0, None],            # T3, T4 (Fail)
                [B, A, 2, 2, 1.0, 1.0, 0.5, 0.5],             # T1, T2
                [T, T, 2, 2, 1.0, 0.5, 0.5, 0.0]]},           # T7, T8
            "outcomes": {"columns": ["outcome", "games", "share"], "rows": [
                ["IdentifiedWin", 2, 2 / 7], ["IdentifiedLoss", 1, 1 / 7],
                ["MisidentifiedLoss", 2, 2 / 7], ["Fail", 1, 1 / 7], ["Aborted", 1, 1 / 7]]},
            # 1 win in 2 games: measured 0.5; Wilson (z² = 3.841459, 1 + z²/2 = 2.920730):
            # centre 0.5, half z·sqrt(0.125 + z²/16) / 2.920730 = 0.405471. Bound 1/N
            # (Proposition 1 at α = 0), exact (1/N)(K-1)/K = 15/64. Two games cannot show
            # a bound under wilson(0, 2)'s top, z²/(2 + z²) = 0.6576: not resolvable, and
            # it holds as the low end 0.0945 is under 0.25; slack 0.25 - 0.5.
            "theory": {"columns": theory_columns, "rows": [
                ["concealing", T, 4, 16, 0.0, None, 2, 1, 0.5, 0.0945, 0.9055, 0.25,
                 "upper", True, False, -0.25, 15 / 64]]},
        },
    }
    # Wilson intervals, worked to 4 decimals above; 2 of 5 overall:
    # centre (0.4 + z²/10) / (1 + z²/5) = 0.443448, half z·sqrt(0.048 + z²/100) /
    # 1.768292 = 0.325827 -> [0.1176, 0.7693].
    got = m["overall"].pop("non_chameleon_win_rate_ci95")
    assert [round(x, 4) for x in got] == [0.1176, 0.7693]
    row = m["tables"]["theory"]["rows"][0]
    assert [round(row[9], 4), round(row[10], 4)] == [0.0945, 0.9055]
    row[9], row[10] = 0.0945, 0.9055
    close(m, expected)
