"""Budgets (tournament/budget.py): a tournament against a loopback OpenAI-compatible
server, with per-alias prices in models.toml, stops when the next game would cross the
cap, records why and what it spent, and a resume with a higher cap finishes it with the
transcripts of an uncapped run."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import canonical_text
from stille_post.tournament.spend import SPEND_FILE, folder_spend
from tests import clirun
from tests.emulators.server import Emulator, running

pytestmark = [pytest.mark.heavy, pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])]

MODELS = """
[models.fast]
provider = "openai-compatible"
model = "tiny-a"
base_url = "{url}"
price = {{ input = 2.0, cached_input = 0.5, output = 8.0 }}

[models.slow]
provider = "openai-compatible"
model = "tiny-b"
base_url = "{url}"
price = {{ input = 1.0, cached_input = 0.25, output = 4.0 }}
{extra}
"""

GAME = ["tournament", "stille-post", "--online", "--games", "4", "--seed", "3",
        "--players", "model:fast,model:slow,detective,random", "--max-rounds", "1",
        "--concurrency", "1"]


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with running("openai") as e:
        yield e


def _models(tmp: Path, emu: Emulator, extra: str = "") -> Path:
    path = tmp / "models.toml"
    path.write_text(MODELS.format(url=emu.base_url, extra=extra), encoding="utf-8")
    return path


def _run(tmp: Path, *args: str) -> Any:
    return clirun.run_cli(*args, cwd=tmp, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})


def _fresh(emu: Emulator) -> None:
    """The emulator caches prompt prefixes it has seen; a run starts it empty, so two
    runs of the same games in the same order are billed the same."""
    emu.state.seen_prompts.clear()


def _texts(folder: Path) -> dict[str, str]:
    return {p.name: canonical_text(p) for p in sorted((folder / "games").glob("*.jsonl"))}


@pytest.fixture(scope="module")
def full(emu: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four games, uncapped: what every capped run is compared with."""
    tmp = tmp_path_factory.mktemp("budget")
    _models(tmp, emu)
    _fresh(emu)
    # One process, as every capped run is: the emulator bills a prompt by the prefixes it
    # has seen before it, so the games must reach it in the same order.
    done = _run(tmp, *GAME, "--workers", "1", "--out", "full", "--json")
    assert done.returncode == 0, done.stderr
    return tmp / "full"


def test_soft_cap_stops_early_and_resume_finishes_like_an_uncapped_run(
        tmp_path: Path, emu: Emulator, full: Path) -> None:
    _models(tmp_path, emu)
    whole = folder_spend(full)
    total = whole.all.dollars
    assert total > 0 and whole.all.models["model:fast"].cached_input_tokens > 0
    cap = round(total * 0.6, 6)  # below the cost of the four games: two fit

    _fresh(emu)
    capped = _run(tmp_path, *GAME, "--out", "capped", "--budget-usd", str(cap), "--json")
    assert capped.returncode == 0, capped.stderr
    summary = json.loads(capped.stdout)
    record = json.loads((tmp_path / "capped" / SPEND_FILE).read_text())
    assert record["stopped"] == summary["budget"]["stopped"] == "budget"
    assert record["cap"] == "budget_usd" and "--budget-usd" in record["reason"]
    spent = record["spend"]["dollars"]
    finished = record["games"]["finished"]
    dearest = sum(m.game_dollars for m in folder_spend(tmp_path / "capped").completed
                  .models.values())
    # Soft cap, one game at a time: a game starts only when the spend plus its expected
    # cost (for fixed seats, what each model spent in its dearest game) fits under the
    # cap...
    assert spent <= cap, (spent, cap)
    # ...and the run stopped because the next one would not have fitted.
    assert spent + dearest > cap
    assert f"${spent:.4f} spent" in record["reason"]  # the stop line's figure is the file's
    assert 1 <= finished < 4 and record["games"]["not_started"] == 4 - finished
    assert set(record["spend"]["models"]) == {"model:fast", "model:slow"}
    for m in record["spend"]["models"].values():
        assert {"input_tokens", "cached_input_tokens", "output_tokens", "dollars"} <= set(m)
    assert summary["spend"]["dollars"] == spent
    # The caps are run settings: `--resume --out` alone would keep this one.
    saved = json.loads((tmp_path / "capped" / "tournament.json").read_text())["run"]
    assert saved["budget_usd"] == cap

    done = _run(tmp_path, "tournament", "--resume", "--out", "capped", "--online",
                "--budget-usd", str(total * 3), "--json")
    assert done.returncode == 0, done.stderr
    after = json.loads(done.stdout)
    assert after["status"] == {"completed": 4, "aborted": 0, "missing": 0}
    assert after["budget"]["stopped"] == "completed"
    assert after["this_run"]["played"] == 4 - finished
    assert _texts(tmp_path / "capped") == _texts(full)
    runs = json.loads((tmp_path / "capped" / SPEND_FILE).read_text())["runs"]
    assert [r["stopped"] for r in runs] == ["budget", "completed"]
    assert after["spend"]["dollars"] == pytest.approx(total, abs=1e-5)


def test_hard_cap_cuts_running_games_and_resume_replays_only_them(
        tmp_path: Path, emu: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    # No prompt caching here: a cut game's prompts would otherwise make its replay
    # cheaper than the uncapped run's, and the transcripts record the usage.
    monkeypatch.setattr(emu.state, "cached_tokens", lambda *a, **k: 0)
    _models(tmp_path, emu)
    args = [*GAME[:-1], "3"]  # three games at a time
    args[4] = "3"
    assert _run(tmp_path, *args, "--workers", "1", "--out", "full", "--json").returncode == 0
    total = folder_spend(tmp_path / "full").all.dollars
    # Reached inside the first game (a game's cost is not known yet: it plays alone), yet
    # past the worst case of its first calls.
    cap = round(total / 6, 6)
    cut = _run(tmp_path, *args, "--out", "hard", "--budget-usd", str(cap), "--hard-cap",
               "--json")
    assert cut.returncode == 0, cut.stderr
    record = json.loads((tmp_path / "hard" / SPEND_FILE).read_text())
    assert record["stopped"] == "budget"
    with sqlite3.connect(tmp_path / "hard" / "index.sqlite") as db:
        rows = db.execute("SELECT status, reason FROM games").fetchall()
    assert rows and all(s == "aborted" and r.startswith("budget: ") and "--budget-usd" in r
                        for s, r in rows), rows
    cut_spend = record["spend"]["dollars"]
    # A hard cap sends no call whose worst case would pass it: the spend stays under.
    assert 0 < cut_spend <= cap

    done = _run(tmp_path, "tournament", "--resume", "--out", "hard", "--online",
                "--budget-usd", str(total * 3), "--json")
    assert done.returncode == 0, done.stderr
    after = json.loads(done.stdout)
    assert after["status"] == {"completed": 3, "aborted": 0, "missing": 0}
    assert _texts(tmp_path / "hard") == _texts(tmp_path / "full")
    kept = sorted(p.name for p in (tmp_path / "hard" / "games").glob("*.cut-*"))
    assert len(kept) == len(rows)  # the cut transcripts are kept, not overwritten
    # Their spend still counts: the folder spent the full run plus the cut attempts.
    assert after["spend"]["dollars"] == pytest.approx(total + cut_spend, abs=1e-5)


def test_token_cap_and_a_model_cap_from_the_registry(tmp_path: Path, emu: Emulator,
                                                     full: Path) -> None:
    whole = folder_spend(full).all
    _models(tmp_path, emu)
    _fresh(emu)
    cap = int(whole.tokens * 0.6)  # two games of four fit
    tok = _run(tmp_path, *GAME, "--out", "tok", "--max-tokens", str(cap), "--json")
    assert tok.returncode == 0, tok.stderr
    rec = json.loads((tmp_path / "tok" / SPEND_FILE).read_text())
    assert rec["stopped"] == "budget" and rec["cap"] == "max_tokens"
    spent, n = rec["spend"]["tokens"], rec["games"]["finished"]
    dearest = sum(m.game_tokens for m in folder_spend(tmp_path / "tok").completed
                  .models.values())
    assert spent <= cap < spent + dearest and 1 <= n < 4

    # A cap on one alias in models.toml: model:slow may spend 60% of its uncapped bill.
    slow_cap = round(whole.models["model:slow"].dollars * 0.6, 6)
    (tmp_path / "m2").mkdir()
    _models(tmp_path / "m2", emu, extra=f"budget_usd = {slow_cap}\n")
    _fresh(emu)
    capped = _run(tmp_path / "m2", *GAME, "--out", "slow", "--json")
    assert capped.returncode == 0, capped.stderr
    rec = json.loads((tmp_path / "m2" / "slow" / SPEND_FILE).read_text())
    assert rec["stopped"] == "budget" and rec["cap"] == "model:slow.budget_usd"
    assert rec["caps"]["models"] == {"slow": {"budget_usd": slow_cap, "max_tokens": None}}
    spent, n = rec["spend"]["models"]["model:slow"]["dollars"], rec["games"]["finished"]
    dearest = folder_spend(tmp_path / "m2" / "slow").completed.models["model:slow"]
    assert spent <= slow_cap < spent + dearest.game_dollars and 1 <= n < 4


def test_report_shows_the_spend_per_model(full: Path) -> None:
    out = _run(full.parent, "report", "full", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    spend = data["spend"]["models"]
    assert set(spend) == {"model:fast", "model:slow"}
    # Cached input is billed at the cached rate: fast pays 2.0 / 0.5 / 8.0 per 1M tokens.
    f = spend["model:fast"]
    billed = ((f["input_tokens"] - f["cached_input_tokens"]) * 2.0
              + f["cached_input_tokens"] * 0.5 + f["output_tokens"] * 8.0) / 1e6
    assert f["dollars"] == pytest.approx(billed, abs=1e-5)
    text = _run(full.parent, "report", "full").stdout
    assert "cached input" in text and "model:fast" in text


@pytest.mark.parametrize("args, expect", [
    (["--budget-usd", "0"], "--budget-usd: Input should be greater than 0"),
    (["--budget-usd", "-2"], "--budget-usd: Input should be greater than 0"),
    (["--max-tokens", "0"], "--max-tokens: Input should be greater than 0"),
    # The message names the option that conflicts (it used to be "error: : a budget...").
    (["--budget-usd", "1", "--workers", "2"], "error: --budget-usd: a budget needs --workers 1"),
    (["--max-tokens", "9", "--workers", "2"], "error: --max-tokens: a budget needs --workers 1"),
    (["--rate-limit", "openai=60", "--workers", "2"],
     "error: --rate-limit: rate limits need --workers 1"),
    (["--budget-usd", "1", "--players",
      "openai-compatible:unpriced@http://127.0.0.1:9/v1,detective,random,gambler"],
     "has none: add `price = { input = ..., cached_input = ..., output = ... }`"),
])
def test_bad_caps_are_one_line_and_exit_2(tmp_path: Path, emu: Emulator, args: list[str],
                                          expect: str) -> None:
    _models(tmp_path, emu)
    done = _run(tmp_path, *GAME, "--out", "bad", *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert expect in done.stderr
    assert not (tmp_path / "bad").exists()  # refused before anything was written


def test_bad_caps_in_files_name_the_line(tmp_path: Path, emu: Emulator) -> None:
    (tmp_path / "t.toml").write_text('game = "stille-post"\ngames = 2\nbudget_usd = -1\n',
                                     encoding="utf-8")
    done = _run(tmp_path, "tournament", "--config", "t.toml")
    assert done.returncode == 2 and "t.toml:3: budget_usd" in done.stderr, done.stderr
    _models(tmp_path, emu, extra="max_tokens = 0\n")
    done = _run(tmp_path, *GAME, "--out", "x")
    assert done.returncode == 2 and "models.slow.max_tokens" in done.stderr, done.stderr
