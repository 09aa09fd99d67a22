"""The baseline bots do what docs/rules.md §3 says, in whichever role they are dealt."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from stille_post.games.chameleon.rules import normalise

from .conftest import play_many


def _games(chameleon: str, others: str,
           n: int = 100) -> Iterator[tuple[dict[str, Any], dict[int, str]]]:
    for t in play_many(range(n), {"chameleon": chameleon, "others": others,
                                  "num_players": 4}):
        s = t.summary.flat()
        yield s, {int(k): v for k, v in s["responses"].items()}


def test_heuristic_never_names_the_secret_word() -> None:
    for s, words in _games("heuristic", "heuristic"):
        for seat, word in words.items():
            if seat != s["chameleon"]:
                assert normalise(word) != normalise(s["secret"]), s


def test_revealing_says_the_secret_and_trivial_says_pass() -> None:
    for s, words in _games("trivial", "revealing"):
        for seat, word in words.items():
            assert word == ("pass" if seat == s["chameleon"] else s["secret"])


def test_copycat_repeats_the_most_recent_word() -> None:
    for s, words in _games("copycat", "heuristic"):
        order, cham = s["order"], s["chameleon"]
        i = order.index(cham)
        if i > 0:
            assert words[cham] == words[order[i - 1]]


def test_trivial_votes_for_seat_1_in_any_role() -> None:
    for s, _ in _games("trivial", "trivial", 100):
        assert set(s["votes"].values()) == {1}


def test_every_baseline_game_is_valid() -> None:
    for cham in ("trivial", "revealing", "copycat", "heuristic"):
        for others in ("trivial", "revealing", "copycat", "heuristic"):
            for s, _ in _games(cham, others, 25):
                assert s["valid"], (cham, others, s)
