"""The chameleon-theory sweep: a row's verdict (`holds`), the ratio and its fit, and a
tiny sweep through the tournament path whose folder reports draw Figure 2 (a browser
opens it). The sweep's own figures come from `python -m benchmarks chameleon-theory`
(docs/chameleon-theory.md); here every point plays a few dozen games."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchmarks import bench_chameleon_theory as bench
from stille_post.core.transcript import Transcript
from stille_post.games.chameleon.charts import TITLE, charts
from stille_post.games.chameleon.metrics import compute_metrics
from stille_post.games.chameleon.theory import figure, model
from stille_post.tournament.report import build_report

pytestmark = pytest.mark.heavy  # a tiny sweep on disk: seconds in all


def concealing(n: int = 4, k: int = 4, alpha: float = 0.5) -> model.Theory:
    return model.theory_of("concealing", n, k, alpha)


# --- a row's verdict --------------------------------------------------------------------

def test_upper_bound_holds_when_the_whole_interval_is_below_it() -> None:
    t = concealing()  # bound 1/4 + 3/16·sqrt(3/8) = 0.3648
    assert figure.row(t, "bot:theory", 2000, 400)["holds"]  # [0.183, 0.218]
    high = figure.row(t, "bot:theory", 2000, 700)  # 0.35: interval reaches 0.371
    assert high["resolvable"] and not high["holds"]
    assert high["slack"] == pytest.approx(high["bound"] - 0.35)
    assert not figure.row(t, "bot:theory", 2000, 1000)["holds"]


def test_lower_bound_holds_when_the_whole_interval_is_above_it() -> None:
    t = model.theory_of("amb", 3, 8, None)  # bound 0.1977, exact 0.3056
    good = figure.row(t, "bot:theory", 2000, 611)
    assert good["holds"] and good["bound_kind"] == "lower" and good["exact"] == \
        pytest.approx(model.amb_exact(3, 2))
    assert not figure.row(t, "bot:theory", 2000, 420)["holds"]  # 0.21, interval from 0.193


def test_a_bound_too_small_for_the_sample_is_only_not_refuted() -> None:
    # Revealing α = 1 at N = 10: bound 18 e^-9 = 0.0022 < the top of 0 wins in 1,000
    # games (0.0038): the row says it cannot resolve it, and holds while not refuted.
    t = model.theory_of("revealing", 10, 4, 1.0)
    r = figure.row(t, "bot:theory", 1000, 0)
    assert not r["resolvable"] and r["holds"]
    assert not figure.row(t, "bot:theory", 1000, 12)["holds"]  # refuted: 0.012 ± 0.006
    # Where the proof's exact rate sits within sampling error of the bound (the trivial
    # strategy's 1/N is 1/(NK) above its rate) the row is unresolvable too.
    triv = model.theory_of("concealing", 10, 33, 0.0)
    r = figure.row(triv, "bot:theory", 2000, round(model.trivial(10, 33) * 2000))
    assert not r["resolvable"] and r["holds"]
    assert figure.row(concealing(3, 4, 0.0), "bot:theory", 2000, 500)["resolvable"]


def test_a_zero_bound_is_met_by_zero_wins() -> None:
    t = model.theory_of("revealing", 3, 4, 2.0)
    assert figure.row(t, "bot:theory", 2000, 0)["holds"]
    assert not figure.row(t, "bot:theory", 2000, 1)["holds"]


def test_small_upper_bounds_get_more_games() -> None:
    assert bench.games_for("concealing", 3, 4, 0.5, 2000) == 2000
    # 18 e^-8 = 0.0060: 20 wins' worth is 3,314 games.
    assert bench.games_for("revealing", 9, 4, 1.0, 2000) == math.ceil(20 / (18 * math.exp(-8)))
    assert bench.games_for("revealing", 3, 4, 2.0, 2000) == 2000  # a bound of 0


def _rows(**over: Any) -> dict[str, Any]:
    # "chameleon" is the seat's label, as the index and the metrics give it.
    base = {"strategy": "pi_amb", "chameleon": "bot:theory", "N": 3, "K": 12, "alpha": None,
            "l": 3, "games": 1000, "wins": 400, "measured": 0.4}
    return {**base, **over}


def test_ratio_divides_measured_rates_and_the_fit_sees_growth() -> None:
    rows = []
    for n, amb_wins, triv_wins in ((3, 400, 300), (5, 300, 180), (8, 240, 120)):
        rows.append(_rows(N=n, K=3 * (n + 1), wins=amb_wins))
        rows.append(_rows(strategy="concealing", N=n, K=3 * (n + 1), alpha=0.0, l=None,
                          wins=triv_wins))
    rows.append(_rows(strategy="concealing", N=3, K=4, alpha=0.0, l=None, wins=1))  # K ≠ 3(N+1)
    rows.append(_rows(N=3, chameleon="bot:theory-null", wins=900))  # not consistent
    ratio_rows, fit = bench.ratios(rows)
    assert [r["ratio"] for r in ratio_rows] == pytest.approx([4 / 3, 5 / 3, 2.0])
    assert ratio_rows[0]["expected_ratio"] == pytest.approx(
        model.amb_exact(3, 3) / model.trivial(3, 12))
    assert fit["slope_per_ln_n"] > 0 and fit["grows"]
    _, fit = bench.ratios(rows[:4])
    assert fit["grows"] is None  # under 3 points: no verdict


def test_bad_options_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["--games", "0"], ["--n", "2..5"], ["--games", "many"], ["--n", ""]):
        assert bench.main(args) == 2, args
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


# --- a tiny sweep on disk ---------------------------------------------------------------

POINTS = (bench.Point("concealing", 3, 4, 0.5, "theory", 40),
          bench.Point("revealing", 3, 4, 1.0, "theory", 40),
          bench.Point("amb", 3, 8, None, "theory", 40),
          bench.Point("amb", 3, 8, None, "theory-null", 20))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("sweep")
    rows: list[dict[str, Any]] = []
    for point in POINTS:
        rows += bench.play_point(point, out, workers=1)
    bench.mark_worst(rows)
    bench.write_report(rows, *bench.ratios(rows)[:1], out)
    return out, rows


def test_sweep_rows_match_the_report_metrics(sweep: tuple[Path, list[dict[str, Any]]]) -> None:
    """The sweep counts from the index; a point folder's report counts from its
    transcripts (metrics.py): both give the same row."""
    out, rows = sweep
    assert [(r["strategy"], r["chameleon"], r["games"]) for r in rows] == [
        ("concealing", "bot:theory", 40), ("revealing", "bot:theory", 40),
        ("pi_amb", "bot:theory", 40), ("pi_amb", "bot:theory-null", 20)]
    for point, r in zip(POINTS, rows, strict=True):
        games = sorted((out / "points" / point.id / "games").glob("*.jsonl"))
        metrics = compute_metrics(Transcript.load(g) for g in games)
        assert metrics["overall"]["theory_games"] == point.games
        (from_metrics,) = figure.rows_of(metrics["tables"]["theory"])
        assert from_metrics == {k: v for k, v in r.items() if k in figure.COLUMNS}
    # A point's own folder report (`stille-post report`) draws the chart too.
    report = build_report(out / "points" / POINTS[2].id, passes=1)
    assert TITLE in charts(report)
    assert [r["worst"] for r in rows[2:]] == [
        rows[2]["measured"] <= rows[3]["measured"], rows[3]["measured"] < rows[2]["measured"]]


def test_replaying_a_point_gives_the_same_games(sweep: tuple[Path, list[dict[str, Any]]],
                                                tmp_path: Path) -> None:
    _, rows = sweep
    again = bench.play_point(POINTS[2], tmp_path, workers=1)
    assert [r["wins"] for r in again] == [rows[2]["wins"]]


def test_sweep_report_draws_figure_2(sweep: tuple[Path, list[dict[str, Any]]]) -> None:
    out, _ = sweep
    html = (out / "report.html").read_text(encoding="utf-8")
    assert TITLE in html and html.count('src="data:image/png;base64,') >= 1
    assert "pi_amb / trivial" in html


def test_no_play_summarises_what_is_there(sweep: tuple[Path, list[dict[str, Any]]],
                                          tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "copy"
    shutil.copytree(sweep[0], out)
    before = sorted(p.name for p in (out / "points").iterdir())
    code = bench.main(["--no-play", "--out", str(out), "--n", "3", "--games", "40", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in (out / "points").iterdir()) == before  # nothing played
    # Short: the null chameleon's 20 games, and concealing α = 0.5, whose plan asks 20
    # wins' worth at its bound (0.469): 43 games.
    assert result["points"] == 4 and result["partial"] == ["amb-n3-k8-l2-theory-null",
                                                           "concealing-n3-k4-a0.5-theory"]
    assert "concealing-n3-k12-a0-theory" in result["missing"]
    assert code == (0 if result["all_hold"] else 1)
    assert bench.main(["--no-play", "--n", "3"]) == 2  # needs --out


@pytest.mark.browser
@pytest.mark.block_network(allowed_hosts=[r"127\.0\.0\.1$", r"localhost$", r"::1$"])
def test_browser_opens_the_sweep_report(sweep: tuple[Path, list[dict[str, Any]]],
                                        browser: Any) -> None:
    out, _ = sweep
    browser.get((out / "report.html").as_uri())
    assert TITLE in browser.find_element("tag name", "body").text
    size = browser.execute_script(
        "const im = [...document.images].find(i => i.alt.includes(arguments[0]) ||"
        " i.closest('figure, section, div').textContent.includes(arguments[0]));"
        "return im && im.complete ? [im.naturalWidth, im.naturalHeight] : null;", TITLE)
    assert size is not None and size[0] > 1000 and size[1] > 300, size
