"""The peer in the benchmark: ChatArena 0.1.18's Chameleon beside ours, on one simulated
model (benchmarks/simchameleon.py: same latency, same policy, same token count).

    python -m benchmarks peer            # a table
    python -m benchmarks peer --json     # JSON alone on stdout
    python -m benchmarks peer --real     # both through their real OpenAI clients, over
                                         # loopback HTTP (benchmarks/peer_real.py)

ChatArena is installed only in the `bench` nox session (noxfile.py), never as a
dependency of the package. Its async path does not run, so ChatArena is given what a
user would give it: a thread pool, one game per thread, `width` threads. Ours runs
through the tournament runner (transcripts and index written, no fsync, like ChatArena's
nothing) at `--concurrency width`. Both play 4-player games on an 8-word card (ours is
set to `words=8`, ChatArena's topics have 8 words), so the token counts compare equal
card sizes.

Figures (ratios are ours ÷ ChatArena's, so < 1 means we are faster or cheaper):
- wall time of GAMES games at 16, 64 and 200 wide, at LATENCY per call;
- CPU per model call at zero latency: the engine in memory, and with persistence;
- input tokens per game (characters / 4 of every message sent), also with our tie rule set
  to ChatArena's (`chameleon_wins`: a tie accuses nobody, so, as in ChatArena, the
  simulated model's all-way tie ends the game without a second chance and both sides
  make the same 8 calls per game).

`--tokens` prints only the token figures (deterministic; no timing, a few seconds).
`--parts` prints where our CPU per call goes (PARTS), beside ChatArena's per call.

Sizes: BENCH_PEER_GAMES (200), BENCH_PEER_LATENCY (0.1 s), BENCH_PEER_CPU_GAMES (300),
BENCH_PEER_REPEATS (2: each wall figure is the best of that many runs, on both sides).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.simchameleon import ChameleonSimProvider, Meter, chatarena_answer, sleep, tokens

WIDTHS = (16, 64, 200)
SEATS = ("openai:sim-a", "openai:sim-b", "openai:sim-c", "openai:sim-d")
OPTIONS = {"words": 8}
CHATARENA_RULES = {"words": 8, "tie_rule": "chameleon_wins"}

# ChatArena's example Chameleon config ships outside its wheel; this is a game prompt and
# role text of the same scope and about the same length, in our own words.
GLOBAL_PROMPT = (
    "You are playing the Chameleon, a party game of words. The rules follow.\n\n"
    "## Roles\nEach player is either the chameleon or a non-chameleon. Everyone first "
    "learns the topic of the secret word. After that, only the non-chameleons learn the "
    "secret word itself; the chameleon never does.\n\n"
    "## Goals\nYour goal depends on your role:\n"
    "- As a non-chameleon, expose the chameleon without letting the secret word slip.\n"
    "- As the chameleon, blend in, stay unnoticed, and work out the secret word.\n\n"
    "## Phases\nThe game has three phases:\n"
    "1. Clues: every player gives a clue about the secret word.\n"
    "2. Accusation: every player votes for the other player most likely to be the "
    "chameleon. The chameleon votes for someone else.\n"
    "3. Guess: when the accusation is right, the chameleon guesses the secret word from "
    "the clues it heard."
)


def role_desc(name: str) -> str:
    return (f"You are {name}.\nThe Moderator tells you whether you are the chameleon.\n"
            "You are playing with three other players.\nNever pretend to be another player "
            "or the moderator.\nDo not vote for yourself.\nThere is no need to start your "
            "reply with your name, even if others do.\nEnd every reply with <EOS>.")


# --- ours ------------------------------------------------------------------------------------

def ours_wall(games: int, width: int, latency: float, meter: Meter) -> float:
    from stille_post.tournament import TournamentConfig, run_tournament

    def factory(spec: str, prompts: Any) -> Any:
        from stille_post.players.llm import LLMPlayer

        return LLMPlayer(ChameleonSimProvider(latency, meter), prompts, name=spec)

    cfg = TournamentConfig(game="chameleon", games=games, seed=1, players=SEATS,
                           options=OPTIONS)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        asyncio.run(run_tournament(cfg, Path(tmp) / "t", concurrency=width,
                                   llm_factory=factory, durable=False))
        return time.perf_counter() - t0


def ours_cpu_in_memory(games: int, options: dict[str, Any] = OPTIONS
                       ) -> tuple[float, Meter]:
    from stille_post.core.rng import make_rng
    from stille_post.games import get_game
    from stille_post.games.kit.setup import prepare
    from stille_post.players.llm import LLMPlayer

    meter = Meter()
    game = get_game("chameleon")

    def factory(spec: str, prompts: Any) -> Any:
        return LLMPlayer(ChameleonSimProvider(0.0, meter), prompts, name=spec)

    async def run() -> None:
        for seed in range(games):
            prepared = prepare(game, seed=seed, rng=make_rng(seed), players=list(SEATS),
                               options=options, llm_factory=factory)
            await prepared.play(None)

    t0 = time.process_time()
    asyncio.run(run())
    return time.process_time() - t0, meter


def ours_cpu_persisted(games: int) -> tuple[float, Meter]:
    meter = Meter()
    t0 = time.process_time()
    ours_wall(games, 16, 0.0, meter)
    return time.process_time() - t0, meter


# --- ChatArena -------------------------------------------------------------------------------

def _chatarena() -> Any:
    """Import ChatArena (its OpenAI backend builds a client at import: give it a dummy
    key, restored after; nothing is ever sent)."""
    old = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = "sk-bench-never-sent"
    try:
        import logging

        from chatarena import agent, arena, environments
        from chatarena.backends import openai as ca_openai

        logging.getLogger().setLevel(logging.ERROR)
    finally:
        if old is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = old
    return agent, arena, environments, ca_openai


def chatarena_game_runner(latency: float, meter: Meter) -> Any:
    ca_openai = _chatarena()[3]

    class SimChat(ca_openai.OpenAIChat):  # type: ignore[name-defined]
        """ChatArena's own OpenAI backend (its request building runs as shipped); only
        the HTTP call is replaced by the simulated model."""

        def _get_response(self, messages: list[dict[str, str]], *args: Any,
                          **kwargs: Any) -> str:
            contents = [m["content"] for m in messages]
            meter.record(contents)
            sleep(latency)
            return chatarena_answer(self.agent_name, contents)

        def query(self, agent_name: str, *args: Any, **kwargs: Any) -> str:
            self.agent_name = agent_name
            return str(super().query(agent_name, *args, **kwargs))

    return chatarena_games(lambda: SimChat(max_tokens=50))


def chatarena_games(backend: Any) -> Any:
    """`play_one(i)`: one ChatArena Chameleon game of four players, each on `backend()`."""
    agent, arena, environments, _ = _chatarena()
    names = [f"Player {i}" for i in range(1, 5)]

    def play_one(_: int) -> int:
        players = [agent.Player(name=n, role_desc=role_desc(n), global_prompt=GLOBAL_PROMPT,
                                backend=backend()) for n in names]
        env = environments.Chameleon(player_names=names)
        game = arena.Arena(players=players, environment=env, global_prompt=GLOBAL_PROMPT)
        steps = 0
        while True:
            steps += 1
            if game.step().terminal or steps > 50:
                return steps

    return play_one


def chatarena_wall(games: int, width: int, latency: float, meter: Meter) -> float:
    play_one = chatarena_game_runner(latency, meter)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(width) as pool:
        list(pool.map(play_one, range(games)))
    return time.perf_counter() - t0


def chatarena_cpu(games: int) -> tuple[float, Meter]:
    meter = Meter()
    play_one = chatarena_game_runner(0.0, meter)
    t0 = time.process_time()
    for g in range(games):
        play_one(g)
    return time.process_time() - t0, meter


# --- where our CPU per call goes (`--parts`) -----------------------------------------------------

# Each part is measured by running it twice where the game runs it once: the extra CPU is
# its cost. Only parts that leave the game unchanged when run twice are listed (emitting
# an event twice would change the game); what they leave is the engine itself. Rendering
# keeps each seat's conversation, so its second run renders no new event: its figure
# leaves out the rendering of each event once.
PARTS = (
    ("the game's setup (prepare: options, deal, seats)", "stille_post.games.kit.setup",
     "prepare", False),
    ("the simulated model (reads the request)", "benchmarks.simchameleon",
     "ChameleonSimProvider.complete", True),
    ("the prompt (system prompt, arranged view, kept conversation)",
     "stille_post.games.chameleon.prompts", "ChameleonPrompts.render", False),
    ("the observation (the seat's view read into its facts)",
     "stille_post.games.chameleon.game", "observe", False),
    ("the reply's cleaning (keys masked, controls replaced)", "stille_post.players.llm",
     "safe_completion", False),
)


def _twice(fn: Any, is_async: bool) -> Any:
    if is_async:
        async def run_twice(*args: Any, **kwargs: Any) -> Any:
            await fn(*args, **kwargs)
            return await fn(*args, **kwargs)
        return run_twice

    def twice(*args: Any, **kwargs: Any) -> Any:
        fn(*args, **kwargs)
        return fn(*args, **kwargs)
    return twice


def cpu_parts(games: int, repeats: int = 5) -> dict[str, Any]:
    """Our in-memory CPU per call, and the part of it each of PARTS takes (µs per call,
    best of `repeats`)."""
    import importlib

    def best() -> tuple[float, int]:
        runs = [ours_cpu_in_memory(games) for _ in range(repeats)]
        return min(cpu for cpu, _ in runs), runs[0][1].calls

    ours_cpu_in_memory(3)
    base, calls = best()
    out: dict[str, Any] = {"ours_cpu_us_per_call": base / calls * 1e6, "parts": {}}
    for label, module, attr, is_async in PARTS:
        owner: Any = importlib.import_module(module)
        *path, name = attr.split(".")
        for step in path:
            owner = getattr(owner, step)
        fn = getattr(owner, name)
        setattr(owner, name, _twice(fn, is_async))
        try:
            cpu, _ = best()  # the calls are those of the base run: the games are the same
        finally:
            setattr(owner, name, fn)
        out["parts"][label] = (cpu - base) / calls * 1e6
    out["engine_rest_us_per_call"] = out["ours_cpu_us_per_call"] - sum(out["parts"].values())
    return out


# --- the run ---------------------------------------------------------------------------------

def token_figures(games: int) -> dict[str, Any]:
    """Input tokens and calls per game on both sides (deterministic)."""
    import random

    random.seed(0)  # ChatArena deals from the global random module
    _, ours = ours_cpu_in_memory(games)
    _, rules = ours_cpu_in_memory(games, CHATARENA_RULES)
    _, theirs = chatarena_cpu(games)
    out = {
        "ours_calls_per_game": ours.calls / games,
        "ours_input_tokens_per_game": tokens(ours.input_chars) / games,
        "ours_calls_per_game_chatarena_rules": rules.calls / games,
        "ours_input_tokens_per_game_chatarena_rules": tokens(rules.input_chars) / games,
        "chatarena_calls_per_game": theirs.calls / games,
        "chatarena_input_tokens_per_game": tokens(theirs.input_chars) / games,
    }
    out["input_tokens_ratio"] = (out["ours_input_tokens_per_game"]
                                 / out["chatarena_input_tokens_per_game"])
    out["input_tokens_ratio_chatarena_rules"] = (
        out["ours_input_tokens_per_game_chatarena_rules"]
        / out["chatarena_input_tokens_per_game"])
    return out


def measure(timing: bool = True) -> dict[str, Any]:
    import random

    games = int(os.environ.get("BENCH_PEER_GAMES", 200))
    latency = float(os.environ.get("BENCH_PEER_LATENCY", 0.1))
    cpu_games = int(os.environ.get("BENCH_PEER_CPU_GAMES", 300))
    t0 = time.perf_counter()
    _chatarena()
    import_s = time.perf_counter() - t0
    out: dict[str, Any] = {"games": games, "latency_ms": latency * 1000,
                           "chatarena_import_s": import_s}
    # Warm both (imports, first-game caches) so neither pays them inside a figure.
    ours_cpu_in_memory(3)
    chatarena_cpu(3)
    out.update(token_figures(cpu_games))
    if not timing:
        return out
    random.seed(0)
    cpu_mem, m_mem = ours_cpu_in_memory(cpu_games)
    cpu_disk, m_disk = ours_cpu_persisted(cpu_games)
    cpu_ca, m_ca = chatarena_cpu(cpu_games)
    out["ours_cpu_us_per_call"] = cpu_mem / m_mem.calls * 1e6
    out["ours_cpu_us_per_call_persisted"] = cpu_disk / m_disk.calls * 1e6
    out["chatarena_cpu_us_per_call"] = cpu_ca / m_ca.calls * 1e6
    repeats = max(1, int(os.environ.get("BENCH_PEER_REPEATS", 2)))
    out["repeats"] = repeats
    for width in WIDTHS:
        # The best of `repeats` runs on each side (alternating), as timing noise on a
        # shared machine only ever adds.
        ours = theirs = float("inf")
        for _ in range(repeats):
            ours = min(ours, ours_wall(games, width, latency, Meter()))
            theirs = min(theirs, chatarena_wall(games, width, latency, Meter()))
        out[f"ours_wall_s_{width}"] = ours
        out[f"chatarena_wall_s_{width}"] = theirs
        out[f"wall_ratio_{width}"] = ours / theirs
    out["cpu_per_call_ratio"] = out["ours_cpu_us_per_call"] / out["chatarena_cpu_us_per_call"]
    out["cpu_per_call_ratio_persisted"] = (out["ours_cpu_us_per_call_persisted"]
                                           / out["chatarena_cpu_us_per_call"])
    return out


def main(argv: list[str] | None = None) -> int:
    argv = list(argv or [])
    if "--real" in argv:
        from benchmarks.peer_real import main as real_main

        return real_main(argv)
    try:
        import chatarena  # noqa: F401
    except ImportError:
        print("bench_peer: chatarena is not installed here; run `nox -s bench -- peer` "
              "(it installs chatarena==0.1.18 in the bench session only)", file=sys.stderr)
        return 0 if "--json" not in argv else 2
    if "--parts" in argv:
        return print_parts(argv)
    r = measure(timing="--tokens" not in argv)
    if "--json" in argv:
        print(json.dumps(r))
        return 0
    print(f"   ChatArena 0.1.18 Chameleon vs ours, 4 players, 8-word card, simulated model "
          f"at {r['latency_ms']:.0f} ms; {r['games']} games (ratio = ours / ChatArena)")
    for width in WIDTHS:
        if f"wall_ratio_{width}" not in r:
            continue
        print(f"   wall, {width:3d} wide: ours {r[f'ours_wall_s_{width}']:7.2f} s, ChatArena "
              f"(thread pool) {r[f'chatarena_wall_s_{width}']:7.2f} s, ratio "
              f"{r[f'wall_ratio_{width}']:.2f}")
    if "cpu_per_call_ratio" in r:
        print(f"   CPU per model call: ours {r['ours_cpu_us_per_call']:.0f} µs in memory, "
              f"{r['ours_cpu_us_per_call_persisted']:.0f} µs with transcripts and index; "
              f"ChatArena {r['chatarena_cpu_us_per_call']:.0f} µs (no persistence); ratio "
              f"{r['cpu_per_call_ratio']:.2f} ({r['cpu_per_call_ratio_persisted']:.2f} "
              "persisted)")
    print(f"   input tokens per game: ours {r['ours_input_tokens_per_game']:.0f} "
          f"({r['ours_calls_per_game']:.2f} calls), ChatArena "
          f"{r['chatarena_input_tokens_per_game']:.0f} ({r['chatarena_calls_per_game']:.2f} "
          f"calls); ratio {r['input_tokens_ratio']:.2f}")
    print(f"   at ChatArena's tie rule (chameleon_wins): ours "
          f"{r['ours_input_tokens_per_game_chatarena_rules']:.0f} "
          f"({r['ours_calls_per_game_chatarena_rules']:.2f} calls); ratio "
          f"{r['input_tokens_ratio_chatarena_rules']:.2f}")
    print(f"   (ChatArena's imports took {r['chatarena_import_s']:.1f} s, outside the figures)")
    return 0


def print_parts(argv: list[str]) -> int:
    games = int(os.environ.get("BENCH_PEER_CPU_GAMES", 300))
    r = cpu_parts(games)
    chatarena_cpu(3)
    cpu_ca, m_ca = min((chatarena_cpu(games) for _ in range(5)), key=lambda x: x[0])
    r["chatarena_cpu_us_per_call"] = cpu_ca / m_ca.calls * 1e6
    if "--json" in argv:
        print(json.dumps(r))
        return 0
    print(f"   CPU per model call, in memory, {games} games (best of 5): ours "
          f"{r['ours_cpu_us_per_call']:.1f} µs, ChatArena {r['chatarena_cpu_us_per_call']:.1f} µs")
    for label, us in r["parts"].items():
        print(f"      {us:5.1f} µs  {label}")
    print(f"      {r['engine_rest_us_per_call']:5.1f} µs  the rest: asking, decisions, events, "
          "validation, outcome, the event loop")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
