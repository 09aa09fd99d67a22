"""An agent's model usage, as the agent seat passes it on: unknown calls stay marked
(a capped run counts them by an estimate), and a usage an isolated agent sends back is
read within the bounds of any server's (core/usage.py)."""

from __future__ import annotations

from stille_post.core.usage import Usage
from stille_post.players.agent_box import completion_of
from stille_post.players.agents import _since


def test_the_agent_s_share_of_its_model_keeps_unknown_calls() -> None:
    before = Usage(10, 2, 0, 1)
    after = Usage(25, 9, 4, 3)
    assert _since(before, after) == Usage(15, 7, 4, 2)


def test_an_isolated_agent_s_usage_is_read_within_bounds() -> None:
    def usage(row: object) -> Usage:
        return completion_of({"text": "hi", "usage": row}).usage

    assert usage({"input_tokens": 12, "output_tokens": 3}) == Usage(12, 3, 0)
    for bad in ({"input_tokens": 10**30, "output_tokens": 1},
                {"input_tokens": -5, "output_tokens": 1},
                {"input_tokens": 1.5, "output_tokens": 1}, [1, 2], "many"):
        assert usage(bad) == Usage(), bad
