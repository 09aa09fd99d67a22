"""The loopback server of `peer --real` (benchmarks/loopback.py, model "chameleon") answers
each harness's requests as the simulated model of `peer` does, from the wire."""

from __future__ import annotations

import asyncio
from typing import Any

from benchmarks.bench_peer import SEATS
from benchmarks.simchameleon import ChameleonSimProvider, Meter, answer_for, chatarena_answer
from stille_post.core.rng import make_rng
from stille_post.games import get_game
from stille_post.games.kit.setup import prepare
from stille_post.players.llm import LLMPlayer
from stille_post.providers.base import ChatRequest, Completion
from stille_post.providers.openai_api import to_openai_messages


class OverTheWire(ChameleonSimProvider):
    """The in-memory simulated model, checking at every call that the server's reading of
    the same request, as our OpenAI adapter puts it on the wire, answers the same."""

    checked = 0

    async def complete(self, request: ChatRequest) -> Completion:
        answer = await super().complete(request)
        assert answer_for(to_openai_messages(request)) == answer.text
        OverTheWire.checked += 1
        return answer


def test_the_server_answers_our_requests_as_the_simulated_model() -> None:
    game = get_game("chameleon")

    def factory(spec: str, prompts: Any) -> Any:
        return LLMPlayer(OverTheWire(0.0, Meter()), prompts, name=spec)

    async def run() -> None:
        for seed in range(12):  # ties, second chances and caught chameleons among them
            prepared = prepare(game, seed=seed, rng=make_rng(seed), players=list(SEATS),
                               options={"words": 8}, llm_factory=factory)
            await prepared.play(None)

    asyncio.run(run())
    assert OverTheWire.checked >= 12 * 8


def test_chatarenas_requests_get_chatarenas_answers() -> None:
    """ChatArena's OpenAIChat names the agent in its system prompt."""
    system = ("You are a helpful assistant.\nRules.\nThe messages always end with the token "
              "<EOS>.\n\nYour name is Player 3.\n\nYour role:You are Player 3.")
    for last in ("Now vote which of the players is the chameleon.",
                 "You can guess the secret code now.", "Now you speak, Player 3.<EOS>"):
        messages = [{"role": "system", "content": system},
                    {"role": "user", "content": "[Moderator]: The game starts."},
                    {"role": "user", "content": last}]
        expected = chatarena_answer("Player 3", [m["content"] for m in messages])
        assert answer_for(messages) == expected
    assert answer_for([messages[0], {"role": "user", "content": "Now vote which"}]) == "Player 4"
