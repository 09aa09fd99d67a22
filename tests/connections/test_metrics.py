"""Connections' metrics and charts, from real transcripts."""

from __future__ import annotations

import asyncio
from pathlib import Path

from stille_post.core.transcript import Transcript
from stille_post.games.connections.charts import charts
from stille_post.games.connections.metrics import compute_metrics
from stille_post.session import play_game


def test_table1_columns_rates_and_charts(tmp_path: Path) -> None:
    paths = []
    for seed, players in enumerate([["frequency"] * 3, ["oracle:p=0.4"] * 3]):
        out = tmp_path / f"g{seed}.jsonl"
        asyncio.run(play_game("connections", seed=seed, out=out, players=players,
                              options={"word": "goldfish", "max_attempts": 12}))
        paths.append(out)
    m = compute_metrics(Transcript.load(p) for p in paths)
    rows = m["per_game"]
    assert len(rows) == 2
    for r in rows:
        assert {"word", "reveals", "guesser_wrong", "setter_blocked", "iterations",
                "winner"} <= set(r)
        assert r["reveals"] + r["guesser_wrong"] + r["setter_blocked"] == r["iterations"]
        assert r["word"] == "goldfish"
    assert [r["oracle"] for r in rows] == [False, True]
    o = m["overall"]
    assert o["oracle_games"] == 1
    assert o["attempts"] == sum(r["attempts"] for r in rows)
    assert abs(o["connection_rate"] + o["blocked_rate"] + o["wrong_rate"] - 1) < 1e-9
    lo, hi = o["connection_rate_ci95"]
    assert lo <= o["connection_rate"] <= hi
    freq = m["per_player"]["bot:frequency"]
    assert freq["clues"] > 0 and 0 <= freq["clue_success_rate"] <= 1
    assert freq["block_rate_as_setter"] is not None
    assert m["tables"]["table1"]["columns"][:5] == ["word", "reveals", "guesser_wrong",
                                                   "setter_blocked", "iterations"]
    pics = charts({"metrics": m})
    assert all(v.startswith("data:image/png;base64,") for v in pics.values())
    assert "Letters revealed over attempts (Figure 1)" in pics
