"""An agent with a model (`python:module:attr+model:ALIAS`) in a capped or rate-limited
tournament (issue 36, item 9): before, its seat could not be made ("model:fast is not a
model": the budget's and the rate limits' players have no `.provider`). Now its decisions
are gated and charged as its model's own seat would be. Against a loopback
OpenAI-compatible server with a priced alias."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import Transcript
from tests import clirun
from tests.emulators.server import Emulator, running

pytestmark = [pytest.mark.heavy, pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])]

ROOT = Path(__file__).resolve().parents[2]
AGENT = "python:examples.agents.scratchpad:Agent+model:fast"  # two model calls a decision
MODELS = """
[models.fast]
provider = "openai-compatible"
model = "tiny-a"
base_url = "{url}"
price = {{ input = 2.0, cached_input = 0.5, output = 8.0 }}
{extra}
"""


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with running("openai") as e:
        yield e


def _run(tmp: Path, emu: Emulator, *args: str, extra: str = "") -> tuple[Any, Path]:
    tmp.mkdir(parents=True, exist_ok=True)
    models = tmp / "models.toml"
    models.write_text(MODELS.format(url=emu.base_url, extra=extra), encoding="utf-8")
    emu.state.seen_prompts.clear()
    out = tmp / "run"
    result = clirun.run_cli("tournament", "chameleon", "--online", "--seed", "2",
                            "--models", str(models), "--players", f"{AGENT},bot,bot,bot",
                            "--concurrency", "1", "--out", str(out), "--json", *args,
                            cwd=ROOT, env={"PATH": "/usr/bin:/bin"})
    return result, out


def test_an_agent_with_a_model_plays_a_capped_tournament_and_the_cap_stops_it(
        tmp_path: Path, emu: Emulator) -> None:
    # Uncapped first: what one game of the agent costs.
    full, _ = _run(tmp_path / "full", emu, "--games", "3", "--max-tokens", "10000000")
    assert full.returncode == 0, full.stderr
    spend = json.loads(full.stdout)["spend"]
    assert spend["games"] == 3 and spend["models"][AGENT]["dollars"] > 0
    per_game = spend["dollars"] / 3
    # A soft cap of 1.5 games: the first game starts (no history), the second would
    # pass the cap by the first one's cost, so the run stops there.
    capped, _ = _run(tmp_path / "capped", emu, "--games", "3",
                       "--budget-usd", f"{1.5 * per_game:.6f}")
    assert capped.returncode == 0, capped.stderr
    summary = json.loads(capped.stdout)
    assert summary["budget"]["stopped"] == "budget", summary["budget"]
    assert summary["this_run"]["played"] == 1
    assert 0 < summary["spend"]["dollars"] <= 1.5 * per_game


def test_a_hard_cap_on_the_alias_cuts_the_agent_s_game(tmp_path: Path,
                                                        emu: Emulator) -> None:
    """`[models.fast] budget_usd` with --hard-cap: the agent's spend counts under its
    model's alias, and at the cap its next decision is refused and the game cut."""
    result, out = _run(tmp_path, emu, "--games", "2", "--hard-cap",
                       extra="budget_usd = 0.0005")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["budget"]["cap"] == "model:fast.budget_usd", summary["budget"]
    games = sorted((out / "games").glob("*.jsonl*"))
    reasons = [str((Transcript.load(p).result or {}).get("reason")) for p in games]
    # Cut for the alias's cap (per call or per decision, whichever the budget does).
    assert any(r.startswith("budget: ") and "model:fast's budget_usd" in r
               for r in reasons), reasons


def test_an_agent_with_a_model_plays_under_rate_limits(tmp_path: Path,
                                                       emu: Emulator) -> None:
    result, out = _run(tmp_path, emu, "--games", "2",
                       "--rate-limit", "openai-compatible=6000")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["this_run"]["played"] == 2
    for path in sorted((out / "games").glob("*.jsonl")):
        t = Transcript.load(path)
        assert t.result is not None and t.result["status"] == "completed"
        assert int(t.result["usage"]["1"]["input_tokens"]) > 0  # the agent's model spoke
