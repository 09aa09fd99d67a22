"""Stille Post rules as small pure functions (docs/rules.md §1).

Nothing here does I/O or keeps state; randomness comes in as an `Rng` argument. The engine
(game.py) strings these together; the spec scenarios pin their behaviour.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from stille_post.core.rng import Rng
from stille_post.games.stille_post.roster import Roster, RosterModel

MatchMode = Literal["fuzzy", "exact"]

# The five hint kinds in canonical order: rng draws pick from this order.
HINT_KINDS: tuple[str, ...] = ("provider", "length", "first_letter", "tier", "middle")

MIN_FUZZY_GUESS = 3  # shorter fuzzy guesses would match almost anything ("g" in every id)

_EDGE_STRIP = " \t\r\n\"'`“”‘’"
_TRAILING_PUNCT = ".,;:!?"


# --- matching ------------------------------------------------------------------------

@lru_cache(maxsize=1024)  # pure; called for every roster id on every identity guess
def normalise(text: str) -> str:
    """Casefold, then strip whitespace, quotes and backticks at both ends and
    punctuation at the end, until nothing more comes off."""
    s = text.casefold()
    while True:
        t = s.strip(_EDGE_STRIP).rstrip(_TRAILING_PUNCT)
        if t == s:
            return s
        s = t


@lru_cache(maxsize=16)
def _normalised(roster_ids: tuple[str, ...]) -> frozenset[str]:
    # A game judges every guess against the same roster: normalise its ids once.
    return frozenset(normalise(r) for r in roster_ids)


def named_ids(guess: str, roster_ids: Iterable[str]) -> set[str]:
    """The roster ids a (normalised) guess names.

    An id counts only where its occurrence is not part of a longer id's occurrence:
    "gpt-5-mini" names gpt-5-mini alone, although "gpt-5" is inside it.
    """
    spans: list[tuple[int, int, str]] = []
    ids = roster_ids if isinstance(roster_ids, tuple) else tuple(roster_ids)
    for rid in _normalised(ids):
        start = guess.find(rid)
        while start != -1:
            spans.append((start, start + len(rid), rid))
            start = guess.find(rid, start + 1)
    named = set()
    for s, e, rid in spans:
        covered = any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2, _ in spans)
        if not covered:
            named.add(rid)
    return named


@dataclass(frozen=True)
class GuessVerdict:
    valid: bool
    correct: bool
    reason: str | None = None  # why a guess is invalid


def judge_guess(
    guess: str, actual: str, *, mode: MatchMode, roster_ids: Iterable[str]
) -> GuessVerdict:
    g, a = normalise(guess), normalise(actual)
    if not g:
        return GuessVerdict(False, False, "the guess is empty")
    if mode == "exact":
        return GuessVerdict(True, g == a)
    if len(g) < MIN_FUZZY_GUESS:
        return GuessVerdict(False, False, f"the guess is shorter than {MIN_FUZZY_GUESS} characters")
    named = named_ids(g, roster_ids)
    if len(named) >= 2:
        names = ", ".join(sorted(named))
        return GuessVerdict(False, False, f"the guess names {len(named)} models ({names})")
    # The seed's own rule; "gpt-5" therefore also matches "gpt-5-mini" (documented quirk).
    return GuessVerdict(True, a in g or g in a)


# --- hints ---------------------------------------------------------------------------

def middle_substring(model_id: str) -> str:
    length = max(3, len(model_id) // 4)
    start = max(0, (len(model_id) - length) // 2)
    return model_id[start : start + length]


def hint_value(kind: str, model: RosterModel) -> str:
    if kind == "provider":
        return model.provider
    if kind == "length":
        return str(len(model.id))
    if kind == "first_letter":
        return model.id[0]
    if kind == "tier":
        return "flagship/large" if model.tier == "flagship" else "smaller/efficient"
    if kind == "middle":
        return middle_substring(model.id)
    raise ValueError(f"unknown hint kind {kind!r}")


def unseen_hint_kinds(seen: Iterable[str]) -> list[str]:
    seen_set = set(seen)
    return [k for k in HINT_KINDS if k not in seen_set]


def draw_hint_kind(rng: Rng, seen: Iterable[str]) -> str | None:
    """A uniformly drawn unseen kind, or None once all five are used (hint exhaustion)."""
    unseen = unseen_hint_kinds(seen)
    return rng.choice(unseen) if unseen else None


def consistent_with_hint(kind: str, value: str, model: RosterModel) -> bool:
    """Would `model` have produced this hint? (Bots narrow their candidates with it.)"""
    return hint_value(kind, model) == value


# --- setup, tools, rotation -----------------------------------------------------------

def assign_identities(
    rng: Rng, roster: Roster, num_players: int, pinned: Mapping[int, str] | None = None
) -> dict[int, RosterModel]:
    """Seat -> model. Unpinned seats get `rng.sample` of the unpinned roster models, in
    roster order, without replacement; seats are numbered 1..n in the sampled order."""
    pinned = dict(pinned or {})
    free_seats = [s for s in range(1, num_players + 1) if s not in pinned]
    remaining = [m for m in roster if m.id not in set(pinned.values())]
    drawn = rng.sample(remaining, len(free_seats))
    seats = {s: roster.get(pinned[s]) for s in pinned}
    seats.update(zip(free_seats, drawn, strict=True))
    return dict(sorted(seats.items()))


def roulette(rng: Rng, caller: int, active: Iterable[int]) -> tuple[int, float]:
    """(eliminated seat, the draw r). r < 0.5 eliminates the caller."""
    r = rng.random()
    if r < 0.5:
        return caller, r
    others = sorted(s for s in active if s != caller)
    return rng.choice(others), r


def round_order(active: Iterable[int]) -> list[int]:
    return sorted(active)


def is_game_over(active_count: int, rounds_done: int, max_rounds: int) -> bool:
    return active_count <= 1 or rounds_done >= max_rounds


def placements(
    winner_groups: Sequence[Sequence[int]], active: Iterable[int], eliminated: Sequence[int],
    removed_together: Sequence[Sequence[int]] = (),
) -> dict[int, int]:
    """Competition ranks (1, 1, 3, ...): winners in the order they won (same phase ties),
    then everyone still active (tied), then the eliminated, most recent first.

    `removed_together` lists groups of seats that left at the same moment (several seats
    removed as unresponsive in one identity-guess phase): like the winners of one phase,
    each group ties, at the rank of its best member, instead of being ranked by seat
    number."""
    ranks: dict[int, int] = {}
    rank = 1
    for group in [*winner_groups, sorted(active)]:
        for seat in group:
            ranks[seat] = rank
        rank += len(group)
    group_of: dict[int, frozenset[int]] = {}
    for g in removed_together:
        members = frozenset(g) & frozenset(eliminated)
        if len(members) > 1:
            for seat in members:
                group_of[seat] = members
    done: set[int] = set()
    for seat in reversed(eliminated):
        if seat in done:
            continue
        members = group_of.get(seat, frozenset({seat}))
        for member in members:
            ranks[member] = rank
        done |= members
        rank += len(members)
    return dict(sorted(ranks.items()))


def guess_phase_count(num_players: int, guess_every: int, max_rounds: int) -> int:
    """Guess phases G in a game where nobody leaves: one per `guess_every` turns."""
    return (num_players * max_rounds) // guess_every


def enumeration_baseline(guess_phases: int, roster_size: int) -> float:
    """P(win) of a seat that survives and guesses one unused roster id per phase."""
    return min(1.0, guess_phases / roster_size)


# Message hygiene (anti-forgery, caps) is the kit's: games/kit/framing.py.
