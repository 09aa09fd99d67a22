"""compute_metrics: the paper's rates and the matchup table, JSON-safe."""

from __future__ import annotations

import json

import pytest

from stille_post.games.chameleon.metrics import compute_metrics, wilson

from .conftest import play_many


def test_rates_follow_the_outcomes() -> None:
    ts = play_many(range(60), {"chameleon": "copycat", "others": "heuristic"})
    ts += play_many(range(40), {"chameleon": "trivial", "others": "revealing"})
    m = compute_metrics(ts)
    json.dumps(m)  # JSON-safe
    o = m["overall"]
    outcomes = [t.summary.flat()["outcome"] for t in ts]
    identified = sum(t.summary.flat().get("identified", False) for t in ts)
    assert o["games"] == 100 and o["valid"] == 100 and o["valid_ratio"] == 1.0
    assert o["identification_rate"] == pytest.approx(identified / 100)
    assert o["non_chameleon_win_rate"] == pytest.approx(outcomes.count("IdentifiedWin") / 100)
    assert o["second_chance_success_rate"] == pytest.approx(
        outcomes.count("IdentifiedLoss") / identified)
    assert sum(o["outcomes"].values()) == 100
    table = m["tables"]["matchups"]
    rows = {(r[0], r[1]): dict(zip(table["columns"], r, strict=True)) for r in table["rows"]}
    assert set(rows) == {("bot:copycat", "bot:heuristic"), ("bot:trivial", "bot:revealing")}
    assert rows[("bot:copycat", "bot:heuristic")]["games"] == 60
    per = m["per_player"]
    assert per["bot:copycat"]["chameleon_games"] == 60
    assert per["bot:heuristic"]["non_chameleon_games"] == 60 * 3
    assert per["bot:revealing"]["chameleon_games"] == 0


def test_fail_games_are_not_valid() -> None:
    ts = play_many(range(5), {"chameleon": "copycat", "others": "heuristic"})
    for t in ts[:2]:  # as a Fail game records itself
        summary = t.result["summary"]  # type: ignore[index]
        summary["valid"] = False
        summary["details"].update(outcome="Fail", identified=False,
                                  fail={"seat": 1, "decision": "word"})
    ts[2].result = None  # cut off: no result line
    o = compute_metrics(ts)["overall"]
    assert (o["games"], o["valid"], o["fail"], o["incomplete"]) == (4, 2, 2, 1)
    assert o["valid_ratio"] == 0.5


def test_other_games_are_ignored_and_empty_is_fine() -> None:
    m = compute_metrics([])
    assert m["overall"]["games"] == 0 and m["overall"]["valid_ratio"] is None
    assert m["tables"]["matchups"]["rows"] == []


def test_wilson() -> None:
    lo, hi = wilson(15, 64)  # type: ignore[misc]
    assert lo < 15 / 64 < hi
    assert wilson(0, 0) is None
