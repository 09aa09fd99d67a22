"""Isolated agents (issue 36, item 8; players/isolation.py): an agent in a process of its
own finds nothing it should not see, while the same agent in the engine's process finds
it all (the control: the search has teeth); it still plays, calls its model through the
engine (metered), and is bounded in time and memory."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stille_post.players import sandbox
from stille_post.players.agents import isolating_agents
from stille_post.players.llm import LLMPlayer
from stille_post.providers.base import ChatRequest, Completion, Usage
from stille_post.session import play_game
from tests import clirun

pytestmark = pytest.mark.heavy  # seconds: an interpreter per isolated seat

ROOT = Path(__file__).resolve().parents[2]
SEED = 11  # the chameleon is seat 4, the secret word is the same whoever plays


class Recorder:
    """The agent's model: answers every call and keeps what it was asked."""

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> Completion:
        self.requests.append(request)
        return Completion("noted", [], Usage(7, 3), "recorder")

    def reports(self) -> list[dict[str, Any]]:
        return [json.loads(r.messages[-1].content) for r in self.requests
                if r.system == "REPORT"]


def _secret(tmp_path: Path) -> str:
    run = asyncio.run(play_game("chameleon", seed=SEED, out=tmp_path / "bots.jsonl"))
    return str(run.outcome.summary.details["secret"])


def _told(secret: str) -> list[str]:
    """What only the other role is told: the line of its prompt, its role event's text
    and data. (The chameleon sees the card, which lists the secret among the possible
    words, but never these.)"""
    return [f'The secret word is "{secret}"', f"The secret word is {secret}.",
            f'"secret":"{secret}"']


def _hostile(tmp_path: Path, name: str, values: dict[str, list[str]], run_dir: Path) -> str:
    """A copy of tests/seats/hostile_agent.py that knows what to look for."""
    text = (Path(__file__).parent / "hostile_agent.py").read_text(encoding="utf-8")
    reversed_values = {k: [v[::-1] for v in forms] for k, forms in values.items()}
    text = text.replace("REVERSED: dict[str, list[str]] = {}",
                        f"REVERSED: dict[str, list[str]] = {reversed_values!r}")
    text = text.replace('RUN_DIR = ""', f"RUN_DIR = {str(run_dir)!r}")
    (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    return f"python:{name}:Agent+openai:gpt-4.1-nano"


def _play_hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, isolated: bool
                  ) -> tuple[dict[str, Any], Any]:
    secret = _secret(tmp_path)
    key = "sk-isolation-" + secrets.token_hex(12)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.chdir(tmp_path)
    run_dir = tmp_path / "run"
    name = f"hostile_{secrets.token_hex(4)}"
    spec = _hostile(tmp_path, name, {"secret": _told(secret), "key": [key]}, run_dir)
    model = Recorder()

    def factory(spec_text: str, prompts: Any) -> Any:
        return LLMPlayer(model, prompts, name=spec_text)

    with isolating_agents(isolated):
        run = asyncio.run(play_game("chameleon", seed=SEED, out=run_dir / "game.jsonl",
                                    players=["bot", "bot", "bot", "bot"],
                                    roles={"chameleon": spec}, llm_factory=factory))
    sys.modules.pop(name, None)
    assert run.outcome.summary.details["secret"] == secret  # the needle was the right one
    assert run.outcome.summary.details["chameleon"] == 4
    reports = model.reports()
    assert reports, "the agent never reported"
    found = sorted({f for r in reports for f in r["found"]})
    return {"found": found, "listed": max(r["listed"] for r in reports),
            "seat_view": all(r["seat_view"] for r in reports), "usage": run.usage}, run


def test_an_isolated_agent_finds_no_secret_word_key_or_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen, _ = _play_hostile(tmp_path, monkeypatch, isolated=True)
    assert seen["seat_view"]  # it was sent its own request: it plays its seat
    if sandbox.available():
        assert seen["found"] == [] and seen["listed"] == 0, seen
    else:  # no Landlock: memory and environment only (docs/agents.md says so)
        assert not [f for f in seen["found"] if not f.startswith("file:")], seen
    # Its model calls went through the engine's process, and were metered for its seat.
    assert seen["usage"][4]["input_tokens"] >= 7 and seen["usage"][4]["output_tokens"] >= 3


def test_an_isolated_agent_of_a_real_play_finds_nothing(tmp_path: Path) -> None:
    """The real thing: `stille-post play --isolate-agents` with the key in the
    process's environment from its start (as a shell exports it: /proc/PID/environ holds
    it) and the transcript written line by line beside the agent."""
    secret = _secret(tmp_path)
    key = "sk-isolation-" + secrets.token_hex(12)
    run_dir = tmp_path / "run"
    name = f"hostile_{secrets.token_hex(4)}"
    spec = _hostile(tmp_path, name, {"secret": _told(secret), "key": [key]}, run_dir)
    script = tmp_path / "model.yaml"
    script.write_text("- {text: noted, usage: {input_tokens: 10, output_tokens: 3}}\n" * 8,
                      encoding="utf-8")
    spec = spec.replace("openai:gpt-4.1-nano", f"script:{script}")
    done = subprocess.run(
        [sys.executable, "-c", "from stille_post.cli import main; main()", "play", "chameleon",
         "--isolate-agents", "--seed", str(SEED), "--role", f"chameleon={spec}",
         "--out", str(run_dir / "game.jsonl"), "--json"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": key, "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    text = (run_dir / "game.jsonl").read_text(encoding="utf-8")
    reports = set(re.findall(r"zzreport[a-z]*", text))
    assert reports, text[-2000:]
    if sandbox.available():
        assert reports == {"zzreportcleanblind"}, reports
    else:
        assert not any(re.search(r"zzreport.*[gse][sk]", r) for r in reports), reports
    usage = json.loads(text.splitlines()[-1])["usage"]["4"]
    assert usage["input_tokens"] >= 10 and usage["output_tokens"] >= 3  # metered here


def test_the_same_agent_in_process_finds_them_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: an in-process agent is trusted code (docs/agents.md), and this is why."""
    seen, _ = _play_hostile(tmp_path, monkeypatch, isolated=False)
    assert {"gc:secret", "environ:key"} <= set(seen["found"]), seen
    assert seen["listed"] >= 1


@pytest.mark.parametrize("agent", ["python:tests.seats.bad_agents:Raises",
                                   "python:tests.seats.bad_agents:WrongType",
                                   "python:examples.agents.rule_based:Agent"])
def test_an_isolated_agent_plays_exactly_as_in_process(agent: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The same game, byte for byte (wall-clock fields aside): the same answers, and the
    same forfeits and re-asks for an agent that raises or returns the wrong type."""
    from stille_post.core.transcript import canonical_text

    monkeypatch.chdir(ROOT)
    players = [agent, "bot", "bot", "bot"]
    asyncio.run(play_game("chameleon", seed=3, out=tmp_path / "a.jsonl", players=players))
    with isolating_agents():
        asyncio.run(play_game("chameleon", seed=3, out=tmp_path / "b.jsonl", players=players))
    assert canonical_text(tmp_path / "a.jsonl") == canonical_text(tmp_path / "b.jsonl")
    if agent.endswith("Raises"):
        assert "raised ValueError: boom" in (tmp_path / "b.jsonl").read_text(encoding="utf-8")


def test_memory_and_time_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent that takes 3 GiB is stopped by its address-space limit; one that never
    answers is killed at the deadline and its next turn starts a fresh process."""
    monkeypatch.chdir(ROOT)
    with isolating_agents():
        asyncio.run(play_game("chameleon", seed=2, out=tmp_path / "m.jsonl",
                              players=["python:tests.seats.bad_agents:Hogs", "bot", "bot",
                                       "bot"]))
        asyncio.run(play_game("elimination", seed=2, out=tmp_path / "t.jsonl",
                              players=["python:tests.seats.bad_agents:Thinks", "bot", "bot",
                                       "bot"],
                              options={"num_players": 4, "decision_timeout_s": 0.5}))
    hog = (tmp_path / "m.jsonl").read_text(encoding="utf-8")
    assert "MemoryError" in hog or "killed by signal" in hog, hog[-1500:]
    late = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text(encoding="utf-8")
            .splitlines()]
    assert late[-1]["status"] == "completed"
    assert late[-1]["adherence"]["1"]["forfeits"] >= 2
    assert "no answer within 0.5 s" in json.dumps(late)


def test_a_missing_isolated_agent_is_one_line_and_a_broken_one_aborts(
        tmp_path: Path) -> None:
    missing = clirun.run_cli("play", "chameleon", "--isolate-agents", "--players",
                             "python:no_such_module_here:Agent,bot,bot,bot",
                             "--out", str(tmp_path / "a.jsonl"), cwd=ROOT)
    assert missing.returncode == 2 and "cannot find 'no_such_module_here'" in missing.stderr
    broken = clirun.run_cli("play", "chameleon", "--isolate-agents", "--players",
                            "python:tests.seats.bad_agents:Missing,bot,bot,bot", "--seed", "1",
                            "--out", str(tmp_path / "b.jsonl"), cwd=ROOT)
    assert broken.returncode == 1, broken.stderr
    assert "could not be made in its own process: AttributeError" in broken.stderr
    assert "Traceback" not in broken.stderr


def test_a_tournament_isolates_its_agents_and_its_resume_keeps_doing_so(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["tournament", "chameleon", "--games", "2", "--seed", "4", "--workers", "1",
            "--players", "python:examples.agents.rule_based:Agent,bot,bot,bot"]
    isolated = clirun.run_cli(*args, "--isolate-agents", "--out", str(out), "--json", cwd=ROOT)
    assert isolated.returncode == 0, isolated.stderr
    saved = json.loads((out / "tournament.json").read_text(encoding="utf-8"))
    assert saved["run"]["isolate_agents"] is True  # `--resume` isolates them too
    plain = clirun.run_cli(*args, "--out", str(tmp_path / "plain"), "--json", cwd=ROOT)
    assert plain.returncode == 0, plain.stderr
    from stille_post.core.transcript import canonical_text

    for path in sorted((out / "games").glob("*.jsonl")):
        assert canonical_text(path) == canonical_text(tmp_path / "plain" / "games" / path.name)
