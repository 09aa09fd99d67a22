"""Structured play end to end: a structured game records and replays like any other, and
a results folder that holds a model's free and structured games (two shards merged)
shows them as two players, never one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from stille_post.cli.llm_seats import llm_session
from stille_post.session import play_game
from tests import clirun
from tests.emulators.server import Emulator
from tests.providers._helpers import comparable

pytestmark = [pytest.mark.heavy,
              pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])]


def test_a_structured_game_records_and_replays(tmp_path: Path) -> None:
    emu = Emulator("openai", decoder=True).start()
    players = [f"openai-compatible:tiny@{emu.base_url}", "heuristic", "heuristic",
               "heuristic"]
    cassette, recorded, replayed = (tmp_path / "c.yaml", tmp_path / "rec.jsonl",
                                    tmp_path / "rep.jsonl")
    try:
        with llm_session(online=True, record=cassette, replay=None, structured="schema",
                         preflight_seats=None) as factory:
            asyncio.run(play_game("chameleon", seed=3, out=recorded, players=players,
                                  llm_factory=factory))
    finally:
        emu.stop()
    text = cassette.read_text(encoding="utf-8")
    assert "response_format" in text and "enum" in text
    with llm_session(online=False, record=None, replay=cassette, structured="schema") \
            as factory:
        asyncio.run(play_game("chameleon", seed=3, out=replayed, players=players,
                              llm_factory=factory))
    assert comparable(replayed) == comparable(recorded)
    # Replayed free, the requests differ: the cassette has no answer for them.
    with llm_session(online=False, record=None, replay=cassette) as factory:
        run = asyncio.run(play_game("chameleon", seed=3, out=tmp_path / "free.jsonl",
                                    players=players, llm_factory=factory))
    assert run.outcome.status == "aborted" and "not in the replayed cassette" in str(
        run.outcome.reason)


def test_free_and_structured_play_of_one_model_are_two_players(tmp_path: Path) -> None:
    emu = Emulator("openai", decoder=True).start()
    seat = f"openai-compatible:tiny@{emu.base_url}"
    common = ("tournament", "stille-post", "--online", "--games", "4", "--seed", "1",
              "--players", f"{seat},detective,cautious,random", "--max-rounds", "1",
              "--json")
    try:
        for shard, extra in (("1/2", ()), ("2/2", ("--structured", "schema"))):
            done = clirun.run_cli(*common, "--shard", shard, "--out", f"s{shard[0]}",
                                  *extra, cwd=tmp_path)
            assert done.returncode == 0, done.stderr
    finally:
        emu.stop()
    merged = clirun.run_cli("merge", "all", "s1", "s2", "--json", cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    report = clirun.run_cli("report", "all", "--json", "--passes", "2", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    board = {row["player"]: row for row in json.loads(report.stdout)["leaderboard"]}
    assert board["openai-compatible:tiny"]["games"] == 2
    assert board["openai-compatible:tiny (schema)"]["games"] == 2
