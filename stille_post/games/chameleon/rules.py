"""The Chameleon's rules as small pure functions (docs/rules.md §3).

Nothing here does I/O or keeps state; chance comes in as an `Rng` argument, and every
list an rng picks from is in a canonical order first, so a seed reproduces a game. A
reply that breaks a shape rule raises `ParseError`, which the engine turns into a
corrective re-ask and, once `repair_attempts` are spent, into a `Fail`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from stille_post.core.errors import ParseError
from stille_post.core.rng import Rng
from stille_post.games.kit import votes

CHAMELEON: Final = "chameleon"
NON_CHAMELEON: Final = "non-chameleon"
Role = Literal["chameleon", "non-chameleon"]

# The four outcomes, spelled as in the paper's code so results compare directly.
IDENTIFIED_WIN: Final = "IdentifiedWin"  # caught, wrong second-chance guess: others win
IDENTIFIED_LOSS: Final = "IdentifiedLoss"  # caught, right guess: the chameleon wins
MISIDENTIFIED_LOSS: Final = "MisidentifiedLoss"  # not caught: the chameleon wins
FAIL: Final = "Fail"  # a player's output stayed invalid after its re-asks
Outcome = Literal["IdentifiedWin", "IdentifiedLoss", "MisidentifiedLoss", "Fail"]
OUTCOMES: tuple[str, ...] = (IDENTIFIED_WIN, IDENTIFIED_LOSS, MISIDENTIFIED_LOSS, FAIL)

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})
# One word: runs of letters/digits joined by single hyphens or apostrophes.
_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")
_VOTE = re.compile(r"(?:player|seat|p)?\s*#?\s*(\d+)", re.IGNORECASE)
_TOKEN = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")


# --- one-word replies ----------------------------------------------------------------

def strip_edges(text: str) -> str:
    """Drop whitespace and punctuation around a reply ("**Canopy.**" -> "Canopy")."""
    s = text.translate(_APOSTROPHES).strip()
    start, end = 0, len(s)
    while start < end and not s[start].isalnum():
        start += 1
    while end > start and not s[end - 1].isalnum():
        end -= 1
    return s[start:end]


def normalise(text: str) -> str:
    """The form two words are compared in: edges stripped, case folded."""
    return strip_edges(text).casefold()


def parse_response(text: str, max_chars: int) -> str:
    """A legal one-word reply, as said (edges stripped), or ParseError saying why not."""
    word = strip_edges(text)
    if not word:
        raise ParseError("the reply had no word in it; reply with exactly one word")
    if any(c.isspace() for c in word):
        n = len(word.split())
        raise ParseError(f"the reply has {n} words; reply with exactly one word, no spaces")
    if not _WORD.fullmatch(word):
        raise ParseError("a word may contain only letters, digits, hyphens and apostrophes")
    if len(word) > max_chars:
        raise ParseError(f"the word is longer than {max_chars} characters")
    return word


def same_word(a: str, b: str) -> bool:
    return normalise(a) == normalise(b)


# --- votes ---------------------------------------------------------------------------

def parse_vote(text: str, num_players: int, allowed: Iterable[int] | None = None) -> int:
    """A player number from "3", "Player 3", "P3", "#3." ...; ParseError otherwise."""
    m = _VOTE.fullmatch(strip_edges(text))
    if m is None:
        raise ParseError(f"reply with one player number from 1 to {num_players}, nothing else")
    seat = int(m.group(1))
    if not 1 <= seat <= num_players:
        raise ParseError(f"there is no Player {seat}; the players are 1 to {num_players}")
    if allowed is not None:
        choices = sorted(set(allowed))
        if seat not in choices:
            listed = ", ".join(str(s) for s in choices)
            raise ParseError(f"Player {seat} is not among the tied players ({listed})")
    return seat


# The tally and the top of it are the kit's (games/kit/votes.py), shared by every game.
tally = votes.tally
top_seats = votes.leaders


# --- the second chance -----------------------------------------------------------------

def parse_guess(text: str, words: Sequence[str]) -> str:
    """The card word a second-chance reply names.

    Case, quotes and surrounding punctuation do not matter ("JUNGLE!" names jungle). A
    longer reply counts when exactly one card word occurs in it as a whole word ("I think
    it is jungle"); none, or two different ones, is a ParseError and earns a re-ask.
    """
    by_key = {normalise(w): w for w in words}
    key = normalise(text)
    if key in by_key:
        return by_key[key]
    named = {by_key[t] for t in (m.casefold() for m in _TOKEN.findall(
        text.translate(_APOSTROPHES))) if t in by_key}
    if len(named) == 1:
        return named.pop()
    if named:
        listed = ", ".join(sorted(named))
        raise ParseError(f"the reply names {len(named)} words ({listed}); name only one")
    raise ParseError("the reply names none of the possible secret words; reply with one of them")


# --- outcomes --------------------------------------------------------------------------

def outcome_of(accused: int | None, chameleon: int, guess_correct: bool | None) -> Outcome:
    """`accused` is None when a tie left nobody accused (tie_rule chameleon_wins)."""
    if accused != chameleon:
        return "MisidentifiedLoss"
    if guess_correct is None:
        raise ValueError("an identified chameleon's game needs the second-chance result")
    return "IdentifiedLoss" if guess_correct else "IdentifiedWin"


def winners(outcome: str, chameleon: int, seats: Iterable[int]) -> list[int]:
    if outcome == FAIL:
        return []
    if outcome == IDENTIFIED_WIN:
        return sorted(s for s in seats if s != chameleon)
    return [chameleon]


def placements(outcome: str, chameleon: int, seats: Iterable[int]) -> dict[int, int]:
    """Competition ranks, as every game places (1, 1, 3, ...): the winning side 1st, the
    losing side after all the winners (the chameleon beaten by N-1 non-chameleons is Nth;
    the non-chameleons beaten by the chameleon are 2nd). A Fail game has no winner: every
    seat is placed 1st (a tie), so ratings that use it move nobody apart; its summary says
    `valid: false` so a rating can also skip it."""
    all_seats = sorted(seats)
    if outcome == FAIL:
        return dict.fromkeys(all_seats, 1)
    won = set(winners(outcome, chameleon, all_seats))
    return {s: 1 if s in won else 1 + len(won) for s in all_seats}


def role_of(seat: int, chameleon: int) -> Role:
    return "chameleon" if seat == chameleon else "non-chameleon"


# --- setup -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Deal:
    """Everything chance decides before the first word."""

    category: str
    words: tuple[str, ...]
    chameleon: int
    secret: str
    dealer: int
    order: tuple[int, ...]


def speaking_order(rng: Rng, seats: Iterable[int]) -> tuple[int, ...]:
    """A uniform permutation drawn one `choice` at a time from the seats left, ascending,
    so a spec scenario can force it; the last seat is not a draw."""
    left = sorted(seats)
    order: list[int] = []
    while len(left) > 1:
        pick = rng.choice(left)
        order.append(pick)
        left.remove(pick)
    return (*order, *left)


def deal(rng: Rng, cards: Sequence[tuple[str, Sequence[str]]], num_players: int,
         k: int) -> Deal:
    """Draw, in this order: the card (by category, ascending), the K words when the card
    has more than K (kept in card order), the chameleon seat, the secret word, the dealer
    seat, and the speaking order. The dealer is drawn under every tie rule, so a seed
    gives the same game whichever tie rule is set."""
    eligible = sorted((c for c in cards if len(c[1]) >= k), key=lambda c: c[0].casefold())
    if not eligible:
        raise ValueError(f"no card has {k} words")
    by_name = {c[0]: c for c in eligible}
    category = rng.choice([c[0] for c in eligible])
    words = list(by_name[category][1])
    if len(words) > k:
        keep = set(rng.sample(range(len(words)), k))
        words = [w for i, w in enumerate(words) if i in keep]
    seats = list(range(1, num_players + 1))
    chameleon = rng.choice(seats)
    secret = rng.choice(words)
    dealer = rng.choice(seats)
    order = speaking_order(rng, seats)
    return Deal(category, tuple(words), chameleon, secret, dealer, order)


def trivial_win_probability(num_players: int, k: int) -> float:
    """The paper's closed form for trivial concealing play: the non-chameleons win only
    when the chameleon sits in seat 1 (prob. 1/N) and then guesses wrong ((K-1)/K)."""
    return (1 / num_players) * (k - 1) / k
