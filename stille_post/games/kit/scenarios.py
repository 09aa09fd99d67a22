"""The generic rulebook runner: plays one `games/<game>/spec/*.yaml` scenario through the
kit's `prepare`, as `stille-post play` does, and returns (events, result) for
`kit/rulebook.py` to check.

    given:
      config: {...}                    # the game's options (its config model's fields)
      rng: {seed: 0, random: [...], choice: [...]}   # forced draws (ForcedRng)
    when:
      seats: {1: {script: [...]}, 2: {bot: NAME}, 3: [...]}   # per seat, or per role:
      <role key>: {script: [...]}      # a script given to a role is copied to each seat

A `script` seat (or a bare list) is a real LLM seat over a scripted provider, so the
prompts, the parsing and the re-asks are exercised: its spec is
`openai:scripted-<name>`. A forced draw that the game never used makes the scenario
wrong.

A game changes what it must through `RulebookHooks` (`GameDefinition.rulebook`): extra
`given`/`then` keys, its own options from `given`, its own rng, script shorthands, extra
checks, or a whole runner of its own for scenarios that are not games.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stille_post.core.errors import ConfigError, ScenarioError
from stille_post.core.events import Event
from stille_post.core.rng import ForcedRng

if TYPE_CHECKING:
    from stille_post.games.kit.definition import GameDefinition
    from stille_post.players.base import Player, PromptBook

Events = list[dict[str, Any]]
Result = dict[str, Any]
GIVEN_KEYS = frozenset({"config", "rng"})
RNG_KEYS = frozenset({"seed", "random", "choice"})


@dataclass(frozen=True)
class RulebookHooks:
    """What a game adds to the generic runner; every field is optional."""

    given: frozenset[str] = frozenset()  # extra `given:` keys the hooks read
    then: frozenset[str] = frozenset()  # extra `then:` keys `check` verifies
    # `when:` keys naming a role -> the role (default: each role under its own name)
    roles: Mapping[str, str] | None = None
    # (given, options, a temp folder): add options from the scenario's own keys
    options: Callable[[Mapping[str, Any], dict[str, Any], Path], None] | None = None
    # (given, config) -> the game's rng, instead of `given.rng`
    rng: Callable[[Mapping[str, Any], Any], ForcedRng] | None = None
    # a script entry's shorthand -> a ScriptedProvider entry ({guess: cat} -> a tool call)
    script_entry: Callable[[Any], Any] | None = None
    # a scripted reply never asked for in a completed game makes the scenario wrong
    all_replies_used: bool = False
    # (scenario, events, result) -> problems, for the extra `then` keys and invariants
    check: Callable[[Mapping[str, Any], Events, Mapping[str, Any]], list[str]] | None = None
    # (scenario) -> (events, result): a whole runner, for a game whose scenarios are not
    # all games (single rules, for tables)
    run: Callable[[Mapping[str, Any]], tuple[Events, Result]] | None = None


NO_HOOKS = RulebookHooks()


def hooks_of(definition: GameDefinition) -> RulebookHooks:
    if definition.rulebook is None:
        return NO_HOOKS
    from stille_post.games.kit.definition import resolve

    hooks = resolve(definition.rulebook)
    if not isinstance(hooks, RulebookHooks):
        raise TypeError(f"{definition.rulebook} is not a RulebookHooks")
    return hooks


def scenario_seat(entry: Any, name: str, scripts: dict[str, list[Any]]) -> str:
    if isinstance(entry, list):  # a bare list is the seat's script
        entry = {"script": entry}
    if not isinstance(entry, Mapping) or len(entry) != 1:
        raise ScenarioError(f"{name}: write {{script: [...]}} or {{bot: NAME}}")
    if "bot" in entry:
        return f"bot:{entry['bot']}"
    if "script" in entry:
        raw = f"openai:scripted-{name}"
        scripts[raw] = list(entry["script"])
        return raw
    raise ScenarioError(f"{name}: write {{script: [...]}} or {{bot: NAME}}")


def scenario_seats(when: Mapping[str, Any], n: int, role_keys: Mapping[str, str],
                   scripts: dict[str, list[Any]]) -> tuple[list[str] | None, dict[str, str]]:
    """(--players, --role) for a scenario's `when`. `role_keys` maps the scenario's keys
    to the game's role names (`guessers` -> `guesser`)."""
    players = None
    if "seats" in when:
        seats = {int(k): v for k, v in when["seats"].items()}
        if sorted(seats) != list(range(1, n + 1)):
            raise ScenarioError(f"when.seats must name seats 1..{n}, got {sorted(seats)}")
        players = [scenario_seat(seats[s], f"seat{s}", scripts) for s in range(1, n + 1)]
    roles = {role: scenario_seat(when[key], key, scripts)
             for key, role in role_keys.items() if key in when}
    return players, roles


def known_keys(where: str, section: Mapping[str, Any], known: frozenset[str] | set[str]
               ) -> None:
    unknown = sorted(set(section) - set(known))
    if unknown:
        raise ScenarioError(f"{where} has unknown keys {unknown}; known: {sorted(known)}")


def forced_rng(spec: Mapping[str, Any] | None) -> ForcedRng:
    spec = dict(spec or {})
    known_keys("given.rng", spec, RNG_KEYS)
    return ForcedRng(spec.get("seed", 0), forced_random=spec.get("random") or [],
                     forced_choices=spec.get("choice") or [])


def play_scenario(definition: GameDefinition, scenario: Mapping[str, Any],
                  hooks: RulebookHooks = NO_HOOKS) -> tuple[Events, Result]:
    if hooks.run is not None:
        return hooks.run(scenario)
    from stille_post.games.kit.setup import build_config, prepare
    from stille_post.players.llm import LLMPlayer
    from stille_post.providers.scripted import ScriptedProvider

    given, when = dict(scenario.get("given") or {}), dict(scenario.get("when") or {})
    role_keys = hooks.roles if hooks.roles is not None else {
        r.name: r.name for r in definition.roles}
    known_keys("given", given, GIVEN_KEYS | hooks.given)
    known_keys("when", when, {"seats", *role_keys})
    expand = hooks.script_entry or (lambda entry: entry)
    providers: dict[str, ScriptedProvider] = {}
    with tempfile.TemporaryDirectory() as tmp:
        options = dict(given.get("config") or {})
        if hooks.options is not None:
            hooks.options(given, options, Path(tmp))
        try:
            config = build_config(definition, options, None)
        except ConfigError as exc:
            return [], _refused(scenario, exc)
        rng = hooks.rng(given, config) if hooks.rng else forced_rng(given.get("rng"))
        scripts: dict[str, list[Any]] = {}
        n = int(config.num_players)  # type: ignore[attr-defined]
        players, roles = scenario_seats(when, n, role_keys, scripts)

        def factory(raw: str, prompts: PromptBook) -> Player:
            provider = ScriptedProvider([expand(e) for e in scripts[raw]],
                                        model=raw.partition(":")[2])
            providers[raw] = provider
            return LLMPlayer(provider, prompts, name=raw)

        seed = (given.get("rng") or {}).get("seed", 0)
        try:
            prepared = prepare(definition, seed=seed, rng=rng, players=players,
                               options=options, roles=roles, llm_factory=factory)
        except ConfigError as exc:
            return [], _refused(scenario, exc)
        events: list[Event] = []
        outcome = asyncio.run(prepared.play(events.append))
    unused = {k: v for k, v in rng.unused.items() if v}
    if unused:
        raise ScenarioError(f"forced rng values never drawn: {unused}")
    left = {k.partition("-")[2]: p.remaining for k, p in providers.items() if p.remaining}
    if hooks.all_replies_used and left and outcome.status == "completed":
        raise ScenarioError(f"script replies never asked for: {left}")
    result: Result = {
        "status": outcome.status,
        "reason": outcome.reason,
        "placements": {str(s): p for s, p in sorted(outcome.placements.items())},
        "seats": prepared.seats_json(),
        # the shared fields, `details`, and the details flat beside them
        **outcome.summary.to_json(), **outcome.summary.flat(),
        # what each scripted seat was sent, by its name (seat2, setter, ...)
        "requests": {k.partition("-")[2]: p.requests for k, p in providers.items()},
    }
    return [e.to_json() for e in events], result


def _refused(scenario: Mapping[str, Any], exc: ConfigError) -> Result:
    if "error" not in (scenario.get("then") or {}):
        raise ScenarioError(f"the game refused the set-up: {exc}") from None
    return {"error": str(exc)}
