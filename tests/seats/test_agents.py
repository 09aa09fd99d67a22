"""Agent plug-ins: `python:module:attr` and `agent:NAME` seats, the examples through
every game, and every way an agent can go wrong as one line or a logged forfeit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from stille_post.core.errors import UsageError
from stille_post.games import all_games
from stille_post.players.specs import parse_seat_spec
from stille_post.session import play_game
from tests.clirun import run_cli

ROOT = Path(__file__).resolve().parents[2]
RULE_BASED = "python:examples.agents.rule_based:Agent"


def _transcript(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("game", sorted(all_games()))
def test_the_rule_based_example_plays_every_game(game: str, tmp_path: Path) -> None:
    """The conformance of agent seats: an example agent completes a game of each
    registered game, is recorded under its spec, and always votes the same way."""
    definition = all_games()[game]
    n = definition.players.default
    # The last seat: Connections' setter (seat 1) must choose a dictionary word.
    # Connections' default guessers load word embeddings (seconds): its frequency bots.
    bot = "frequency" if "frequency" in definition.bots else "bot"
    players = [bot] * (n - 1) + [RULE_BASED]
    options = {"max_attempts": 4} if "max_attempts" in definition.config.model_fields else {}
    out = tmp_path / "g.jsonl"
    run = asyncio.run(play_game(game, seed=5, out=out, players=players, options=options))
    assert run.outcome.status == "completed", run.outcome.reason
    lines = _transcript(out)
    assert lines[0]["seats"][str(n)]["player"] == RULE_BASED
    assert any(e.get("actor") == n for e in lines[1:-1]), "the agent made no move"


def test_the_rule_based_agent_always_votes_for_the_lowest_other_seat(tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    asyncio.run(play_game("chameleon", seed=2, out=out,
                          players=["bot", "bot", "bot", RULE_BASED]))
    votes = [e for e in _transcript(out)[1:-1] if e["type"] == "vote" and e["actor"] == 4]
    assert [v["data"]["target"] for v in votes] == [1]


def test_an_agent_sees_only_its_own_view(tmp_path: Path) -> None:
    """The agent's requests are the LLM seat's: no other seat's private chat."""
    from examples.agents import rule_based

    seen: list[str] = []
    original = rule_based.Agent.respond

    def spy(self: Any, request: Any) -> Any:
        from stille_post.providers.base import request_text

        seen.append(request_text(request))
        return original(self, request)

    rule_based.Agent.respond = spy  # type: ignore[method-assign]
    try:
        out = tmp_path / "g.jsonl"
        asyncio.run(play_game("elimination", seed=3, out=out,
                              players=[RULE_BASED, "bot", "bot", "bot"]))
    finally:
        rule_based.Agent.respond = original  # type: ignore[method-assign]
    events = _transcript(out)[1:-1]
    hidden = [e["data"]["text"] for e in events if e["type"] == "private_message"
              and 1 not in e["visibility"]]
    mine = [e["data"]["text"] for e in events if e["type"] == "private_message"
            and 1 in e["visibility"]]
    assert hidden and seen
    sent = "\n".join(seen)
    assert not any(text in sent for text in hidden)
    assert all(text in sent for text in mine[:-1])  # its own chats did reach it


def test_seat_specs() -> None:
    spec = parse_seat_spec("python:examples.agents.scratchpad:Agent+openai:gpt-4.1-nano", ())
    assert spec.agent == "python:examples.agents.scratchpad:Agent"
    assert spec.agent_model == "openai:gpt-4.1-nano" and not spec.is_llm
    assert parse_seat_spec("human", ()).label == "human"
    assert parse_seat_spec("web", ()).label == "human:web"
    for bad in ("python:nomodule", "agent:", "python:x:Agent+bot:random"):
        with pytest.raises(UsageError):
            parse_seat_spec(bad, ("random",))


def test_agent_name_comes_from_the_entry_point_group(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    from importlib.metadata import EntryPoint

    import stille_post.players.agents as agents

    found = [EntryPoint("always-first", "examples.agents.rule_based:Agent",
                        agents.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(agents, "entry_points", lambda group: found
                        if group == agents.ENTRY_POINT_GROUP else [])
    run = asyncio.run(play_game("chameleon", seed=1, out=tmp_path / "g.jsonl",
                                players=["agent:always-first", "bot", "bot", "bot"]))
    assert run.outcome.status == "completed"
    with pytest.raises(UsageError, match=r"unknown agent 'nope'; agents .*always-first"):
        asyncio.run(play_game("chameleon", seed=1, out=tmp_path / "h.jsonl",
                              players=["agent:nope", "bot", "bot", "bot"]))


@pytest.mark.parametrize(("spec", "message"), [
    ("agent:no-such-agent", "error: unknown agent 'no-such-agent'"),
    ("python:no_such_module:Agent", "error: python:no_such_module:Agent: cannot import"),
    ("python:tests.seats.bad_agents:Missing", "has no attribute 'Missing'"),
    ("python:tests.seats.bad_agents:NOT_CALLABLE", "not callable"),
    ("python:examples.agents.scratchpad:Agent", "the scratchpad agent needs a model"),
    ("python:examples.agents.scratchpad:Agent+openai:gpt-4.1-nano",
     "its model openai:gpt-4.1-nano is an LLM seat: add --online"),
])
def test_a_bad_agent_is_one_line(spec: str, message: str, tmp_path: Path) -> None:
    result = run_cli(*["play", "chameleon", "--players", f"{spec},bot,bot,bot",
                      "--out", str(tmp_path / "g.jsonl")], cwd=ROOT)
    assert result.returncode == 2, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize(("name", "why"), [
    ("Raises", "agent python:tests.seats.bad_agents:Raises raised ValueError: boom"),
    ("WrongType", "returned str, not a Completion"),
])
def test_an_agent_that_fails_forfeits_with_a_logged_reason(name: str, why: str,
                                                         tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    result = run_cli(*["play", "elimination", "--players",
                      f"python:tests.seats.bad_agents:{name},bot,bot,bot", "--seed", "1",
                      "--out", str(out), "--json"], cwd=ROOT)
    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == 0, result.stderr
    lines = _transcript(out)
    assert lines[-1]["status"] == "completed"
    logged = [e for e in lines[1:-1] if e.get("actor") == 1 or e["data"].get("seat") == 1]
    assert any(why in json.dumps(e["data"]) for e in logged), [e["type"] for e in logged]


def test_people_are_refused_in_a_tournament(tmp_path: Path) -> None:
    for spec in ("human", "web"):
        result = run_cli(*["tournament", "chameleon", "--games", "2", "--players",
                          f"{spec},bot,bot,bot", "--out", str(tmp_path / spec)], cwd=ROOT)
        assert result.returncode == 2, result.stdout
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "people play only in `stille-post play`" in lines[0]


def test_a_game_with_an_agent_seat_replays_from_its_cassette(tmp_path: Path) -> None:
    """The scratchpad agent's model calls (plan, then answer) replay offline; its tokens
    and dollars are the seat's, as for an LLM seat."""
    cassette = ROOT / "cassettes" / "agents" / "scratchpad_elimination.yaml"
    spec = "python:examples.agents.scratchpad:Agent+openai:gpt-4.1-nano"
    out = tmp_path / "g.jsonl"
    result = run_cli("play", "elimination", "--players", f"{spec},bot,bot", "--seed", "4",
                     "--num-players", "3", "--private-subrounds", "1", "--replay",
                     str(cassette), "--out", str(out), "--json", "--strict", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["status"] == "completed" and "warnings" not in summary
    # The seat's tokens are what the recorded responses billed, every one of them.
    billed = sum(u["prompt_tokens"] + u["completion_tokens"] for u in (
        json.loads(i["response"]["body"]["string"])["usage"]
        for i in yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"]))
    assert summary["tokens"] == billed and summary["cost_usd"] > 0
    lines = _transcript(out)
    usage = lines[-1]["usage"]["1"]
    assert usage["cost_usd"] == summary["cost_usd"]
    assert not any(e["type"] == "forfeit" for e in lines[1:-1])
    # The plans stayed private: the game's record holds none of the scratchpad prompt.
    assert "[SCRATCHPAD]" not in out.read_text(encoding="utf-8")
