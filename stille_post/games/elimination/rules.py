"""The Elimination Game's rules as pure functions (docs/rules.md §2).

Nothing here asks a player, reads the clock or emits an event: the engine (game.py) calls
these with what the players answered and the injected rng, and the spec scenarios and
unit tests pin them. Every rng draw is a `choice` over a sorted list, so a spec scenario
can force it (ForcedRng) and a seed replays exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from stille_post.core.rewards import partial_points as partial_points
from stille_post.core.rng import Rng
from stille_post.games.kit.framing import cap_chars, cap_words, escape_forgery, word_count
from stille_post.games.kit.votes import leaders, narrow_by, parse_seat, rng_pick

# --- chance -------------------------------------------------------------------------------


def permutation(rng: Rng, seats: Iterable[int]) -> list[int]:
    """A uniform random order of `seats`, drawn one position at a time with `rng.choice`
    over the sorted remaining seats (the last seat is not a draw). Drawing with `choice`
    rather than `shuffle` lets a spec scenario force an order seat by seat."""
    rest = sorted(seats)
    out: list[int] = []
    while len(rest) > 1:
        pick = rng.choice(rest)
        out.append(pick)
        rest.remove(pick)
    return out + rest


# --- word limits --------------------------------------------------------------------------


@dataclass(frozen=True)
class Limited:
    """A player's text as it enters the log, and what was done to it."""

    text: str
    limit_words: int
    truncated_from_words: int | None = None
    truncated_from_chars: int | None = None
    escaped_lines: int = 0

    @property
    def words(self) -> int:
        return word_count(self.text)

    @property
    def empty(self) -> bool:
        return not self.text.strip()

    def meta(self) -> dict[str, Any]:
        """The message event's data besides `seat` and `text` (marks only when they apply)."""
        out: dict[str, Any] = {"words": self.words, "limit_words": self.limit_words}
        if self.truncated_from_words is not None:
            out["truncated_from_words"] = self.truncated_from_words
        if self.truncated_from_chars is not None:
            out["truncated_from"] = self.truncated_from_chars
        if self.escaped_lines:
            out["escaped_lines"] = self.escaped_lines
        if self.empty:
            out["empty"] = True
        return out


def apply_limit(text: str, limit_words: int, max_chars: int) -> Limited:
    """Escape forged headers, then cap characters, then cut on a word boundary.

    Escaping first means the "(quoted)" marker counts as a word: the text that enters the
    log never has more than `limit_words` words, whatever it contained (the guarantee
    the transcript tests check). A cut keeps the text before it byte for byte.
    """
    text = text.strip()
    escaped, n_escaped = escape_forgery(text)
    by_chars: int | None
    escaped, by_chars = cap_chars(escaped, max_chars)
    capped, by_words = cap_words(escaped, limit_words)
    return Limited(capped.rstrip(), limit_words, by_words, by_chars, n_escaped)


def over_limit(text: str, limit_words: int) -> bool:
    return word_count(text) > limit_words


# --- rankings -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Ranking:
    seat: int
    ranking: tuple[int, ...]  # the full list used for pairing
    given: tuple[Any, ...]  # what the reply listed
    dropped: tuple[Any, ...]  # duplicates, self, unknown or eliminated seats
    filled: tuple[int, ...]  # missing seats, appended in rng order


def complete_ranking(seat: int, given: Sequence[Any], active: Sequence[int],
                     rng: Rng) -> Ranking:
    """docs/rules.md §2: seats missing from a ranking are appended in rng order; duplicates and
    unknown seats are dropped. `given` may hold anything a model wrote ("P3", 3.0, "x")."""
    others = set(active) - {seat}
    kept: list[int] = []
    dropped: list[Any] = []
    for item in given:
        s = parse_seat(item)
        if s is None or s not in others or s in kept:
            dropped.append(item)
        else:
            kept.append(s)
    missing = [s for s in sorted(others) if s not in kept]
    filled = permutation(rng, missing) if missing else []
    return Ranking(seat, tuple(kept + filled), tuple(given), tuple(dropped), tuple(filled))


# --- pairing (deferred acceptance) -------------------------------------------------------

StepResult = Literal["accepted", "swapped", "rejected"]


@dataclass(frozen=True)
class Step:
    proposer: int
    receiver: int
    result: StepResult
    displaced: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"proposer": self.proposer, "receiver": self.receiver,
                               "result": self.result}
        if self.displaced is not None:
            out["displaced"] = self.displaced
        return out


@dataclass(frozen=True)
class Pairing:
    pairs: tuple[tuple[int, int], ...]  # (proposer, receiver): the proposer writes first
    unpaired: tuple[int, ...]
    entry_order: tuple[int, ...]
    steps: tuple[Step, ...] = ()
    exhausted: tuple[int, ...] = ()  # seats that ran out of list


def pair(rankings: Mapping[int, Sequence[int]], entry_order: Sequence[int]) -> Pairing:
    """Deferred acceptance exactly as docs/rules.md §2 describes it.

    - Seats enter in `entry_order` (an rng permutation); each proposes down its own list.
    - A receiver holds at most one proposer and swaps to a newcomer it ranks higher; the
      displaced seat proposes on down its list.
    - A seat that runs out of list stays unpaired (as a proposer).
    - Pairs are read off the receivers in the order of their first acceptance, as
      (proposer, receiver), if neither seat is paired yet. Every seat is both a proposer
      and a receiver, so holds can form cycles and fewer than n // 2 pairs is possible.
    """
    position = {s: {o: i for i, o in enumerate(r)} for s, r in rankings.items()}
    next_choice = dict.fromkeys(rankings, 0)
    held: dict[int, int] = {}  # receiver -> the proposer it holds
    first_accepted: list[int] = []  # receivers, in the order of their first acceptance
    steps: list[Step] = []
    exhausted: list[int] = []
    for entrant in entry_order:
        free: int | None = entrant
        while free is not None:
            proposer, free = free, None
            ranking = rankings[proposer]
            while next_choice[proposer] < len(ranking):
                receiver = ranking[next_choice[proposer]]
                next_choice[proposer] += 1
                current = held.get(receiver)
                prefs = position[receiver]
                if current is None:
                    held[receiver] = proposer
                    first_accepted.append(receiver)
                    steps.append(Step(proposer, receiver, "accepted"))
                    break
                # A receiver's list is complete after complete_ranking; a seat missing from
                # it (only possible when called directly) ranks below every listed seat.
                if prefs.get(proposer, len(prefs)) < prefs.get(current, len(prefs)):
                    held[receiver] = proposer
                    steps.append(Step(proposer, receiver, "swapped", current))
                    free = current
                    break
                steps.append(Step(proposer, receiver, "rejected"))
            else:
                exhausted.append(proposer)
    paired: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for receiver in first_accepted:
        proposer = held[receiver]
        if receiver not in paired and proposer not in paired:
            pairs.append((proposer, receiver))
            paired.update((proposer, receiver))
    unpaired = tuple(s for s in sorted(rankings) if s not in paired)
    return Pairing(tuple(pairs), unpaired, tuple(entry_order), tuple(steps), tuple(exhausted))


# --- votes --------------------------------------------------------------------------------

VoteStage = Literal["vote", "revote", "jury"]
NO_ANSWER = "no answer"


@dataclass(frozen=True)
class Ballot:
    voter: int
    target: int | None  # None: no usable answer
    valid: bool
    invalid: str | None = None  # why it is not counted


def judge_vote(voter: int, target: int | None, stage: VoteStage,
               allowed: Sequence[int]) -> Ballot:
    """Whether one vote counts (docs/rules.md §2: self-votes and unknown targets are invalid)."""
    if target is None:
        return Ballot(voter, None, False, NO_ANSWER)
    if target == voter and stage == "vote":
        return Ballot(voter, target, False, "self-vote")
    if target not in allowed:
        reason = {"vote": "unknown target", "revote": "not among the tied",
                  "jury": "not a finalist"}[stage]
        if target == voter:
            reason = "self-vote"
        return Ballot(voter, target, False, reason)
    return Ballot(voter, target, True)


def count(ballots: Iterable[Ballot]) -> dict[int, int]:
    """Counted votes per target, in ascending seat order (targets without votes left out)."""
    out: dict[int, int] = {}
    for b in ballots:
        if b.valid and b.target is not None:
            out[b.target] = out.get(b.target, 0) + 1
    return dict(sorted(out.items()))


def top(counts: Mapping[int, int], candidates: Sequence[int]) -> list[int]:
    """The seats with the most counted votes. With no counted vote at all, every
    candidate is tied (docs/rules.md §2 is silent; ruling: a vote nobody cast is a tie of all)."""
    best = leaders(counts)
    return best if best else sorted(candidates)


# --- the tie chain ------------------------------------------------------------------------

TieStepName = Literal["revote", "cumulative", "rng"]


@dataclass(frozen=True)
class TieStep:
    step: TieStepName
    tied: tuple[int, ...]  # before this step
    leaders: tuple[int, ...]  # after it
    counts: Mapping[int, int] = field(default_factory=dict)  # revote
    invalid: int = 0  # revote: votes not counted
    cumulative: Mapping[int, int] = field(default_factory=dict)  # cumulative
    picked: int | None = None  # rng

    @property
    def decided(self) -> bool:
        return len(self.leaders) == 1


def revoters(active: Sequence[int], tied: Sequence[int]) -> list[int]:
    """docs/rules.md §2: the non-tied active seats re-vote, once, among the tied."""
    return [s for s in sorted(active) if s not in tied]


def revote_step(tied: Sequence[int], ballots: Sequence[Ballot]) -> TieStep:
    """The re-vote among the tied. Still tied: the next step looks only at the re-vote's
    leaders (every tied seat, if no re-vote counted)."""
    counts = count(ballots)
    best = top(counts, tied)
    return TieStep("revote", tuple(sorted(tied)), tuple(best), counts=counts,
                   invalid=sum(1 for b in ballots if not b.valid))


def cumulative_step(tied: Sequence[int], cumulative: Mapping[int, int]) -> TieStep:
    """The most votes received this game (main votes and re-votes counted so far)."""
    best = narrow_by(sorted(tied), cumulative)
    shown = {s: cumulative.get(s, 0) for s in sorted(tied)}
    return TieStep("cumulative", tuple(sorted(tied)), tuple(best), cumulative=shown)


def rng_step(tied: Sequence[int], rng: Rng) -> TieStep:
    picked = rng_pick(rng, tied)
    return TieStep("rng", tuple(sorted(tied)), (picked,), picked=picked)


def finish_chain(tied: Sequence[int], cumulative: Mapping[int, int] | None,
                 rng: Rng) -> list[TieStep]:
    """The chain after the re-vote (or without one): cumulative votes, then the rng.
    `cumulative=None` skips straight to the rng (the jury's `random` tie rule)."""
    steps: list[TieStep] = []
    rest = sorted(tied)
    if len(rest) > 1 and cumulative is not None:
        steps.append(cumulative_step(rest, cumulative))
        rest = list(steps[-1].leaders)
    if len(rest) > 1:
        steps.append(rng_step(rest, rng))
    return steps


# --- ranks --------------------------------------------------------------------------------


def ranks(eliminated: Sequence[int], remaining: Sequence[int],
          winner: int | None = None) -> dict[int, int]:
    """docs/rules.md §2: ranks follow reverse elimination order; the jury's loser (eliminated
    last) is 2nd. A game that stopped early (aborted) ranks every remaining seat tied
    first, then the eliminated, the most recent first."""
    out: dict[int, int] = {}
    if winner is not None:
        out[winner] = 1
        above = 1
    else:
        for s in remaining:
            out[s] = 1
        above = len(remaining)
    for i, seat in enumerate(reversed(eliminated)):
        out[seat] = above + 1 + i
    return dict(sorted(out.items()))


def keyed(counts: Mapping[int, int]) -> dict[str, int]:
    """Seat-keyed mappings go into events with string keys: a transcript read back gives
    the same dict, so the canonical text does not depend on having been reloaded."""
    return {str(k): v for k, v in sorted(counts.items())}


def outcome_details(*, ranks: Mapping[int, int], winner: int | None, finalists: Sequence[int],
                    rounds: int, eliminated_in: Mapping[int, int],
                    decided_by: Mapping[int, str], cumulative: Mapping[int, int],
                    jury_votes: Mapping[int, Any], over_limit_messages: int,
                    num_players: int) -> dict[str, Any]:
    """A game's outcome `details`: one shape for a game played here (game.py) and one
    imported from the published logs (importer/convert.py), so reports read both alike
    and the two cannot drift apart. The importer adds only what a log says beyond it."""
    return {
        "ranks": keyed(ranks),
        "winner": winner,
        "finalists": list(finalists),
        "rounds": rounds,
        "eliminated_in": {str(s): r for s, r in eliminated_in.items()},
        "decided_by": {str(s): h for s, h in decided_by.items()},
        "cumulative": keyed(cumulative),
        "jury_votes": {str(s): t for s, t in sorted(jury_votes.items())},
        "over_limit_messages": over_limit_messages,
        "num_players": num_players,
    }
