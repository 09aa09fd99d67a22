"""Abstract response spaces: what a theory seat may say instead of a word.

A response still travels as one line of text (the engine, transcripts and viewer are
unchanged); the space parses it into its canonical spelling or raises ParseError, which
the engine turns into a re-ask and then a Fail as for any bad word.
- tokens:  one of R_C, spelled "t0", "t1", ... (case and surrounding spaces ignored);
- subsets: a non-empty subset of the card, its words joined by "+" and written in card
  order ("w2+w5"), or "null" (π^amb's R_C = 2^{W_C} ∪ {null}).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stille_post.core.errors import ParseError
from stille_post.games.chameleon.theory.model import NULL, Theory, tokens


@dataclass(frozen=True)
class TokenSpace:
    tokens: tuple[str, ...]

    def parse(self, text: str) -> str:
        key = text.strip().casefold()
        if key in self.tokens:
            return key
        raise ParseError(f"reply with one token of R_C: {', '.join(self.tokens)}")


@dataclass(frozen=True)
class SubsetSpace:
    words: tuple[str, ...]

    def parse(self, text: str) -> str:
        key = text.strip().casefold()
        if key == NULL:
            return NULL
        parts = key.split("+")
        index = {w: i for i, w in enumerate(self.words)}
        unknown = [p for p in parts if p not in index]
        if unknown:
            raise ParseError(f"{unknown[0]!r} is not a card word; reply with card words "
                             "joined by '+' (w1+w3) or 'null'")
        if len(set(parts)) != len(parts):
            raise ParseError("a subset names each word once")
        return encode(sorted(parts, key=index.__getitem__))

    def decode(self, response: str) -> frozenset[str] | None:
        return None if response == NULL else frozenset(response.split("+"))


def encode(words: Sequence[str]) -> str:
    return "+".join(words) if words else NULL


ResponseSpace = TokenSpace | SubsetSpace


def space_of(t: Theory) -> ResponseSpace:
    return SubsetSpace(t.words) if t.kind == "amb" else TokenSpace(tokens(t))
