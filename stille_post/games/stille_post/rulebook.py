"""Stille Post's hooks for the kit's rulebook runner: its spec/*.yaml scenarios are
played by a runner of its own (`HOOKS.run`), through the real path. The format is in
docs/game-kit.md.

`given.rule` picks what runs:
- `game` (the default): a whole `StillePostGame` whose seats are `LLMPlayer`s over a
  `ScriptedProvider`, so prompt building and completion parsing are exercised too;
- `match`, `hint`, `roster`, `setup`, `baseline`: one rule on its own, for tables.

The result of a game is the GameOutcome's status/reason/placements/summary, plus what the
rng drew (`rng_calls`, `samples`), replies left unused, and every request each seat sent.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from stille_post.core.errors import ProviderError, ScenarioError
from stille_post.core.rng import ForcedRng
from stille_post.games.kit.scenarios import RulebookHooks
from stille_post.games.kit.setup import prepare
from stille_post.games.stille_post import GAME, rules
from stille_post.games.stille_post.config import StillePostConfig
from stille_post.games.stille_post.game import StillePostGame
from stille_post.games.stille_post.prompts import PROMPTS
from stille_post.games.stille_post.roster import load_roster
from stille_post.players.llm import LLMPlayer
from stille_post.providers.base import ChatRequest, Completion, request_text
from stille_post.providers.scripted import ScriptedProvider, completion_from_script

THEN_KEYS = frozenset({"requests"})
GIVEN_KEYS = frozenset({"rule", "config", "seats", "rng", "guess", "actual", "mode", "model"})
RNG_KEYS = frozenset({"seed", "random", "choice", "sample", "allow_unused"})
REQUEST_KEYS = frozenset({"at", "count", "contains", "not_contains", "matches", "not_matches",
                          "system", "messages", "assistant_not_contains",
                          "mentions_reason_of"})


class ScenarioRng(ForcedRng):
    """ForcedRng that also forces `sample()` and logs every draw, so a scenario can pin
    *what the rules drew from*, not only what came out (e.g. sorted other players)."""

    def __init__(self, seed: int = 0, forced_random: Sequence[float] = (),
                 forced_choices: Sequence[Any] = (), forced_samples: Sequence[Any] = ()) -> None:
        super().__init__(seed, forced_random, forced_choices)
        self._forced_samples = [list(s) for s in forced_samples]
        self.calls: list[dict[str, Any]] = []
        self.samples: list[dict[str, Any]] = []

    def random(self) -> float:
        r = super().random()
        self.calls.append({"op": "random", "result": r})
        return r

    def choice(self, seq: Any) -> Any:
        picked = super().choice(seq)
        self.calls.append({"op": "choice", "seq": list(seq), "result": picked})
        return picked

    def sample(self, population: Sequence[Any], k: int, **kw: Any) -> list[Any]:
        ids = [getattr(m, "id", m) for m in population]
        if k and self._forced_samples:  # a k=0 draw (every seat pinned) takes nothing
            want = self._forced_samples.pop(0)
            if len(want) != k or not all(w in ids for w in want):
                raise ScenarioError(f"forced sample {want} is not {k} members of {ids}")
            picked = [population[ids.index(w)] for w in want]
        else:
            picked = super().sample(population, k, **kw)
        self.samples.append({"population": ids, "k": k,
                             "result": [getattr(m, "id", m) for m in picked]})
        return picked

    @property
    def unused(self) -> dict[str, list[Any]]:
        return {**super().unused, "sample": list(self._forced_samples)}


class _FillProvider(ScriptedProvider):
    """A scripted seat that, once its script is used up, answers `fill` (if given) forever,
    so a scenario scripts only the replies that matter to its ruling."""

    def __init__(self, script: Sequence[Any], fill: Any, model: str) -> None:
        super().__init__(script, model=model)
        self.fill = fill

    async def complete(self, request: ChatRequest) -> Completion:
        if self.remaining == 0 and self.fill is not None:
            self.requests.append(request)
            if isinstance(self.fill, Mapping) and self.fill.get("error"):
                raise ProviderError(f"scripted failure: {self.fill['error']}")
            return completion_from_script(self.fill, model=self.model)
        return await super().complete(request)


# --- building a game -----------------------------------------------------------------

def _rng(spec: Mapping[str, Any] | None) -> ScenarioRng:
    spec = dict(spec or {})
    _no_unknown("given.rng", spec, RNG_KEYS)
    return ScenarioRng(int(spec.get("seed", 0)), spec.get("random") or (),
                       spec.get("choice") or (), spec.get("sample") or ())


def _build(given: Mapping[str, Any], when: Mapping[Any, Any]
           ) -> tuple[StillePostGame, ScenarioRng, dict[int, _FillProvider]]:
    pins = {int(s): str(m) for s, m in (given.get("seats") or {}).items()}
    opts = dict(given.get("config") or {})
    if pins:  # otherwise the config's own default stands (a scenario may pin that default)
        opts.setdefault("num_players", len(pins))
    opts["pinned"] = {**{int(k): v for k, v in (opts.get("pinned") or {}).items()}, **pins}
    try:
        config = StillePostConfig(**opts)
    except ValidationError as exc:
        raise ScenarioError(f"given.config: {exc.errors()[0]['msg']}") from None
    seats = range(1, config.num_players + 1)
    bad = [k for k in when if k != "fill" and k not in seats]
    if bad:
        raise ScenarioError(f"`when` keys must be seat ids {list(seats)} or `fill`, got {bad}")
    providers = {s: _FillProvider(list(when.get(s) or []), when.get("fill"), f"seat-{s}")
                 for s in seats}
    players = {s: LLMPlayer(p, PROMPTS, name=f"scripted:seat{s}") for s, p in providers.items()}
    rng = _rng(given.get("rng"))
    game = StillePostGame(config, GAME.table(config, players, rng),
                          roster=load_roster(config.roster))
    return game, rng, providers


def _request_json(req: ChatRequest) -> dict[str, Any]:
    return {
        "system": req.system,
        "tool_choice": req.tool_choice,
        "messages": [{"role": m.role, "content": m.content,
                      "tool_calls": [c.name for c in m.tool_calls],
                      "tool_call_id": m.tool_call_id} for m in req.messages],
        "text": request_text(req),
    }


def _play(given: Mapping[str, Any], when: Mapping[Any, Any]
          ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    game, rng, providers = _build(given, when)
    outcome = asyncio.run(game.play())
    result = {
        "status": outcome.status,
        "reason": outcome.reason,
        "placements": outcome.placements,
        "summary": outcome.summary.flat(),
        "rng_calls": rng.calls,
        "samples": rng.samples,
        "rng_unused": rng.unused,
        "unused_replies": {s: p.remaining for s, p in providers.items() if p.remaining},
        "requests": {s: [_request_json(r) for r in p.requests] for s, p in providers.items()},
    }
    return [e.to_json() for e in game.log.events], result


# --- single rules, for tables ----------------------------------------------------------

def _match(given: Mapping[str, Any]) -> dict[str, Any]:
    ids = load_roster().ids
    verdict = rules.judge_guess(str(given["guess"]), str(given["actual"]),
                                mode=given.get("mode", "fuzzy"), roster_ids=ids)
    named = sorted(rules.named_ids(rules.normalise(str(given["guess"])), ids))
    return {"valid": verdict.valid, "correct": verdict.correct, "reason": verdict.reason,
            "named": named}


def _hint(given: Mapping[str, Any]) -> dict[str, Any]:
    model = load_roster().get(str(given["model"]))
    return {"kinds": list(rules.HINT_KINDS),
            **{k: rules.hint_value(k, model) for k in rules.HINT_KINDS}}


def _roster(given: Mapping[str, Any]) -> dict[str, Any]:
    roster = load_roster()
    by: Callable[[str, str], list[str]] = lambda attr, v: [  # noqa: E731
        m.id for m in roster if getattr(m, attr) == v]
    return {
        "count": len(roster),
        "ids": list(roster.ids),
        "tiers": {t: by("tier", t) for t in ("flagship", "efficient")},
        "providers": {p: by("provider", p) for p in ("openai", "anthropic", "google")},
        "api_names": {m.id: m.api_name for m in roster},
    }


def _setup(given: Mapping[str, Any]) -> dict[str, Any]:
    game, rng, _ = _build(given, {})
    ids = {s: m.id for s, m in game.identities.items()}
    return {"seats": ids, "distinct": len(set(ids.values())), "samples": rng.samples,
            "rng_unused": rng.unused, "config": game.config.model_dump(mode="json")}


def _baseline(given: Mapping[str, Any]) -> dict[str, Any]:
    # Through the game definition, the way the CLI and the transcript header report it.
    prepared = prepare(GAME, seed=0, rng=ScenarioRng(0), players=None,
                       options=dict(given.get("config") or {}))
    return dict(prepared.header_extra()["baseline"])


_RULES: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "match": _match, "hint": _hint, "roster": _roster, "setup": _setup, "baseline": _baseline,
}


def run(scenario: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    given = scenario.get("given") or {}
    _no_unknown("given", given, GIVEN_KEYS)
    rule = given.get("rule", "game")
    if rule == "game":
        return _play(given, scenario.get("when") or {})
    if rule not in _RULES:
        raise ScenarioError(f"given.rule must be game or one of {sorted(_RULES)}, got {rule!r}")
    return [], _RULES[rule](given)


# --- runner-specific checks: rng leftovers and `then.requests` ----------------------------

def check(scenario: Mapping[str, Any], events: list[dict[str, Any]],
          result: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    given = scenario.get("given") or {}
    unused = {k: v for k, v in (result.get("rng_unused") or {}).items() if v}
    if unused and not (given.get("rng") or {}).get("allow_unused"):
        # A forced value nobody drew means the scenario does not exercise what it claims.
        problems.append(f"given.rng: forced values were never drawn: {unused}")
    for key, specs in (scenario["then"].get("requests") or {}).items():
        seat = int(key) if str(key).isdigit() else None
        reqs = (result.get("requests") or {}).get(seat)
        if seat is None or reqs is None:
            raise ScenarioError(f"then.requests: there is no seat {key!r}")
        for spec in specs if isinstance(specs, list) else [specs]:
            if not isinstance(spec, Mapping):
                raise ScenarioError(f"then.requests[{seat}]: expected a mapping, got {spec!r}")
            problems.extend(f"then.requests[{seat}]: {p}"
                            for p in _check_requests(spec, reqs, _reasons(events, seat, spec)))
    return problems


def _no_unknown(where: str, spec: Mapping[str, Any], allowed: frozenset[str]) -> None:
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")


def _reasons(events: list[dict[str, Any]], seat: int, spec: Mapping[str, Any]) -> list[str]:
    """The `reason`s of the events named by `mentions_reason_of` that concern this seat:
    a corrective re-ask must state its reason, whatever the engine's wording is."""
    types = set(spec.get("mentions_reason_of") or [])
    return [str(e["data"]["reason"]) for e in events
            if e["type"] in types and e["data"].get("seat") == seat and "reason" in e["data"]]


def _check_requests(spec: Mapping[str, Any], reqs: list[dict[str, Any]],
                    reasons: list[str]) -> list[str]:
    _no_unknown("then.requests.<seat>", spec, REQUEST_KEYS)
    out: list[str] = []
    if "count" in spec and len(reqs) != spec["count"]:
        out.append(f"expected {spec['count']} requests, the seat sent {len(reqs)}")
    if "at" in spec:
        try:
            scope = [reqs[spec["at"]]]
        except IndexError:
            return [*out, f"at={spec['at']}: the seat sent only {len(reqs)} requests"]
        where = f"request at={spec['at']}"
    else:
        scope, where = reqs, "its requests"
    texts = [r["text"] for r in scope]
    out += _text_checks(spec, texts, where)
    if spec.get("mentions_reason_of") and not reasons:
        out.append(f"no {spec['mentions_reason_of']} event concerns this seat")
    out += _text_checks({"contains": reasons}, texts, where)
    chosen = scope[-1] if scope else None
    if "system" in spec and chosen is not None:
        out += _text_checks(spec["system"], [chosen["system"]], "the system prompt")
    if "messages" in spec and chosen is not None:
        out += _check_messages(spec["messages"], chosen["messages"])
    for needle in spec.get("assistant_not_contains") or []:
        for i, r in enumerate(scope):
            if any(m["role"] == "assistant" and needle in m["content"] for m in r["messages"]):
                out.append(f"request #{i}: an assistant turn contains {needle!r}")
    return out


def _text_checks(spec: Mapping[str, Any], texts: list[str], where: str) -> list[str]:
    out: list[str] = []
    for needle in spec.get("contains") or []:
        if not any(needle in t for t in texts):
            out.append(f"{where}: none contains {needle!r}")
    for needle in spec.get("not_contains") or []:
        if any(needle in t for t in texts):
            out.append(f"{where}: some contain {needle!r}, which must not appear")
    for pattern in spec.get("matches") or []:
        if not any(re.search(pattern, t, re.M) for t in texts):
            out.append(f"{where}: none matches /{pattern}/")
    for pattern in spec.get("not_matches") or []:
        hits = [m.group(0) for t in texts if (m := re.search(pattern, t, re.M))]
        if hits:
            out.append(f"{where}: /{pattern}/ must not match, but matched {hits[0]!r}")
    return out


def _check_messages(expected: list[Mapping[str, Any]], messages: list[dict[str, Any]]
                    ) -> list[str]:
    """Ordered subsequence of partial matches; `contains` is a substring of the content and
    `immediately: true` demands the message right after the previous match."""
    pos = 0
    for i, want in enumerate(expected):
        fields = {k: v for k, v in want.items() if k not in ("contains", "immediately")}
        candidates = range(pos, min(pos + 1, len(messages))) if (
            want.get("immediately") and i) else range(pos, len(messages))
        hit = next((j for j in candidates
                    if all(messages[j].get(k) == v for k, v in fields.items())
                    and want.get("contains", "") in messages[j]["content"]), None)
        if hit is None:
            listing = "\n".join(f"    {j:>3} {m['role']:<9} calls={m['tool_calls']} "
                                f"id={m['tool_call_id']} {m['content'][:90]!r}"
                                for j, m in enumerate(messages))
            return [f"messages[{i}] {dict(want)} not found from message {pos} on; the "
                    f"request's messages:\n{listing}"]
        pos = hit + 1
    return []


HOOKS = RulebookHooks(then=THEN_KEYS, run=run, check=check)
