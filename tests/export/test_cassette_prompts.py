"""The prompt must be the real one: for every recorded LLM game of every provider kind,
each exported decision's messages, sent through that provider's own adapter (the body
builder the game used), are a request body the cassette recorded, and together they are
every request the cassette recorded.

How: the committed transcript of each cassette game is exported; each LLM seat's row
becomes our `ChatRequest` again (`export.request_of`), and an `LLMPlayer` built by the
same factory `--replay` uses (the seat's own settings laid under it, as in the game)
sends it to the adapter under the cassette in replay mode, which matches method, host,
path and the JSON body (providers/recording.py). A request the cassette lacks is a
`ReplayMiss`; an interaction no exported ask asked for is left unplayed. The reply the
cassette answers must also be the exported reply.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.errors import GameAborted, ProviderError
from stille_post.export import ExportRequest, phase_of, reply_of, request_of, run_export
from stille_post.players.base import Decision
from stille_post.players.specs import LLM_KINDS
from stille_post.providers.base import ChatRequest
from tests.export.cassette_games import CASSETTES, CassetteGame, cassette_games

pq = pytest.importorskip("pyarrow.parquet")

GAMES = cassette_games()
# One game per provider kind (its Stille Post game, the quickest to load) runs in the
# fast suite, and one structured game (its requests carry legal-move schemas); the rest
# are `slow`.
FAST = {g.name for g in GAMES if g.cassette.stem == "game_4seat"} | {
    "openai-compatible/qwen-schema/stille-post"}


class FixedBook:
    """A PromptBook that renders whatever request it is given next."""

    def __init__(self) -> None:
        self.request: ChatRequest | None = None

    def render(self, decision: Decision[Any]) -> ChatRequest:
        assert self.request is not None
        return self.request


def test_every_provider_kind_has_a_recorded_game() -> None:
    """Every kind with HTTP cassettes (`inspect:` seats call Inspect's own models, which
    record nothing here)."""
    kinds = {p.name for p in CASSETTES.iterdir() if p.is_dir()}
    assert kinds == set(LLM_KINDS) - {"inspect"}
    assert {g.kind for g in GAMES} == kinds
    assert len(GAMES) >= 15


@pytest.mark.parametrize("game", [pytest.param(g, id=g.name, marks=() if g.name in FAST
                                               else pytest.mark.slow) for g in GAMES])
def test_exported_prompts_are_the_recorded_request_bodies(game: CassetteGame,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_export(ExportRequest((game.transcript,), out))
    assert not result.problems, (result.skipped, result.no_prompts)
    rows = pq.read_table(out / "data").to_pylist()
    specs = game.setup["players"]
    llm = [r for r in rows if r["player"].partition(":")[0] in LLM_KINDS]
    assert llm, "the game has LLM seats"
    asked, played = asyncio.run(_send(game, specs, llm))
    assert asked == sum(r["asks"] for r in llm)
    assert played, "every interaction of the cassette was asked for"


async def _send(game: CassetteGame, specs: list[str], rows: list[dict[str, Any]]
                ) -> tuple[int, bool]:
    from stille_post.cli.llm_seats import make_llm_factory
    from stille_post.providers.models import load_models, using_models
    from stille_post.providers.recording import cassette

    registry = load_models(None)
    asked = 0
    with using_models(registry), cassette(game.cassette, mode="replay") as cas:
        factory = make_llm_factory(replay=True, models=registry)
        books: dict[int, FixedBook] = {}
        players: dict[int, Any] = {}
        for row in rows:
            seat = row["seat"]
            if seat not in players:
                books[seat] = FixedBook()
                players[seat] = factory(specs[seat - 1], books[seat])
            for ask in range(row["asks"]):
                books[seat].request = request_of(row, ask)
                assert books[seat].request is not None, row["prompt_problem"]
                decision = Decision(row["game"], row["kind"], seat, None,
                                    generation=phase_of(row))
                want = reply_of(row, ask)
                asked += 1
                try:
                    got = await players[seat].decide(decision)
                except GameAborted as exc:  # a ReplayMiss: the body is not in the cassette
                    pytest.fail(f"{game.name}: seat {seat}, decision {row['decision']} "
                                f"({row['kind']}), ask {ask + 1}: {exc}")
                except ProviderError:
                    assert want is None, "a recorded reply, but the cassette failed"
                    continue
                assert want is not None
                assert got.text == want.text
                assert [(c.name, c.arguments, c.id) for c in got.tool_calls] == [
                    (c.name, c.arguments, c.id) for c in want.tool_calls]
        await factory.aclose()
        return asked, bool(cas.all_played)
