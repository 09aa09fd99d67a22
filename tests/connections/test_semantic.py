"""The semantic bot plays the game for real: with a `frequency` setter, two `semantic`
guessers make far more connections per attempt than two `frequency` guessers.

Bound: each side's 95% Wilson interval on connections per attempt, over the same seeds
and words; the intervals must not overlap. Measured (6 seeds, 10 attempts): semantic
39 of 49 attempts (0.80, [0.66, 0.89]), frequency 6 of 60 (0.10, [0.05, 0.20]).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.connections.harness import prepared, wilson

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

WORDS = ["xenophobia", "kaleidoscope", "goldfish", "precaution"]


def rate(guesser: str, seeds: range) -> tuple[int, int]:
    conn = att = 0
    for seed in seeds:
        word = WORDS[seed % len(WORDS)]
        game = prepared(["frequency", guesser, guesser], seed, word=word, max_attempts=10)
        d = asyncio.run(game.play(None)).summary.details
        conn += int(d["connections"])
        att += int(d["attempts"])
    return conn, att


@pytest.mark.slow
def test_semantic_guessers_beat_frequency_guessers() -> None:
    sem = rate("semantic", range(6))
    freq = rate("frequency", range(6))
    sem_lo, _ = wilson(*sem, 1.96)
    _, freq_hi = wilson(*freq, 1.96)
    assert freq[1] >= 40 and sem[1] >= 20
    assert sem_lo > freq_hi, (sem, freq)


@pytest.mark.slow
def test_most_frequent_equals_sorting_by_frequency_then_word() -> None:
    """The clue vocabulary's fast selection is the reference sort, ties included: on
    wordfreq's list (ties abound at the rare end) and on a hand-made list of ties."""
    from stille_post.games.connections.bots import most_frequent
    from stille_post.games.connections.dictionary import build, wordfreq_english

    def reference(d: Any, k: int) -> tuple[str, ...]:
        return tuple(sorted(d.words, key=lambda w: (-d.zipf[w], w))[:k])

    d = wordfreq_english()
    assert most_frequent(d, 20_000) == reference(d, 20_000)
    assert most_frequent(d, len(d.words)) == reference(d, len(d.words))
    ties = build([("pear", 3.0), ("apple", 3.0), ("fig", 5.0), ("kiwi", 3.0), ("date", 1.0)],
                 source="test", min_length=3)
    assert most_frequent(ties, 4) == ("fig", "apple", "kiwi", "pear")
