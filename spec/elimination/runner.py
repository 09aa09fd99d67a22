"""Runs one Elimination Game scenario (RULES.md §2): `run(scenario) -> (events, result)`.

    given:
      config: {num_players: 4, private_subrounds: 1, ...}   # EliminationConfig fields
      draws: [[3, 1, 2, 4], 2]   # forced rng.choice values, in the engine's draw order:
                                 # a list is a permutation (its last seat is not a draw),
                                 # a number is one draw (a tie's rng pick)
    when:
      seats:                     # every seat: a script (list of replies) or {bot: NAME}
        1: ["my statement", {rank: [2, 3]}, "private hi", {vote: 2, reason: "why"}]
        2: {bot: loyal}

Draw order per round (game.py): public speaking order, ranking fills (ascending seat),
pairing entry order, tie-break speaking order, the tie's rng pick; in the final: the
statements' order, the jury tie's rng pick. A draw that is not forced takes the LOWEST
seat offered (so an unforced order is ascending); forced draws left unused fail the
scenario. Script replies: a string is text; `{rank: [...]}` is a submit_ranking call,
`{vote: N, reason: ...}` a cast_vote call; any other mapping is a ScriptedProvider
entry (text, tool, raw_arguments, error). Every script seat is a real LLMPlayer with the
game's prompts, so prompts and parsing are exercised.

Extra `then` keys: `prompt` (a list of {seat, request: N | all | last, contains: [...],
lacks: [...], tool_choice}), `error` (a substring of the config error the game must
refuse with). Every scenario is also checked for the invariant that no message event has
more words than its `limit_words`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from stille_post.core.errors import ConfigError, ScenarioError
from stille_post.core.events import Event
from stille_post.core.rng import ForcedRng
from stille_post.games.elimination import GAME
from stille_post.games.kit.framing import word_count
from stille_post.games.kit.setup import prepare
from stille_post.players.base import Player, PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.providers.base import request_text
from stille_post.providers.scripted import ScriptedProvider

THEN_KEYS = ("prompt", "error")
T = TypeVar("T")
MESSAGES = ("public_message", "private_message", "tie_break_message", "final_message")


class PinnedRng(ForcedRng):
    """Forced draws first; then the lowest seat offered (the lists are sorted)."""

    def choice(self, seq: Sequence[T]) -> T:  # type: ignore[override]
        if self._forced_choices:
            return super().choice(seq)
        return seq[0]


def _entry(e: Any) -> Any:
    if isinstance(e, Mapping) and "rank" in e:
        return {"tool": {"name": "submit_ranking", "arguments": {"ranking": e["rank"]}}}
    if isinstance(e, Mapping) and "vote" in e:
        return {"tool": {"name": "cast_vote",
                         "arguments": {"target": e["vote"], "reason": e.get("reason", "")}}}
    return e


def run(scenario: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    given, when = dict(scenario.get("given") or {}), dict(scenario.get("when") or {})
    if set(given) - {"config", "draws"} or set(when) - {"seats"}:
        raise ScenarioError("given takes config and draws; when takes seats")
    options = dict(given.get("config") or {})
    forced: list[Any] = []
    for d in given.get("draws") or []:
        forced.extend(d[:-1] if isinstance(d, list) else [d])
    rng = PinnedRng(0, forced_choices=forced)
    seats = {int(k): v for k, v in (when.get("seats") or {}).items()}
    n = int(options.get("num_players", len(seats) or 8))
    providers: dict[str, ScriptedProvider] = {}
    specs: list[str] | None = None
    if seats:
        if sorted(seats) != list(range(1, n + 1)):
            raise ScenarioError(f"when.seats must name seats 1..{n}, got {sorted(seats)}")
        specs = []
        for s in range(1, n + 1):
            v = seats[s]
            if isinstance(v, Mapping) and "bot" in v:
                specs.append(str(v["bot"]))
            elif isinstance(v, list):
                raw = f"openai:scripted-{s}"
                providers[raw] = ScriptedProvider([_entry(e) for e in v], model=raw)
                specs.append(raw)
            else:
                raise ScenarioError(f"seat {s}: a list of replies or {{bot: NAME}}")

    def factory(raw: str, prompts: PromptBook) -> Player:
        return LLMPlayer(providers[raw], prompts, name=raw)

    try:
        prepared = prepare(GAME, seed=0, rng=rng, players=specs, options=options,
                           llm_factory=factory)
    except ConfigError as exc:
        return [], {"error": str(exc)}
    events: list[Event] = []
    outcome = asyncio.run(prepared.play(events.append))
    if rng.unused["choice"]:
        raise ScenarioError(f"forced draws never drawn: {rng.unused['choice']}")
    left = {k: p.remaining for k, p in providers.items() if p.remaining}
    if left and outcome.status == "completed":
        raise ScenarioError(f"script replies never asked for: {left}")
    result: dict[str, Any] = {
        "status": outcome.status, "reason": outcome.reason,
        "placements": {str(s): p for s, p in sorted(outcome.placements.items())},
        "seats": prepared.seats_json(), **outcome.summary.to_json(),
        "requests": {int(k.rsplit("-", 1)[1]): p.requests for k, p in providers.items()},
    }
    return [e.to_json() for e in events], result


def check(scenario: Mapping[str, Any], events: list[dict[str, Any]],
          result: Mapping[str, Any]) -> list[str]:
    then, problems = scenario["then"], []
    if "error" in then:
        err = result.get("error") or ""
        if str(then["error"]) not in err:
            problems.append(f"then.error: expected a refusal containing {then['error']!r}, "
                            f"got {err or 'no error'!r}")
    for e in events:  # the invariant every scenario checks: limits are never exceeded
        d = e["data"]
        if e["type"] in MESSAGES and word_count(d["text"]) > d["limit_words"]:
            problems.append(f"seq {e['seq']}: {word_count(d['text'])} words over "
                            f"limit_words {d['limit_words']}")
    for want in then.get("prompt") or []:
        problems.extend(_check_prompt(want, result.get("requests") or {}))
    return problems


def _check_prompt(want: Mapping[str, Any], requests: Mapping[int, list[Any]]) -> list[str]:
    seat, which = int(want["seat"]), want.get("request", "all")
    reqs = list(requests.get(seat, []))
    if which == "last":
        reqs = reqs[-1:]
    elif which != "all":
        reqs = reqs[int(which): int(which) + 1]
    if not reqs:
        return [f"then.prompt: seat {seat} has no request {which}"]
    out = []
    for i, r in enumerate(reqs):
        text = request_text(r)
        for s in want.get("contains") or []:
            if s not in text:
                out.append(f"then.prompt: seat {seat} request {which}#{i} lacks {s!r}")
        for s in want.get("lacks") or []:
            if s in text:
                out.append(f"then.prompt: seat {seat} request {which}#{i} contains {s!r}")
        if "tool_choice" in want and r.tool_choice != want["tool_choice"]:
            out.append(f"then.prompt: seat {seat} request {which}#{i} tool_choice "
                       f"{r.tool_choice!r}, expected {want['tool_choice']!r}")
    return out
