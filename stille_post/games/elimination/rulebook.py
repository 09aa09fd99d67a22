"""The Elimination Game's hooks for the kit's rulebook runner (spec/*.yaml here).

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
seat offered (so an unforced order is ascending). Script replies: `{rank: [...]}` is a
submit_ranking call, `{vote: N, reason: ...}` a cast_vote call.

Extra `then` key: `prompt` (a list of {seat, request: N | all | last, contains: [...],
lacks: [...], tool_choice}). Every scenario is also checked for the invariant that no
message event has more words than its `limit_words`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from stille_post.core.rng import ForcedRng
from stille_post.games.kit.framing import word_count
from stille_post.games.kit.scenarios import RulebookHooks
from stille_post.providers.base import request_text

T = TypeVar("T")
MESSAGES = ("public_message", "private_message", "tie_break_message", "final_message")


class PinnedRng(ForcedRng):
    """Forced draws first; then the lowest seat offered (the lists are sorted)."""

    def choice(self, seq: Sequence[T]) -> T:  # type: ignore[override]
        if self._forced_choices:
            return super().choice(seq)
        return seq[0]


def pinned_rng(given: Mapping[str, Any], config: Any) -> ForcedRng:
    forced: list[Any] = []
    for d in given.get("draws") or []:
        forced.extend(d[:-1] if isinstance(d, list) else [d])
    return PinnedRng(0, forced_choices=forced)


def entry(e: Any) -> Any:
    if isinstance(e, Mapping) and "rank" in e:
        return {"tool": {"name": "submit_ranking", "arguments": {"ranking": e["rank"]}}}
    if isinstance(e, Mapping) and "vote" in e:
        return {"tool": {"name": "cast_vote",
                         "arguments": {"target": e["vote"], "reason": e.get("reason", "")}}}
    return e


def check(scenario: Mapping[str, Any], events: list[dict[str, Any]],
          result: Mapping[str, Any]) -> list[str]:
    problems = []
    for e in events:  # the invariant every scenario checks: limits are never exceeded
        d = e["data"]
        if e["type"] in MESSAGES and word_count(d["text"]) > d["limit_words"]:
            problems.append(f"seq {e['seq']}: {word_count(d['text'])} words over "
                            f"limit_words {d['limit_words']}")
    for want in scenario["then"].get("prompt") or []:
        problems.extend(_check_prompt(want, result.get("requests") or {}))
    return problems


def _check_prompt(want: Mapping[str, Any], requests: Mapping[str, list[Any]]) -> list[str]:
    seat, which = int(want["seat"]), want.get("request", "all")
    reqs = list(requests.get(f"seat{seat}", []))
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


HOOKS = RulebookHooks(given=frozenset({"draws"}), then=frozenset({"prompt"}),
                      rng=pinned_rng, script_entry=entry, check=check,
                      all_replies_used=True)
