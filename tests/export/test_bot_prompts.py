"""For a bot's seat, the exported messages are what a model in that seat would have been
sent: the same game played again with a model in the bot's seat, answering exactly as
the bot did, sends exactly the exported requests (and plays the same game)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import Transcript
from stille_post.export import ExportRequest, request_of, run_export
from stille_post.players.base import PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.providers.base import ChatRequest, Completion, ToolCall, Usage
from stille_post.session import play_game

pq = pytest.importorskip("pyarrow.parquet")

# (game, seed, options, the bot seat a model takes over)
CASES = [
    ("chameleon", 4, {}, 2),
    ("elimination", 4, {"num_players": 4, "private_subrounds": 1}, 3),
    ("connections", 4, {"word": "goldfish", "max_attempts": 2}, 2),
    # Stille Post gives a model seat its own model as identity: pin every identity, and
    # the model in seat 1 is the one the bot's seat had.
    ("stille-post", 4, {"max_rounds": 2}, 1),
]


class AnswersAsRecorded:
    """A provider answering with a seat's recorded replies, in order, keeping each
    request it is sent."""

    def __init__(self, replies: Sequence[dict[str, Any]]) -> None:
        self.replies = list(replies)
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> Completion:
        self.requests.append(request)
        reply = self.replies[len(self.requests) - 1]
        calls = [ToolCall(c["name"], c["arguments"], id=c.get("id"))
                 for c in reply.get("tool_calls", [])]
        return Completion(reply["text"], calls, Usage(), "")


def _shape(r: ChatRequest) -> tuple[Any, ...]:
    return (r.system, r.tool_choice, [(t.name, t.parameters) for t in r.tools],
            [(m.role, m.content, m.tool_call_id,
              [(c.name, c.arguments, c.id) for c in m.tool_calls]) for m in r.messages])


@pytest.mark.parametrize("game, seed, options, seat", CASES, ids=[c[0] for c in CASES])
def test_a_bot_seat_gets_the_prompts_a_model_in_it_is_sent(
        tmp_path: Path, game: str, seed: int, options: dict[str, Any], seat: int) -> None:
    bots = tmp_path / "bots.jsonl"
    asyncio.run(play_game(game, seed=seed, out=bots, options=options))
    header = Transcript.load(bots).header
    if game == "stille-post":  # the same game with every identity pinned
        options = {**options, "pinned": {s: row["model"] for s, row in header["seats"].items()}}
        bots.unlink()
        asyncio.run(play_game(game, seed=seed, out=bots, options=options))
        header = Transcript.load(bots).header
    t = Transcript.load(bots)
    replies = [a for e in t.events if e.type == "decision" and e.actor == seat
               for a in e.data["attempts"]]
    provider = AnswersAsRecorded(replies)

    def factory(spec: str, prompts: PromptBook) -> LLMPlayer:
        return LLMPlayer(provider, prompts, name=spec)

    players = [str(row["player"]) for _, row in sorted(t.seats.items())]
    model = header["seats"][str(seat)].get("model") or "gpt-5-mini"
    players[seat - 1] = f"openai:{model}"
    with_model = tmp_path / "model.jsonl"
    asyncio.run(play_game(game, seed=seed, out=with_model, players=players, options=options,
                          llm_factory=factory))
    # The same game: every event but the decision records, which now also carry what the
    # provider reported (tokens, model name).
    played = Transcript.load(with_model)
    assert [(e.type, dict(e.data)) for e in played.events if e.type != "decision"] == \
        [(e.type, dict(e.data)) for e in t.events if e.type != "decision"]
    assert len(provider.requests) == len(replies)
    # The export of the bots' game: that seat's requests, ask by ask.
    out = tmp_path / "out"
    run_export(ExportRequest((bots,), out))
    rows = [r for r in pq.read_table(out / "data").to_pylist() if r["seat"] == seat]
    exported = [request_of(r, ask) for r in sorted(rows, key=lambda r: r["decision"])
                for ask in range(r["asks"])]
    assert len(exported) == len(provider.requests) > 0
    for got, sent in zip(exported, provider.requests, strict=True):
        assert got is not None
        assert _shape(got) == _shape(sent)
