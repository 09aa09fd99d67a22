"""Connections' rules as pure functions (docs/rules.md §4; rulings in README.md).

No I/O, no rng, no state: the engine calls these with what it knows and applies the
result. Words are compared in their normalised form (dictionary.normalise).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from stille_post.games.connections.dictionary import Dictionary, normalise

SETTER, GUESSER = "setter", "guesser"

# The three outcomes of an attempt, named as in the paper's Table 1.
CONNECTION: Literal["connection"] = "connection"
BLOCKED: Literal["setter_blocked"] = "setter_blocked"
WRONG: Literal["guesser_wrong"] = "guesser_wrong"
AttemptOutcome = Literal["connection", "setter_blocked", "guesser_wrong"]

# How a game ends.
GUESSERS_WIN, SETTER_WINS = "guessers_win", "setter_wins"
ABORTED, VOID = "aborted", "void"


def role_of(seat: int, setter: int = 1) -> str:
    return SETTER if seat == setter else GUESSER


def clue_giver(attempt: int, guessers: Sequence[int]) -> int:
    """Attempt 1 is the first guesser's, then round-robin in seat order (ruling: the
    rotation moves on every attempt, whatever its outcome)."""
    return guessers[(attempt - 1) % len(guessers)]


def initial_prefix(secret: str) -> str:
    return secret[:1]


def next_prefix(secret: str, prefix: str) -> str:
    """The prefix after a Connection: one more letter, or the same prefix once the whole
    secret is revealed (there is no letter left to reveal)."""
    return secret[: min(len(secret), len(prefix) + 1)]


def fully_revealed(secret: str, prefix: str) -> bool:
    """Every letter of the secret is revealed. Play goes on (docs/rules.md §4): every word must
    now start with the whole secret, so the legal words are the secret itself and the
    longer words that start with it; the secret is always one of them (it is never used
    or blocked: see `excluded` and `score`), so a clue-giver always has a legal word."""
    return prefix == secret


def excluded(blocked: Collection[str], used: Collection[str], secret: str | None) -> set[str]:
    """Words no clue word or guess may be. The secret word is never excluded as used
    (ruling): a Guesser Wrong on it would otherwise make the game unwinnable."""
    out = set(blocked) | set(used)
    if secret is not None and secret not in blocked:
        out.discard(secret)
    return out


def word_error(raw: str, *, prefix: str, dictionary: Dictionary, blocked: Collection[str],
               used: Collection[str], secret: str | None) -> str | None:
    """Why `raw` may not be played as a clue word or a guess now, or None. The checks run
    in the order of the paper's appendix B corrections: prefix, then the lists. Each
    reason ends with what to do instead: a small model given only what was wrong repeats
    the same word (docs/adherence.md)."""
    why = _why_not(raw, prefix, dictionary, blocked, used, secret)
    return None if why is None else f"{why}: give another word that starts with {prefix.upper()}"


def _why_not(raw: str, prefix: str, dictionary: Dictionary, blocked: Collection[str],
             used: Collection[str], secret: str | None) -> str | None:
    word = normalise(raw)
    if not word:
        return "you gave no word"
    if not word.isalpha() or " " in word:
        return f"{raw.strip()[:40]!r} is not a single word of letters"
    if not word.startswith(prefix):
        return f"your word {word!r} does not start with {prefix.upper()!r}"
    if word not in dictionary:
        return f"{word!r} is not in the game's dictionary"
    if word in blocked:
        return f"{word!r} is blocked"
    if word in excluded((), used, secret):
        return f"{word!r} was used before"
    return None


def secret_error(raw: str, dictionary: Dictionary) -> str | None:
    word = normalise(raw)
    if not word:
        return "you gave no word"
    if not word.isalpha():
        return f"{raw.strip()[:40]!r} is not a single word of letters"
    if len(word) < dictionary.min_length:
        return f"{word!r} is shorter than {dictionary.min_length} letters"
    if word not in dictionary:
        return f"{word!r} is not in the game's dictionary"
    return None


def clue_error(clue: str, word: str) -> str | None:
    """A clue must say something and must not contain its word. The check is on letters
    only, casefolded, so "C-A-T" or "c a t" does not slip through (ruling: strict, at the
    price of refusing an innocent clue such as "educated" for "cat")."""
    letters = "".join(ch for ch in clue.casefold() if ch.isalpha())
    if not letters:
        return "your clue is empty"
    if normalise(word) in letters:
        return "your clue contains your word: describe it without writing it"
    return None


@dataclass(frozen=True)
class Scored:
    outcome: AttemptOutcome
    connectors: tuple[int, ...]  # the guessers whose guess was the clue word
    setter_matched: bool
    win: bool  # the guessers win with this attempt


def score(word: str, setter_guess: str | None, guesses: Mapping[int, str | None],
          secret: str) -> Scored:
    """docs/rules.md §4 step 3. `guesses` are the other guessers' (the clue-giver excluded);
    a missing guess (forfeit) matches nothing.

    The guessers win only with a Connection whose clue word IS the secret (docs/rules.md §4):
    a Connection that reveals the secret's last letter with another word (`stumble` for
    `stumbled`) does not end the game.

    Ruling: when the clue word IS the secret word and the setter also named it, it is not
    a block (the setter cannot block its own word): a guesser who named it makes the
    Connection that wins; if none did, it is a Guesser Wrong."""
    setter_matched = setter_guess is not None and setter_guess == word
    connectors = tuple(sorted(s for s, g in guesses.items() if g is not None and g == word))
    if setter_matched and word != secret:
        return Scored(BLOCKED, connectors, True, False)
    if connectors:
        return Scored(CONNECTION, connectors, setter_matched, word == secret)
    return Scored(WRONG, (), setter_matched, False)


def winners(result: str, setter: int, guessers: Sequence[int]) -> list[int]:
    if result == GUESSERS_WIN:
        return list(guessers)
    if result == SETTER_WINS:
        return [setter]
    return []


def placements(result: str, setter: int, guessers: Sequence[int]) -> dict[int, int]:
    won = set(winners(result, setter, guessers))
    seats = [setter, *guessers]
    if not won:
        return {s: 1 for s in seats}
    # Competition ranks, as every game places (1, 1, 3, ...): the losers share the place
    # after all the winners.
    return {s: 1 if s in won else 1 + len(won) for s in seats}
