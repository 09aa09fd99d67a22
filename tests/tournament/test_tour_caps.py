"""Caps against a loopback OpenAI-compatible server whose replies may lie about their
usage (issue 36, items 1-4): the folder's ledger never goes down, nothing a server says
ends the run or makes the folder unreadable, a soft cap is passed by at most one game's
cost and a hard cap by at most one call's, even with 8 games at once, and a server that
reports no usage is warned of at once and counted by an estimate.

Calls cost about $0.50 here (prices of $400 per 1M tokens, about 1,300 tokens a call),
the scale of the issue's probe ($0.40 calls, a $1 cap, 8 games at once)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from stille_post.providers.pricing import recorded_cost_usd
from stille_post.tournament.spend import (
    SPEND_FILE,
    folder_spend,
    labels_and_usage,
    ledger,
    transcript_ends,
)
from tests import clirun
from tests.emulators import server
from tests.emulators.server import PRICED_MODELS as MODELS
from tests.emulators.server import Emulator, running

pytestmark = [pytest.mark.heavy, pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])]

PRICE = 400.0  # USD per 1M tokens, input and output alike
GAME = ["tournament", "stille-post", "--online", "--seed", "3", "--max-rounds", "1",
        "--players", "model:fast,model:slow,detective,random"]

Usage = dict[str, Any]


class Server:
    """The emulator, its replies' usage logged and, per test, rewritten (`lie`)."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self.calls: list[Usage] = []  # the usage each reply really had
        self.lie: Callable[[Usage], Usage | None] | None = None

    def handler(self, original: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        def answer(state: Any, path: str, body: bytes, req: dict[str, Any]) -> dict[str, Any]:
            out = original(state, path, body, req)
            self.calls.append(dict(out["usage"]))
            if self.lie is not None:
                told = self.lie(dict(out["usage"]))
                if told is None:
                    del out["usage"]
                else:
                    out["usage"] = told
            return out
        return answer

    def dearest_call(self) -> float:
        return max((u["prompt_tokens"] + u["completion_tokens"]) * PRICE / 1e6
                   for u in self.calls)


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with running("openai") as e:
        # No prompt caching: every call is priced in full, so costs are easy to bound.
        e.state.cached_tokens = lambda *a, **k: 0  # type: ignore[method-assign]
        yield e


@pytest.fixture
def srv(emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Server:
    s = Server(emu)
    monkeypatch.setitem(server._HANDLERS, "openai", s.handler(server._HANDLERS["openai"]))
    (tmp_path / "models.toml").write_text(MODELS.format(url=emu.base_url, p=PRICE),
                                          encoding="utf-8")
    return s


def _run(tmp: Path, *args: str) -> Any:
    return clirun.run_cli(*args, cwd=tmp, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})


def _record(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / SPEND_FILE).read_text(encoding="utf-8"))
    return data


def _game_costs(folder: Path) -> list[float]:
    """Each recorded game's dollars, from its transcript."""
    costs = []
    for path in sorted((folder / "games").glob("*.jsonl*")):
        ends = transcript_ends(path)
        if ends is not None:
            labels, usage = labels_and_usage(*ends)
            costs.append(sum(recorded_cost_usd(labels.get(s, ""), u) for s, u in usage.items()))
    return costs


def _stop_line_spent(record: dict[str, Any]) -> float:
    m = re.search(r"\$([0-9.]+) spent", record["reason"])
    assert m is not None, record["reason"]
    return float(m.group(1))


def test_a_soft_cap_is_passed_by_at_most_one_game_at_8_games_at_once(
        tmp_path: Path, srv: Server) -> None:
    cap = 10.0  # about three games
    done = _run(tmp_path, *GAME, "--games", "16", "--concurrency", "8", "--out", "soft",
                "--budget-usd", str(cap), "--json")
    assert done.returncode == 0, done.stderr
    record = _record(tmp_path / "soft")
    spent = record["spend"]["dollars"]
    games = _game_costs(tmp_path / "soft")
    assert record["stopped"] == "budget" and record["cap"] == "budget_usd"
    assert len(games) >= 2  # more than the first game, which plays alone
    # Soft: games that started finish; what they cost beyond the cap is less than a game.
    assert spent - cap <= max(games), (spent, cap, games)
    # The stop line's "spent" is the file's own figure, and it says how far from the cap.
    assert _stop_line_spent(record) == pytest.approx(spent, abs=5e-5)
    assert ("over the cap" if spent > cap else "under it") in record["reason"]
    assert json.loads(done.stdout)["budget"]["reason"] == record["reason"]


def test_a_hard_cap_is_passed_by_at_most_one_call_at_8_games_at_once(
        tmp_path: Path, srv: Server) -> None:
    cap = 2.0  # less than one game: the first game is cut
    done = _run(tmp_path, *GAME, "--games", "16", "--concurrency", "8", "--out", "hard",
                "--budget-usd", str(cap), "--hard-cap", "--json")
    assert done.returncode == 0, done.stderr
    record = _record(tmp_path / "hard")
    spent = record["spend"]["dollars"]
    assert record["stopped"] == "budget"
    assert spent > 0 and spent - cap <= srv.dearest_call(), (spent, cap, srv.dearest_call())
    assert _stop_line_spent(record) == pytest.approx(spent, abs=5e-5)


def test_negative_token_counts_never_lower_the_ledger(tmp_path: Path, srv: Server) -> None:
    """The probe: `prompt_tokens: -1000000000` drove a folder's ledger to -$164,000, and a
    capped run then played on. Now such a reply is counted by an estimate of its texts:
    the ledger grows, the cap stops the run, and one warning line says why."""
    srv.lie = lambda u: {**u, "prompt_tokens": -1_000_000_000}
    cap = 10.0
    done = _run(tmp_path, *GAME, "--games", "16", "--concurrency", "8", "--out", "neg",
                "--budget-usd", str(cap))
    assert done.returncode == 0, done.stderr
    record = _record(tmp_path / "neg")
    assert record["stopped"] == "budget", record["reason"]
    assert 0 < record["spend"]["dollars"] <= cap + max(_game_costs(tmp_path / "neg"))
    for label in ("model:fast", "model:slow"):
        m = record["spend"]["models"][label]
        assert m["input_tokens"] > 0 and m["dollars"] > 0 and m["unknown_calls"] > 0
    warnings = [x for x in done.stderr.splitlines() if x.startswith("warning: ")]
    assert sorted(w.split()[1] for w in warnings) == ["model:fast", "model:slow"], warnings
    assert set(record["warnings"]) == set(warnings)
    # Every transcript says which of its figures are estimates.
    for path in (tmp_path / "neg" / "games").glob("*.jsonl"):
        ends = transcript_ends(path)
        assert ends is not None
        for row in ends[1]["usage"].values():
            assert row["input_tokens"] >= 0 and row.get("cost_usd", 0) >= 0


def test_replies_without_usage_are_warned_of_at_once_and_counted(tmp_path: Path,
                                                                 srv: Server) -> None:
    """A server that reports no usage made a cap silently inert."""
    srv.lie = lambda u: None
    cap = 10.0
    done = _run(tmp_path, *GAME, "--games", "16", "--concurrency", "8", "--out", "none",
                "--budget-usd", str(cap))
    assert done.returncode == 0, done.stderr
    record = _record(tmp_path / "none")
    assert record["stopped"] == "budget"
    assert record["games"]["finished"] < 16
    warnings = [x for x in done.stderr.splitlines() if "without a usable token count" in x]
    assert len(warnings) == 2, done.stderr  # one line per model, the first time
    # The estimate (4 characters a token) is near what the server would have billed.
    billed = sum((u["prompt_tokens"] + u["completion_tokens"]) * PRICE / 1e6
                 for u in srv.calls)
    assert 0.5 * billed <= record["spend"]["dollars"] <= 1.5 * billed


def test_an_absurd_count_neither_ends_the_run_nor_breaks_the_folder(tmp_path: Path,
                                                                    srv: Server) -> None:
    """The probe: `prompt_tokens: 10**30` ended the run with `unexpected OverflowError`
    (SQLite INTEGER), and `--resume` and `report` failed the same way."""
    srv.lie = lambda u: {**u, "prompt_tokens": 10**30}
    done = _run(tmp_path, *GAME, "--games", "3", "--concurrency", "2", "--out", "big")
    assert done.returncode == 0, done.stderr
    report = _run(tmp_path, "report", "big", "--json")
    assert report.returncode == 0, report.stderr
    assert 0 < json.loads(report.stdout)["spend"]["dollars"] < 100
    resumed = _run(tmp_path, "tournament", "--resume", "--out", "big", "--online")
    assert resumed.returncode == 0, resumed.stderr


BAD_ROWS = [
    {"input_tokens": 10**30, "output_tokens": 5},
    {"input_tokens": -10**9, "output_tokens": 5, "cost_usd": -164000.0},
    {"input_tokens": math.inf, "output_tokens": math.nan},
    {"input_tokens": "many", "output_tokens": [1]},
]


def test_a_folder_whose_transcripts_hold_such_counts_stays_readable(
        tmp_path: Path, srv: Server) -> None:
    """Transcripts written before the fix (or edited by hand), one per kind of bad count
    (10**30, negative with a negative cost, infinity and NaN, not numbers): the index is
    rebuilt, `report` and `--resume` read the folder, and no spend is negative."""
    done = _run(tmp_path, *GAME, "--games", str(len(BAD_ROWS)), "--out", "f")
    assert done.returncode == 0, done.stderr
    victims = sorted((tmp_path / "f" / "games").glob("*.jsonl"))
    assert len(victims) == len(BAD_ROWS)
    for victim, row in zip(victims, BAD_ROWS, strict=True):
        lines = victim.read_text(encoding="utf-8").splitlines()
        result = json.loads(lines[-1])
        result["usage"][next(iter(result["usage"]))] = row
        lines[-1] = json.dumps(result)  # NaN and Infinity as Python writes them
        victim.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "f" / "index.sqlite").unlink()  # the index is rebuilt from the transcripts
    report = _run(tmp_path, "report", "f", "--json")
    assert report.returncode == 0, report.stderr
    spend = json.loads(report.stdout)["spend"]
    assert 0 < spend["dollars"] < 1e6 and spend["tokens"] > 0
    assert all(m["dollars"] >= 0 and m["input_tokens"] >= 0
               for m in spend["models"].values())
    resumed = _run(tmp_path, "tournament", "--resume", "--out", "f", "--online",
                   "--budget-usd", "1000")
    assert resumed.returncode == 0, resumed.stderr
    assert 0 < _record(tmp_path / "f")["spend"]["dollars"] < 1e6


def test_the_ledger_never_goes_down(tmp_path: Path, srv: Server) -> None:
    """`spend.json` is a floor: a transcript moved aside (damaged) or deleted, and a
    spend.json edited by hand (negative, NaN, a list), never lower what the caps see."""
    done = _run(tmp_path, *GAME, "--games", "3", "--out", "l", "--budget-usd", "1000")
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "l"
    first = _record(folder)["spend"]["dollars"]
    assert first > 0
    sorted((folder / "games").glob("*.jsonl"))[0].unlink()
    assert folder_spend(folder).all.dollars < first  # the transcripts alone went down...
    assert ledger(folder).all.dollars == pytest.approx(first, abs=1e-6)  # ...the ledger not
    data = _record(folder)
    data["spend"]["dollars"] = -164000
    data["spend"]["models"]["model:fast"]["dollars"] = math.nan
    data["spend"]["models"]["model:slow"] = {"dollars": "a lot", "input_tokens": -5}
    data["runs"] = "not a list"
    (folder / SPEND_FILE).write_text(json.dumps(data), encoding="utf-8")
    assert ledger(folder).all.dollars >= folder_spend(folder).all.dollars >= 0
    resumed = _run(tmp_path, "tournament", "--resume", "--out", "l", "--online",
                   "--budget-usd", "1000")
    assert resumed.returncode == 0, resumed.stderr
    after = _record(folder)
    assert after["spend"]["dollars"] >= folder_spend(folder).all.dollars > 0
    assert [r["stopped"] for r in after["runs"]] == ["completed"]  # the bad list is dropped
