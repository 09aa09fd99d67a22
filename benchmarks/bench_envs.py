"""The environments' speed, per game, on one core (CPU time of this process):

- `steps_per_s`: steps of the PettingZoo AEC loop (`aec_env`, as a user gets it) per
  second of CPU, for policies that do not read the observation (`last(observe=False)`:
  the request is then never rendered) and for bots that read it (`bots_observing`).
  The policies: `bots` (each seat's default bot answers, through `bot_action`: the
  CLI's default game), `random_valid` (each decision is answered by a
  bot of the game drawn at random: random but valid answers) and `random_text`
  (`action_space.sample()`: random words, most of which the rules refuse, so the seat is
  re-asked and forfeits).
- `overhead`: the environment against the engine's own bot game, same seeds, same bots,
  no transcript either way: CPU per game each, the extra per step, and the share of a
  bot game's time it adds (`fraction`; target <= 0.10). The engine's game is played as
  `stille-post play` plays it, on an event loop of its own (`asyncio.run`, 0.1-0.4 ms a
  game), while an environment keeps one loop for all its episodes; `fraction_vs_loop`
  is the same share against the engine's games played on one reused loop, the stricter
  figure. `fraction_observing` is the same with policies that read every observation:
  rendering the request a model would get is a cost a bot game never pays (the
  prompts), so it is counted apart.
- `textarena`: TextArena's own multi-player text game measured in the same run,
  `SecretMafia-v0` with 8 players and a random-valid policy (a vote names a living
  player, the rest is a short text), with the loop TextArena documents (`get_observation`,
  `step`) around its raw env and around `LLMObservationWrapper`; beside it, the same
  loop and wrapper around ours (`textarena_env`, `bots`). SecretMafia is chosen because
  it is the closest kind of game: hidden roles, several discussion rounds, then votes,
  with 6-15 players (our Elimination Game and Chameleon are social deduction too).

    python -m benchmarks envs [--json] [--games N]     (N episodes per game and policy; 20)
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

GAMES = ("stille-post", "elimination", "connections", "chameleon")
TEXTARENA_GAME = "SecretMafia-v0"
TEXTARENA_PLAYERS = 8


def _cpu(fn: Callable[[], int]) -> tuple[float, int]:
    t0 = time.process_time()
    steps = fn()
    return time.process_time() - t0, steps


_ENVS: dict[str, Any] = {}


def _env(game: str) -> Any:
    """One AEC environment per game, made before any timing (making one checks the
    game's set-up once): the episodes reset it, as training does."""
    from stille_post.envs import aec_env

    if game not in _ENVS:
        _ENVS[game] = aec_env(game)
    return _ENVS[game]


def _aec_episodes(game: str, seeds: range, policy: str, look: bool = False) -> int:
    """Episodes of the AEC loop, reset per seed; `look`: the policy reads each
    observation (the request rendered as a model would get it), as an LLM policy must.
    The number of steps."""
    from stille_post.envs import bot_action

    env = _env(game)
    raw = env.unwrapped
    bots = raw.spec.definition.bot_names
    steps = 0
    for seed in seeds:
        env.reset(seed=seed)
        rng = random.Random(seed)
        for agent in env.agent_iter():
            _obs, _r, term, trunc, _info = env.last(observe=look)
            if term or trunc:
                env.step(None)
                continue
            if policy == "bots":
                action: Any = bot_action(env, agent)
            elif policy == "random_valid":
                action = _random_bot_answer(raw.episode, raw.seats[agent], bots, rng)
            else:
                action = env.action_space(agent).sample()
            env.step(action)
            steps += 1
    return steps


def _random_bot_answer(episode: Any, seat: int, bots: tuple[str, ...],
                       rng: random.Random) -> Any:
    """The answer of a bot of the game drawn at random (one that cannot answer this seat,
    such as a theory-only bot, is skipped)."""
    for name in rng.sample(bots, len(bots)):
        try:
            return episode.bot_action(seat, name)
        except Exception:  # a bot not made for this seat
            continue
    return "pass"


def _engine_game(game: str, seed: int) -> int:
    from stille_post.core.blocking import run_blocking
    from stille_post.core.rng import make_rng
    from stille_post.games import get_game
    from stille_post.games.kit.setup import prepare

    prepared = prepare(get_game(game), seed=seed, rng=make_rng(seed))
    outcome = run_blocking(prepared.play(None))
    return sum(int(row["decisions"]) for row in outcome.adherence.values())


def _engine_game_on(loop: Any, game: str, seed: int) -> int:
    """`_engine_game` on a loop reused game after game."""
    from stille_post.core.rng import make_rng
    from stille_post.games import get_game
    from stille_post.games.kit.setup import prepare

    prepared = prepare(get_game(game), seed=seed, rng=make_rng(seed))
    outcome = loop.run_until_complete(prepared.play(None))
    return sum(int(row["decisions"]) for row in outcome.adherence.values())


def _ours_in_textarena(game: str, seed: int) -> int:
    import textarena as ta

    from stille_post.envs import bot_action, textarena_env

    base = textarena_env(game)
    env = ta.wrappers.LLMObservationWrapper(base)
    env.reset(num_players=len(base.spec.controlled), seed=seed)
    done, steps = False, 0
    while not done:
        env.get_observation()
        action = bot_action(env)
        done, _ = env.step(action if isinstance(action, str) else json.dumps(action))
        steps += 1
    env.close()
    return steps


_TARGET = re.compile(r"\[(\d+)\]")


def _textarena_episode(seed: int, wrapped: bool) -> int:
    """SecretMafia with a random-valid policy: in a voting or night phase, one of the
    targets the game lists; in a discussion, a short text."""
    import textarena as ta
    from textarena.envs.SecretMafia.env import Phase, SecretMafiaEnv

    raw = SecretMafiaEnv(mafia_ratio=0.25, discussion_rounds=3)
    env = ta.wrappers.LLMObservationWrapper(raw) if wrapped else raw
    env.reset(num_players=TEXTARENA_PLAYERS, seed=seed)
    rng = random.Random(seed)
    done, steps = False, 0
    while not done:
        pid, _obs = env.get_observation()
        if raw.phase == Phase.DAY_DISCUSSION:
            action = rng.choice(("I trust Player 2.", "Someone is lying.", "I am a villager."))
        else:
            alive = [p for p in raw.state.game_state["alive_players"] if p != pid]
            action = f"[{rng.choice(alive)}]"
        done, _ = env.step(action)
        steps += 1
    env.close()
    return steps


def measure(episodes: int) -> dict[str, Any]:
    out: dict[str, Any] = {"games": {}, "episodes": episodes}
    seeds = range(1, episodes + 1)
    # TextArena's own game, measured first so that its import is not in any figure.
    import textarena  # noqa: F401

    theirs: dict[str, float] = {}
    for wrapped in (False, True):
        _textarena_episode(0, wrapped)  # warm-up
        cpu, steps = _cpu(lambda w=wrapped: sum(  # type: ignore[misc]
            _textarena_episode(s, w) for s in seeds))
        theirs["llm_observation_wrapper" if wrapped else "raw"] = round(steps / cpu)
    for game in GAMES:
        out["games"][game] = measure_game(game, seeds, theirs)
        _ENVS.pop(game).close()
    return out


def measure_game(game: str, seeds: range, theirs: dict[str, float]) -> dict[str, Any]:
    _engine_game(game, 0)  # warm-up: data files, caches, first imports
    _aec_episodes(game, range(1), "bots")
    rates: dict[str, float] = {}
    for policy, look in (("bots", False), ("random_valid", False), ("random_text", False),
                         ("bots", True)):
        cpu, steps = _cpu(lambda p=policy, w=look: _aec_episodes(  # type: ignore[misc]
            game, seeds, p, w))
        rates[f"{policy}_observing" if look else policy] = round(steps / cpu)
    # Interleaved, in blocks of seeds: the engine's bot games (each on a loop of its own,
    # then all on one loop), then the same games stepped (by bots that do not look, then
    # by bots that do).
    engine = on_loop = env = looking = 0.0
    decisions = 0
    loop = asyncio.new_event_loop()
    _engine_game_on(loop, game, 0)
    for start in range(seeds.start, seeds.stop, 5):
        block = range(start, min(start + 5, seeds.stop))
        t, n = _cpu(lambda b=block: sum(_engine_game(game, s) for s in b))  # type: ignore[misc]
        engine += t
        decisions += n
        t, _ = _cpu(lambda b=block: sum(  # type: ignore[misc]
            _engine_game_on(loop, game, s) for s in b))
        on_loop += t
        t, _ = _cpu(lambda b=block: _aec_episodes(game, b, "bots"))  # type: ignore[misc]
        env += t
        t, _ = _cpu(lambda b=block: _aec_episodes(game, b, "bots", True))  # type: ignore[misc]
        looking += t
    loop.close()
    _ours_in_textarena(game, 0)
    cpu, steps = _cpu(lambda: sum(_ours_in_textarena(game, s) for s in seeds))
    ours_wrapped = steps / cpu
    n = len(seeds)
    return {
        "steps_per_s": rates,
        "overhead": {
            "engine_ms_per_game": round(engine / n * 1e3, 2),
            "env_ms_per_game": round(env / n * 1e3, 2),
            "per_step_us": round((env - engine) / decisions * 1e6, 1),
            "fraction": round(env / engine - 1, 3),
            "engine_loop_ms_per_game": round(on_loop / n * 1e3, 2),
            "fraction_vs_loop": round(env / on_loop - 1, 3),
            "env_observing_ms_per_game": round(looking / n * 1e3, 2),
            "fraction_observing": round(looking / engine - 1, 3),
        },
        "textarena": {
            "game": TEXTARENA_GAME, "num_players": TEXTARENA_PLAYERS,
            "steps_per_s": theirs,
            "ours_with_llm_observation_wrapper": round(ours_wrapped),
            "ratio_random_valid_to_theirs_raw": round(rates["random_valid"] / theirs["raw"], 2),
            "ratio_wrapped": round(ours_wrapped / theirs["llm_observation_wrapper"], 2),
        },
    }


def main(argv: list[str] | None = None) -> int:
    args = list(argv or [])
    episodes = 20
    if "--games" in args:
        episodes = int(args[args.index("--games") + 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = measure(episodes)
    if "--json" in args:
        print(json.dumps(result))
        return 0
    print(f"{'game':<12} {'bots':>8} {'rnd-valid':>10} {'rnd-text':>9} {'observing':>10} "
          f"{'overhead':>9} {'vs loop':>8} {'observing':>10} {'µs/step':>8} "
          f"{'TA wrapped (ours/theirs)':>26}")
    for game, row in result["games"].items():
        s, o, t = row["steps_per_s"], row["overhead"], row["textarena"]
        print(f"{game:<12} {s['bots']:>8} {s['random_valid']:>10} {s['random_text']:>9} "
              f"{s['bots_observing']:>10} {o['fraction']:>9.1%} {o['fraction_vs_loop']:>8.1%} "
              f"{o['fraction_observing']:>10.1%} {o['per_step_us']:>8} "
              f"{t['ours_with_llm_observation_wrapper']:>12} / "
              f"{t['steps_per_s']['llm_observation_wrapper']}")
    t = next(iter(result["games"].values()))["textarena"]
    print(f"TextArena {t['game']} ({t['num_players']} players, random-valid): "
          f"{t['steps_per_s']['raw']} steps/s raw, "
          f"{t['steps_per_s']['llm_observation_wrapper']} with LLMObservationWrapper "
          "(steps per CPU second, one core)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
