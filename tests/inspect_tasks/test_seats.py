"""`inspect:PROVIDER/MODEL` seats at our tables: the spec, `play` and `tournament` from
the command line, prices, and the one line without the `inspect` extra."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stille_post.core.errors import UnknownPlayerError
from stille_post.core.transcript import Transcript
from stille_post.core.usage import Usage
from stille_post.players.specs import parse_seat_spec
from stille_post.providers.inspect_model import INSTALL_HINT
from stille_post.providers.pricing import cost_usd, seat_cost_usd
from tests.clirun import run_cli

pytestmark = pytest.mark.heavy  # each command line imports Inspect in its own process


def test_the_spec() -> None:
    spec = parse_seat_spec("inspect:bedrock/anthropic.claude-3-haiku", ())
    assert (spec.provider, spec.model, spec.label, spec.is_llm, spec.offline) == \
        ("inspect", "bedrock/anthropic.claude-3-haiku",
         "inspect:bedrock/anthropic.claude-3-haiku", True, False)
    assert parse_seat_spec("inspect:mockllm/model", ()).offline
    for bad in ("inspect:gpt-5-mini", "inspect:/x", "inspect:openai/", "inspect:"):
        with pytest.raises(UnknownPlayerError, match=r"inspect:PROVIDER/MODEL|names no model"):
            parse_seat_spec(bad, ())


def test_an_inspect_seat_is_priced_by_its_model() -> None:
    used = Usage(1_000_000, 100_000)
    assert seat_cost_usd("inspect:openai/gpt-5-mini", used) == cost_usd("gpt-5-mini", used) > 0


def test_inspect_mock_seat_plays_a_cli_game_and_its_adherence_counts(tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    done = run_cli("play", "chameleon", "--players", "inspect:mockllm/model,bot,bot,bot",
                   "--seed", "3", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["seats"]["1"] == "mockllm/model" and summary["tokens"] > 0
    result = Transcript.load(out).result
    assert result is not None
    # Inspect's mock answers its default sentence: not one word, so the kit re-asks it
    # once and the seat forfeits (and the Chameleon voids the game).
    assert result["adherence"]["1"] == {
        "decisions": 1, "valid_first_try": 0, "reasked": 1, "reasks": 1, "forfeits": 1,
        "over_limit": 0, "errors": {"bad_text": 2}, "forfeited_for": {"bad_text": 1}}
    assert result["usage"]["1"]["input_tokens"] > 0
    assert result["summary"]["details"]["fail"]["rejected_text"] == \
        "Default output from mockllm/model"


def test_a_live_inspect_seat_needs_online(tmp_path: Path) -> None:
    done = run_cli("play", "chameleon", "--players", "inspect:openai/gpt-5-mini,bot,bot,bot",
                   "--seed", "3", "--out", str(tmp_path / "g.jsonl"))
    assert done.returncode == 2
    assert "add --online" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_inspect_mock_seat_in_a_tournament_and_its_report(tmp_path: Path) -> None:
    out = tmp_path / "t"
    done = run_cli("tournament", "chameleon", "--games", "2", "--seed", "1", "--players",
                   "inspect:mockllm/model,bot,bot,bot", "--out", str(out), "--workers", "1")
    assert done.returncode == 0, done.stderr
    report = run_cli("report", str(out), "--json")
    assert report.returncode == 0, report.stderr
    adherence = json.loads(report.stdout)["metrics"]["per_player"][
        "inspect:mockllm/model"]["adherence"]
    assert adherence["decisions"] == 2 and adherence["forfeits"]["count"] == 2


def test_without_the_extra_an_inspect_seat_is_one_line(tmp_path: Path) -> None:
    # inspect_ai made unimportable, as in an install without the extra
    code = ("import sys; sys.modules['inspect_ai'] = None; "
            "from stille_post.cli import main; main()")
    done = subprocess.run(
        [sys.executable, "-c", code, "play", "chameleon", "--players",
         "inspect:mockllm/model,bot,bot,bot", "--out", str(tmp_path / "g.jsonl")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: {INSTALL_HINT}"]
    assert not (tmp_path / "g.jsonl").exists()
