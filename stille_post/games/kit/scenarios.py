"""Seats for a rulebook scenario (spec/<game>/*.yaml), shared by every game's runner.

A scenario names its seats per seat (`seats: {1: {script: [...]}, 2: {bot: NAME}}`) or
per role (`<role key>: {script: [...]}`). A `script` seat is a real LLM seat over a
scripted provider, so the prompts and the parsing are exercised: its spec is
`openai:scripted-<name>`, and `scripts` maps that spec to its replies for the runner's
LLM factory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stille_post.core.errors import ScenarioError


def scenario_seat(entry: Any, name: str, scripts: dict[str, list[Any]]) -> str:
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
