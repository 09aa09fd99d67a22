"""Record the Elimination Game cassettes in cassettes/providers/<kind>/elimination_*.

    python -m tests.elimination.record_cassettes openai anthropic google   # emulated
    python -m tests.elimination.record_cassettes openai-compatible         # REAL local
                                                                          # server
Cloud kinds play against the loopback emulators of tests/emulators/ (stored under the
real API's address, with an EMULATED header), with `elimination_policy` answering this
game's requests (the shared policy knows only Stille Post; it is swapped in for the
server's `decide` while recording, and still answers any other request). The
openai-compatible cassette is recorded from whatever serves scenarios.LOCAL_URL: a real
SmolLM2-135M-Instruct on llama-cpp-python (PROVENANCE.md). Existing files are replaced.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.emulators import policy
from tests.emulators import scenarios as S

LOCAL = S.LOCAL_URL


@dataclass(frozen=True)
class Setup:
    seed: int
    players: list[str]
    options: dict[str, Any] = field(default_factory=dict)


# 8 seats: 2 LLM seats and 6 bots; one private subround keeps the cassettes readable.
GAMES: dict[str, Setup] = {
    "openai": Setup(21, ["openai:gpt-5-mini", "loyal", "openai:gpt-4.1-mini", "sheep",
                         "random", "backstabber", "random", "loyal"],
                    {"private_subrounds": 1}),
    "anthropic": Setup(22, ["anthropic:claude-haiku-4-5-20251001", "sheep",
                            "anthropic:claude-sonnet-4-5-20250929", "loyal", "backstabber",
                            "loyal", "random", "sheep"],
                       {"private_subrounds": 1}),
    "google": Setup(23, ["google:gemini-3-flash-preview", "backstabber",
                         "google:gemini-2.5-flash", "loyal", "sheep", "random",
                         "backstabber", "loyal"],
                    {"private_subrounds": 1}),
    # A real 135M model at ~15 tokens/s on 2 cores: 2 LLM seats of 4, one subround.
    "openai-compatible": Setup(
        24, [f"openai-compatible:{S.LOCAL_MODELS[0]}@{LOCAL}", "loyal",
             f"openai-compatible:{S.LOCAL_MODELS[1]}@{LOCAL}", "sheep"],
        {"num_players": 4, "private_subrounds": 1}),
}


def cassette_path(kind: str) -> Path:
    return S.CASSETTES / kind / "elimination_game.yaml"


def setup_path(kind: str) -> Path:
    return S.CASSETTES / kind / "elimination_game.json"


def transcript_path(kind: str) -> Path:
    return S.CASSETTES / kind / "elimination_game.transcript.jsonl"


# --- the emulated model's mind for this game --------------------------------------------

def _h(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def _seats_in(text: str) -> list[int]:
    m = re.search(r"\((Players? [^)]*)\)", text)
    return [int(x) for x in re.findall(r"\d+", m.group(1))] if m else []


def elimination_policy(model: str, system: str, last_user: str, tool_choice: str,
                       tools: list[str]) -> policy.Reply:
    if "The Elimination Game" not in system:
        return policy.decide(model, system, last_user, tool_choice, tools)
    seat = policy.seat_of(system)
    ask = last_user.strip().splitlines()[-1] if last_user.strip() else ""
    rnd = int(m.group(1)) if (m := re.search(r"Round (\d+)", ask)) else 0
    if tool_choice != "none" and "Ranking:" in ask:
        others = _seats_in(ask)
        ranked = sorted(others, key=lambda s: _h(model, seat, rnd, s))
        return policy.Reply(tool_calls=[("submit_ranking", {"ranking": ranked})])
    if tool_choice != "none" and ("cast_vote" in ask):
        allowed = _seats_in(ask)
        if "You are on the jury" in ask:
            allowed = [int(x) for x in re.findall(r"Players (\d+) and (\d+)", ask)[0]]
        target = allowed[_h(model, seat, rnd, ask) % len(allowed)] if allowed else seat
        return policy.Reply(tool_calls=[("cast_vote", {
            "target": target, "reason": f"Player {target} worries me most this round."})])
    if "Private subround" in ask:
        partner = m.group(1) if (m := re.search(r"with Player (\d+)", ask)) else "?"
        return policy.Reply(text=f"Player {partner}, shall we keep each other safe this "
                                 "round? I will not vote for you.")
    if "tie-break statement" in ask:
        return policy.Reply(text="I have been fair with everyone. Please keep me in.")
    if "final statement" in ask:
        return policy.Reply(text=f"I am Player {seat}. I kept my word to my partners and "
                                 "never hid my vote. I ask the jury to keep me.")
    return policy.Reply(text=f"Player {seat} here, speaking as {model}. I want a calm, "
                             "honest game and I will vote for whoever plays the hardest.")


# --- recording --------------------------------------------------------------------------

def record(kind: str) -> None:
    from stille_post.cli.llm_seats import SeatFactory, llm_session
    from stille_post.session import play_game
    from tests.emulators import record as R
    from tests.emulators import server

    setup = GAMES[kind]
    path = cassette_path(kind)
    path.unlink(missing_ok=True)
    emu = None
    if kind == "openai-compatible":
        base_urls, rewrite, header = None, None, R.REAL_HEADER
    else:
        server.decide = elimination_policy
        emu = server.Emulator(kind).start()
        base_urls = {kind: emu.base_url}
        rewrite = {emu.origin: server.REAL_ORIGINS[kind]}
        header = R.EMULATED_HEADER.format(api=kind)
        for var in {"openai": ["OPENAI_API_KEY"], "anthropic": ["ANTHROPIC_API_KEY"],
                    "google": ["GEMINI_API_KEY"]}[kind]:
            os.environ[var] = R.DUMMY
    try:
        with llm_session(online=True, record=path, replay=None, base_urls=base_urls,
                         rewrite_hosts=rewrite) as factory:
            assert isinstance(factory, SeatFactory)

            async def play() -> Any:
                try:
                    return await play_game("elimination", seed=setup.seed,
                                           out=_fresh(transcript_path(kind)),
                                           players=setup.players, options=setup.options,
                                           llm_factory=factory)
                finally:
                    await factory.aclose()

            run = asyncio.run(play())
    finally:
        if emu is not None:
            emu.stop()
    R._prepend(path, header)
    setup_path(kind).write_text(json.dumps(
        {"seed": setup.seed, "players": setup.players, "options": setup.options},
        indent=2) + "\n", encoding="utf-8")
    print(f"{kind}/elimination_game: {run.outcome.status} {run.outcome.reason or ''} "
          f"{run.summary()['placements']}")


def _fresh(path: Path) -> Path:
    path.unlink(missing_ok=True)
    return path


if __name__ == "__main__":
    for k in sys.argv[1:] or ["openai", "anthropic", "google"]:
        record(k)
