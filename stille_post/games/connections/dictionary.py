"""The dictionary: which words exist, and how common each one is.

The default is wordfreq's English "large" list (wordfreq 3.x: code Apache-2.0, word
data CC-BY-SA 4.0; it ships its data inside the wheel, so nothing is fetched at run
time). A user's own list (`--dictionary FILE`) replaces it: one word per line, an
optional second column with a frequency (any positive number; a bigger one is more
common), `#` comments.

Normalisation is the same for every word that enters the game (dictionary entries,
the setter's word, clue words, guesses): casefold, trim surrounding spaces and
punctuation, then the word must be letters only and at least `min_length` long. An
entry with a letter-free inside ("don't", "e-mail", "x2") is dropped, not rewritten:
rewriting would invent words ("dont") the list never had.
"""

from __future__ import annotations

import bisect
import hashlib
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

WORDFREQ_SOURCE = "wordfreq:en:large"
# Punctuation a model wraps a one-word answer in ("Xenophobia.", "'comma'", "**cat**").
_TRIM = " \t\r\n\"'`*_.,;:!?()[]{}<>«»“”‘’"


def normalise(text: str) -> str:
    """The canonical form of one word as a player wrote it (may still be invalid)."""
    return text.strip().strip(_TRIM).casefold()


def is_word_shape(word: str, min_length: int) -> bool:
    return len(word) >= min_length and word.isalpha()


@dataclass(frozen=True)
class Dictionary:
    """Sorted words with a Zipf-scale frequency each (log10 of uses per billion words)."""

    words: tuple[str, ...]  # sorted, unique, normalised
    zipf: dict[str, float] = field(compare=False)
    source: str = ""
    min_length: int = 3

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and word in self.zipf

    def __len__(self) -> int:
        return len(self.words)

    def __iter__(self) -> Iterator[str]:
        return iter(self.words)

    def __hash__(self) -> int:  # identity: one object per loaded list, cached per object
        return id(self)

    def text(self) -> str:
        """The list as a file, for the transcript header's hash. Each distinct frequency
        is formatted once (wordfreq's list has 545 for 291,689 words)."""
        zipf = self.zipf
        shown = {z: f"\t{z:.2f}\n" for z in set(zipf.values())}
        return "".join([w + shown[zipf[w]] for w in self.words])

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text().encode("utf-8")).hexdigest()

    def with_prefix(self, prefix: str) -> tuple[str, ...]:
        """Every word that starts with `prefix`, in alphabetical order."""
        return _with_prefix(self, prefix)

    def by_frequency(self, prefix: str) -> tuple[str, ...]:
        """The words with `prefix`, most common first (ties alphabetical)."""
        return _by_frequency(self, prefix)

    def frequency(self, word: str) -> float:
        return self.zipf.get(word, 0.0)


@lru_cache(maxsize=4096)
def _with_prefix(d: Dictionary, prefix: str) -> tuple[str, ...]:
    # Cached: bots ask for the same prefix on every guess of an attempt, and the slice is
    # a copy (thousands of words for a short prefix).
    lo = bisect.bisect_left(d.words, prefix)
    hi = bisect.bisect_left(d.words, prefix + "\U0010ffff")
    return d.words[lo:hi]


@lru_cache(maxsize=4096)
def _by_frequency(d: Dictionary, prefix: str) -> tuple[str, ...]:
    return tuple(sorted(d.with_prefix(prefix), key=lambda w: (-d.zipf[w], w)))


def build(entries: Iterable[tuple[str, float]], *, source: str, min_length: int) -> Dictionary:
    zipf: dict[str, float] = {}
    _add_words(zipf, entries, min_length)
    return Dictionary(tuple(sorted(zipf)), zipf, source, min_length)


def _add_words(zipf: dict[str, float], entries: Iterable[tuple[str, float]],
               min_length: int) -> None:
    for raw, freq in entries:
        w = normalise(raw)
        if is_word_shape(w, min_length):
            # "Apple" and "apple" are one word: keep the larger frequency.
            old = zipf.get(w)
            if old is None or freq > old:
                zipf[w] = freq


def parse_word_list(text: str) -> list[tuple[str, float]]:
    """A user's list: `word [frequency]` per line. Without a frequency, the words of the
    list are equally common (zipf 3.0, a mid-range value)."""
    out: list[tuple[str, float]] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        zipf = 3.0
        if len(parts) > 1:
            try:
                value = float(parts[1])
            except ValueError:
                value = 0.0
            # Only the order matters to the bots: any positive scale will do.
            zipf = math.log10(value) if value > 0 else 0.0
        out.append((parts[0], zipf))
    return out


@lru_cache(maxsize=8)
def from_text(text: str, *, source: str, min_length: int) -> Dictionary:
    """A user's list (cached: a tournament loads the same file for every game)."""
    return build(parse_word_list(text), source=source, min_length=min_length)


@lru_cache(maxsize=4)
def wordfreq_english(min_length: int = 3, min_zipf: float = 0.0) -> Dictionary:
    """wordfreq's English list, loaded once per process (it takes a noticeable part of a
    game's start): its msgpack data is in the installed wheel."""
    from wordfreq import cB_to_freq, get_frequency_list

    # What get_frequency_dict would give ({word: cB_to_freq(-bucket)}: no word is in two
    # buckets), on the Zipf scale, with the logarithm taken once per bucket, not per word.
    zipf: dict[str, float] = {}
    for index, bucket in enumerate(get_frequency_list("en", wordlist="large")):
        if bucket:
            z = math.log10(cB_to_freq(-index)) + 9
            _add_words(zipf, ((w, z) for w in bucket), min_length)
    d = Dictionary(tuple(sorted(zipf)), zipf, WORDFREQ_SOURCE, min_length)
    if min_zipf > 0:
        keep = {w: z for w, z in d.zipf.items() if z >= min_zipf}
        d = Dictionary(tuple(sorted(keep)), keep, d.source, min_length)
    return d


def wordfreq_version() -> str:
    from importlib.metadata import version

    return version("wordfreq")
