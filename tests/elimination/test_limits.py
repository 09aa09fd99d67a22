"""Word limits (docs/rules.md §2, issue 12): no message event ever holds more words than its
`limit_words`, whatever the players send, under both policies; every cut is marked and
counted in `over_limit_messages`."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stille_post.games.elimination.rules import apply_limit
from stille_post.games.kit.framing import word_count

from .conftest import play

MESSAGES = ("public_message", "private_message", "tie_break_message", "final_message")


@pytest.mark.parametrize("policy", ["truncate", "reask"])
def test_no_message_over_its_limit(policy: str) -> None:
    cuts = 0
    for seed in range(12):
        opts = {"limit_policy": policy, "public_words": 20, "private_words": "15,10,5",
                "tie_break_words": 8, "final_words": 12}
        outcome, events, _ = play(["chaos"] * 6, seed, {"num_players": 6, **opts})
        marked = 0
        for e in events:
            if e.type not in MESSAGES:
                continue
            d = e.data
            assert word_count(d["text"]) == d["words"] <= d["limit_words"], (seed, d)
            if "truncated_from_words" in d:
                assert d["truncated_from_words"] > d["limit_words"]
                marked += 1
        assert outcome.summary.details["over_limit_messages"] == marked
        cuts += marked
    assert cuts > 20  # the chaos seats do run over


@settings(deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab [] \n\tPlayer1GAMEMSTR:é")), max_size=300),
       limit=st.integers(1, 40))
def test_apply_limit_never_exceeds(text: str, limit: int) -> None:
    out = apply_limit(text, limit, 2000)
    assert word_count(out.text) <= limit
    if out.truncated_from_words is None:
        assert out.text.split() == apply_limit(text, 10_000, 2000).text.split()
