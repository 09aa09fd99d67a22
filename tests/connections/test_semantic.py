"""The semantic bot plays the game for real: with a `frequency` setter, two `semantic`
guessers make far more connections per attempt than two `frequency` guessers.

Bound: each side's 95% Wilson interval on connections per attempt, over the same seeds
and words; the intervals must not overlap. Measured (README): semantic ~0.88,
frequency ~0.10 per attempt.
"""

from __future__ import annotations

import asyncio

from tests.connections.harness import prepared, wilson

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


def test_semantic_guessers_beat_frequency_guessers() -> None:
    sem = rate("semantic", range(6))
    freq = rate("frequency", range(6))
    sem_lo, _ = wilson(*sem, 1.96)
    _, freq_hi = wilson(*freq, 1.96)
    assert freq[1] >= 40 and sem[1] >= 20
    assert sem_lo > freq_hi, (sem, freq)
