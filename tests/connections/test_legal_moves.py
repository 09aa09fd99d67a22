"""Connections' legal-move schema for a structured seat (`prompts.legal_moves`): the word
holds the revealed prefix and a length some dictionary word with it has, in the pattern
itself (llama.cpp's grammar reads only the pattern of a string that has one)."""

from __future__ import annotations

import re

from stille_post.games.connections.dictionary import from_text
from stille_post.games.connections.prompts import prefix_pattern, word_lengths

WORDS = "\n".join(["bat", "bath", "bathtub", "baths", "be", "beach", "bead", "beautiful",
                   "cat", "catalogue"])
DICT = from_text(WORDS, source="test", min_length=3)


class _Obs:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.dictionary = DICT


def test_the_word_pattern_admits_every_dictionary_word_with_the_prefix_and_no_length_else(
        ) -> None:
    for prefix in ("b", "ba", "bea", "c"):
        lengths = word_lengths(_Obs(prefix))  # type: ignore[arg-type]
        assert lengths is not None
        pattern = re.compile(prefix_pattern(prefix, lengths))
        words = DICT.with_prefix(prefix)
        assert all(pattern.fullmatch(w) and pattern.fullmatch(w.upper()) for w in words)
        shortest, longest = min(map(len, words)), max(map(len, words))
        assert lengths == (shortest, longest)
        assert not pattern.fullmatch(prefix.upper())  # the prefix alone (models wrote "B")
        assert not pattern.fullmatch(prefix + "x" * (longest - len(prefix) + 1))
        assert not pattern.fullmatch("a" + prefix[1:] + "bcdef")  # off the prefix


def test_without_a_dictionary_word_the_pattern_is_the_prefix_only() -> None:
    assert word_lengths(_Obs("zz")) is None  # type: ignore[arg-type]
    assert prefix_pattern("zz", None) == "^[zZ][zZ][A-Za-z]*$"
    assert prefix_pattern("b", (3, 9)) == "^[bB][A-Za-z]{2,8}$"
