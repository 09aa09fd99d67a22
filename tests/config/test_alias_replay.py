"""An alias seat's base_url and parameters are part of the recorded request: recorded
against a loopback emulator, the cassette holds them, a replay with the same alias plays,
and a replay whose alias sends other parameters misses the cassette."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from stille_post.cli.llm_seats import SeatFactory, llm_session
from stille_post.core.errors import GameAborted
from stille_post.players.base import Decision
from stille_post.providers.base import ChatRequest, Message
from stille_post.providers.models import ModelRegistry, load_models
from tests.emulators.server import running

ALIASES = """
[models.local]
provider = "openai-compatible"
model = "tiny-local"
base_url = "{url}"
temperature = 0.3
max_output_tokens = 77
extra = {{ top_k = 5 }}

[models.mini-low]
provider = "openai"
model = "gpt-5-mini"
base_url = "{url}"
reasoning_effort = "low"
"""


class Prompts:
    def render(self, decision: Decision[Any]) -> ChatRequest:
        return ChatRequest("You are a player.", [Message("user", f"seat {decision.seat}")])


def _registry(tmp_path: Path, url: str, name: str = "models.toml", **swap: str) -> ModelRegistry:
    text = ALIASES.format(url=url)
    for old, new in swap.items():
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_models(path)


def _play(factory: Any, seats: list[str]) -> list[str]:
    assert isinstance(factory, SeatFactory)

    async def go() -> list[str]:
        try:
            return [(await factory(s, Prompts()).decide(Decision("g", "turn", i, None))).text
                    for i, s in enumerate(seats, start=1)]
        finally:
            await factory.aclose()

    return asyncio.run(go())


@pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
def test_alias_params_are_recorded_and_replayed(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "x" * 20)
    cas = tmp_path / "alias.yaml"
    seats = ["model:local", "model:mini-low"]
    with running("openai") as emu:
        reg = _registry(tmp_path, emu.base_url)
        with llm_session(online=True, record=cas, replay=None, models=reg) as factory:
            live = _play(factory, seats)
    recorded = yaml.safe_load(cas.read_text(encoding="utf-8"))["interactions"]
    bodies = [json.loads(i["request"]["body"]) for i in recorded]
    uris = [i["request"]["uri"] for i in recorded]
    assert all(u.startswith(emu.base_url + "/chat/completions") for u in uris)
    local, mini = bodies
    assert (local["model"], local["temperature"], local["max_tokens"], local["top_k"]) == \
        ("tiny-local", 0.3, 77, 5)
    assert (mini["model"], mini["reasoning_effort"]) == ("gpt-5-mini", "low")
    assert "temperature" not in mini and "max_completion_tokens" not in mini

    monkeypatch.delenv("OPENAI_API_KEY")
    # The emulator is gone: only the cassette can answer, and it answers the same.
    with llm_session(online=False, record=None, replay=cas, models=reg) as factory:
        assert _play(factory, seats) == live
    # Another temperature is another request: not in the cassette, the game aborts.
    other = _registry(tmp_path, emu.base_url, "other.toml",
                      **{"temperature = 0.3": "temperature = 0.4"})
    with llm_session(online=False, record=None, replay=cas, models=other) as factory, \
            pytest.raises(GameAborted, match="not in the replayed cassette"):
        _play(factory, seats[:1])
