"""Record the Connections cassettes: cassettes/providers/<kind>/connections_game.yaml.

    python -m tests.connections.record_cassettes openai anthropic google   # emulated
    python -m tests.connections.record_cassettes openai-compatible         # real SmolLM2

Emulated kinds play against the loopback emulators of tests/emulators/ (stored under the
real API's address, like every emulated cassette). Their model policy only knows Stille
Post, so for the length of a recording this script answers Connections requests with its
own deterministic policy (`connections_policy`, hash-based like the shared one) by
swapping the emulator module's `decide`; every other request goes to the shared policy.
openai-compatible is a REAL model: SmolLM2-135M-Instruct served by llama-cpp-python at
LOCAL_URL below (start it as cassettes/providers/openai-compatible/PROVENANCE.md
says). Each game's seed, seats and options go to connections_game.json beside it, and
its transcript to connections_game.transcript.jsonl.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from stille_post.cli.llm_seats import SeatFactory, llm_session
from stille_post.session import play_game
from tests.emulators import policy as shared_policy
from tests.emulators import scenarios as S
from tests.emulators import server
from tests.emulators.record import EMULATED_HEADER, REAL_HEADER, _prepend, _running

NAME = "connections_game"
LOCAL_URL = "http://127.0.0.1:8766/v1"
GAMES: dict[str, dict[str, Any]] = {
    "openai": {"seed": 21, "players": ["openai:gpt-5-mini", "openai:gpt-4.1-mini", "frequency"],
               "options": {"max_attempts": 3}},
    "anthropic": {"seed": 22, "players": ["frequency", "anthropic:claude-haiku-4-5-20251001",
                                          "anthropic:claude-sonnet-4-5-20250929"],
                  "options": {"word": "goldfish", "max_attempts": 3}},
    "google": {"seed": 23, "players": ["google:gemini-3-flash-preview", "frequency",
                                       "google:gemini-2.5-flash"],
               "options": {"max_attempts": 3}},
    # A real 135M model on 2 shared cores: one LLM guesser, two attempts. Its own server
    # port (8766), so that it never collides with the Stille Post recordings' server.
    "openai-compatible": {"seed": 24, "players": [
        "frequency", f"openai-compatible:{S.LOCAL_MODELS[0]}@{LOCAL_URL}", "frequency"],
        "options": {"word": "goldfish", "max_attempts": 2}},
}
SECRETS = ("goldfish", "kaleidoscope", "xenophobia", "precaution", "metamorphosis")


def _h(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def connections_policy(model: str, system: str, last_user: str, tool_choice: str,
                       tools: list[str]) -> shared_policy.Reply:
    if not {"give_clue", "guess", "choose_word"} & set(tools):
        return shared_policy.decide(model, system, last_user, tool_choice, tools)
    from stille_post.games.connections.bots import safe_clue
    from stille_post.games.connections.dictionary import wordfreq_english

    seat = shared_policy.seat_of(system)
    if "choose_word" in tools:
        return shared_policy.Reply(tool_calls=[("choose_word", {
            "word": SECRETS[_h(model, seat) % len(SECRETS)]})])
    m = re.search(r"The word starts with ([A-Z]+)\.", last_user)
    prefix = m.group(1).casefold() if m else ""
    ex = re.search(r"NOT one of these words: ([^.]*)\.", last_user)
    excluded = {w.strip() for w in ex.group(1).split(",")} if ex else set()
    words = [w for w in wordfreq_english().by_frequency(prefix)[:40] if w not in excluded]
    if not words:
        return shared_policy.Reply(text="pass")
    attempt = re.search(r"Attempt (\d+) of", last_user)
    n = int(attempt.group(1)) if attempt else 0
    if "give_clue" in tools:
        word = words[_h(model, seat, n) % len(words)]
        return shared_policy.Reply(tool_calls=[("give_clue", {
            "word": word, "clue": safe_clue(word, ("a word I use every day",
                                                   "something familiar"))})])
    clue = re.search(r'gave the clue: "([^"]*)"', last_user)
    top = words[:5]
    return shared_policy.Reply(tool_calls=[("guess", {
        "word": top[_h(model, seat, n, clue.group(1) if clue else "") % len(top)]})])


async def _play(factory: SeatFactory, setup: dict[str, Any], out: Path) -> Any:
    try:
        return await play_game("connections", seed=setup["seed"], out=out,
                               players=setup["players"], options=setup["options"],
                               llm_factory=factory)
    finally:
        await factory.aclose()


def record(kind: str) -> None:
    folder = S.CASSETTES / kind
    path = folder / f"{NAME}.yaml"
    if path.exists():
        path.unlink()
    setup = GAMES[kind]
    transcript = folder / f"{NAME}.transcript.jsonl"
    if kind == "openai-compatible":
        with llm_session(online=True, record=path, replay=None) as factory:
            assert isinstance(factory, SeatFactory)
            run = asyncio.run(_play(factory, setup, transcript))
        _prepend(path, REAL_HEADER)
    else:
        original = server.decide
        server.decide = connections_policy
        try:
            with _running(kind) as emu:
                for var in {"openai": ["OPENAI_API_KEY"], "anthropic": ["ANTHROPIC_API_KEY"],
                            "google": ["GEMINI_API_KEY"]}[kind]:
                    os.environ[var] = "emulator-not-a-key"
                with llm_session(online=True, record=path, replay=None,
                                 base_urls={kind: emu.base_url},
                                 rewrite_hosts={emu.origin: server.REAL_ORIGINS[kind]}
                                 ) as factory:
                    assert isinstance(factory, SeatFactory)
                    run = asyncio.run(_play(factory, setup, transcript))
        finally:
            server.decide = original
        _prepend(path, EMULATED_HEADER.format(api=kind))
    (folder / f"{NAME}.json").write_text(json.dumps(setup, indent=2) + "\n", encoding="utf-8")
    d = run.outcome.summary.details
    print(f"{kind}: {run.outcome.status} {run.outcome.reason or ''} result={d.get('result')} "
          f"secret={d.get('secret')} history={[h['outcome'] for h in d.get('history', [])]}")


def main(argv: list[str]) -> int:
    kinds = argv or ["openai", "anthropic", "google"]
    for kind in kinds:
        if kind not in GAMES:
            print(f"unknown kind {kind}; choose from {list(GAMES)}")
            return 2
        record(kind)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
