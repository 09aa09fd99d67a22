"""A plain (not async) agent runs off the event loop (issue 36, item 7): one that blocks
stalls only its own seat, and the game's answer deadline forfeits its turn."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from stille_post.session import play_game
from tests import clirun
from tests.seats import bad_agents

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = "python:tests.seats.bad_agents:Blocks"


def _agent_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("stille-post agent")]


def test_a_blocking_agent_forfeits_on_the_deadline_and_stalls_no_other_game(
        tmp_path: Path) -> None:
    """Four games at once on one loop, each with an agent that blocks for 5 s per
    answer, and a 0.3 s deadline: each game finishes with that agent's forfeit (before,
    the loop stood still 5 s per answer, and the answers came, late, with no forfeit)."""

    async def four() -> list[object]:
        return await asyncio.gather(*(
            play_game("chameleon", seed=s, out=tmp_path / f"g{s}.jsonl",
                      players=[BLOCKS, "bot", "bot", "bot"],
                      options={"decision_timeout_s": 0.3})
            for s in range(4)))

    assert not _agent_threads()
    try:
        runs = asyncio.run(four())
        assert len(runs) == 4
        for s in range(4):
            text = (tmp_path / f"g{s}.jsonl").read_text(encoding="utf-8")
            result = json.loads(text.splitlines()[-1])
            assert result["status"] == "completed"
            assert "no answer within 0.3 s" in text, f"game {s}: no forfeit on the deadline"
            assert result["adherence"]["1"]["forfeits"] >= 1
    finally:
        # The blocked calls are still waiting in their threads: let them go, and check
        # that none outlives the test.
        bad_agents.RELEASE.set()
        for t in _agent_threads():
            t.join(timeout=10)
        bad_agents.RELEASE.clear()
    assert not _agent_threads()


def test_a_late_agent_forfeits_its_next_turn_too_and_is_never_called_twice_at_once() -> None:
    """The next call waits for the late one: an agent's state is never used by two
    threads at once."""
    from stille_post.players.agents import AgentProvider
    from stille_post.providers.base import ChatRequest, Completion, Usage

    inside: list[int] = []
    overlaps: list[int] = []
    gate = threading.Event()

    class Agent:
        def respond(self, request: ChatRequest) -> Completion:
            inside.append(1)
            if len(inside) > 1:
                overlaps.append(len(inside))
            gate.wait(10)
            inside.pop()
            return Completion("ok", [], Usage(), "agent")

    async def main() -> None:
        provider = AgentProvider(Agent(), "python:x:Agent", None)
        request = ChatRequest(system="", messages=[])
        for _ in range(2):
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(provider.complete(request), 0.1)
        gate.set()
        reply = await provider.complete(request)
        assert reply.text == "ok"

    try:
        asyncio.run(main())
    finally:
        gate.set()
        for t in _agent_threads():
            t.join(timeout=10)
    assert not overlaps and not _agent_threads()


@pytest.mark.slow
def test_the_issue_s_time_sleep_40_agent_with_a_5_s_deadline(tmp_path: Path) -> None:
    """Exactly as reported: `time.sleep(40)` in `respond`, a 5 s deadline, 4 games at
    once in one process: each game finishes, each with a forfeit."""
    result = clirun.run_cli(
        "tournament", "chameleon", "--games", "4", "--concurrency", "4", "--workers", "1",
        "--players", "python:tests.seats.bad_agents:Sleeps,bot,bot,bot",
        "--set", "decision_timeout_s=5", "--out", str(tmp_path / "run"), "--json",
        cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["this_run"]["played"] == 4
    games = sorted((tmp_path / "run" / "games").glob("*.jsonl"))
    assert len(games) == 4
    for path in games:
        assert "no answer within 5 s" in path.read_text(encoding="utf-8"), path.name
