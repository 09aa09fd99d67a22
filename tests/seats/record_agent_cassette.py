"""Record cassettes/agents/scratchpad_elimination.yaml: an Elimination game with the
scratchpad example agent on an OpenAI model, against the loopback OpenAI emulator
(tests/emulators/), stored under the real API's address so it replays with --replay.

    python -m tests.seats.record_agent_cassette
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from stille_post.cli.llm_seats import llm_session
from stille_post.session import play_game
from tests.emulators.record import EMULATED_HEADER, _prepend
from tests.emulators.server import REAL_ORIGINS, Emulator

ROOT = Path(__file__).resolve().parents[2]
CASSETTE = ROOT / "cassettes" / "agents" / "scratchpad_elimination.yaml"
SEED = 4
PLAYERS = ["python:examples.agents.scratchpad:Agent+openai:gpt-4.1-nano", "bot", "bot"]
OPTIONS = {"private_subrounds": 1, "num_players": 3}


def main() -> None:
    CASSETTE.unlink(missing_ok=True)
    os.environ["OPENAI_API_KEY"] = "emulator-not-a-key"
    emu = Emulator("openai").start()
    try:
        with llm_session(online=True, record=CASSETTE, replay=None,
                         base_urls={"openai": emu.base_url},
                         rewrite_hosts={emu.origin: REAL_ORIGINS["openai"]}) as factory:
            assert factory is not None

            async def play() -> object:
                try:
                    return await play_game("elimination", seed=SEED, out=ROOT / "runs" /
                                           "agent-record.jsonl", players=PLAYERS,
                                           options=OPTIONS, llm_factory=factory)
                finally:
                    await factory.aclose()

            run = asyncio.run(play())
            print(run.summary())  # type: ignore[attr-defined]
    finally:
        emu.stop()
    _prepend(CASSETTE, EMULATED_HEADER.format(api="openai"))


if __name__ == "__main__":
    main()
