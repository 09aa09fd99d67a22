"""The one-time loads of Connections, made faster, give exactly what the plain code gave:
the word list (its header hash names it in every transcript), its text, and the semantic
bots' vectors (a rounding difference could change a clue)."""

from __future__ import annotations

import math

import numpy as np
from wordfreq import get_frequency_dict

from stille_post.games.connections import embeddings
from stille_post.games.connections.bots import most_frequent
from stille_post.games.connections.dictionary import (
    build,
    from_text,
    normalise,
    wordfreq_english,
)


def test_wordfreq_list_equals_the_plain_build_from_the_frequency_dict() -> None:
    freqs = get_frequency_dict("en", wordlist="large")
    plain = build(((w, math.log10(f) + 9) for w, f in freqs.items() if f > 0),
                  source="plain", min_length=3)
    fast = wordfreq_english()
    assert fast.words == plain.words and fast.zipf == plain.zipf


def test_a_users_list_merges_case_and_keeps_the_larger_frequency() -> None:
    d = from_text("Apple 10\napple 1000\n'Pear.' 5\ndon't 7\nx2 3\nfig\n# note\n",
                  source="mine", min_length=3)
    assert d.words == ("apple", "fig", "pear")
    assert d.zipf == {"apple": 3.0, "fig": 3.0, "pear": math.log10(5)}
    assert normalise("  **Cat**. ") == "cat"


def test_the_lists_text_is_one_formatted_line_per_word() -> None:
    d = from_text("b 0.5\na 123.456\nc\nd 1e-300\n", source="mine", min_length=1)
    assert d.text() == "".join(f"{w}\t{d.zipf[w]:.2f}\n" for w in d.words)


def _one_at_a_time(emb: embeddings.Embeddings, text: str) -> np.ndarray:
    enc = emb.tokenizer.encode_batch([text], add_special_tokens=False)[0]
    ids = [i for i in enc.ids if 0 <= i < emb.matrix.shape[0]]
    v = emb.matrix[ids].mean(axis=0) if ids else np.zeros(embeddings.DIM, np.float32)
    norm = float(np.linalg.norm(v))
    return (v / norm if norm > 0 else v).astype(np.float32)


def test_batched_vectors_equal_one_text_at_a_time_bit_for_bit() -> None:
    emb = embeddings.load()
    words = list(most_frequent(wordfreq_english(), 3000))[::10]  # 1 to 5+ tokens each
    texts = [*words, "", "two clue words", "ünïcødé", "?!", "a" * 200, words[0]]
    fresh = embeddings.Embeddings(emb.matrix, emb.tokenizer)
    got = fresh.embed(texts)
    want = np.stack([_one_at_a_time(emb, t) for t in texts])
    assert got.dtype == np.float32 and np.array_equal(got, want)
