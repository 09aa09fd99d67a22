"""Generation settings reach the request with one precedence: provider default < seat
(the models.toml alias) < game phase (the Decision's); and the CLI's seat factory builds
LLM seats from the registry, never from a game's data."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from stille_post.cli.llm_seats import DEFAULT_MAX_OUTPUT_TOKENS, SeatFactory
from stille_post.players.base import Decision
from stille_post.players.generation import GenerationConfig
from stille_post.players.llm import LLMPlayer
from stille_post.providers.base import ChatRequest, Completion, Message, Usage
from stille_post.providers.models import ModelRegistry, builtin_models, load_models
from tests.config._cli import ROOT

MODELS = """
[models.chatty]
provider = "openai-compatible"
model = "qwen2.5:7b"
base_url = "http://127.0.0.1:11434/v1"
temperature = 0.3
max_output_tokens = 500
extra = { top_k = 40, seed = 7 }

[models.thinker]
provider = "openai"
model = "gpt-5-mini"
reasoning_effort = "high"
"""


class Prompts:
    """A game's prompts that set a value of their own (the lowest level of all)."""

    def render(self, decision: Decision[Any]) -> ChatRequest:
        return ChatRequest("system", [Message("user", "go")], temperature=1.0,
                           extra={"from_prompts": True})


class Capture:
    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> Completion:
        self.requests.append(request)
        return Completion("ok", [], Usage(1, 1), "m")


def _ask(player: LLMPlayer, phase: GenerationConfig | None) -> ChatRequest:
    if not isinstance(player.provider, Capture):
        player.provider = Capture()  # the seat as built, minus the network
    asyncio.run(player.decide(Decision("g", "turn", 1, None, generation=phase)))
    assert player.last_request is not None
    return player.last_request


@pytest.fixture
def reg(tmp_path: Path) -> ModelRegistry:
    path = tmp_path / "models.toml"
    path.write_text(MODELS, encoding="utf-8")
    return load_models(path)


def _seat(reg: ModelRegistry, spec: str, monkeypatch: pytest.MonkeyPatch) -> LLMPlayer:
    monkeypatch.delenv("STILLE_POST_MAX_OUTPUT_TOKENS", raising=False)
    player = SeatFactory(replay=True, models=reg)(spec, Prompts())
    assert isinstance(player, LLMPlayer)
    return player


def test_provider_default_then_seat_then_phase(reg: ModelRegistry,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Provider default only: a plain openai-compatible seat gets the kind's output cap.
    plain = _seat(reg, "openai-compatible:other@http://127.0.0.1:9/v1", monkeypatch)
    req = _ask(plain, None)
    assert req.max_output_tokens == DEFAULT_MAX_OUTPUT_TOKENS["openai-compatible"]
    assert req.temperature == 1.0  # the prompts' own value stands where nobody sets one
    # The seat (alias) over the provider default.
    chatty = _seat(reg, "model:chatty", monkeypatch)
    req = _ask(chatty, None)
    assert (req.max_output_tokens, req.temperature) == (500, 0.3)
    assert req.extra == {"from_prompts": True, "top_k": 40, "seed": 7}
    # The phase over the seat, key by key: what the phase leaves unset stays the seat's.
    req = _ask(chatty, GenerationConfig(max_output_tokens=12, extra={"seed": 1}))
    assert (req.max_output_tokens, req.temperature) == (12, 0.3)
    assert req.extra == {"from_prompts": True, "top_k": 40, "seed": 1}
    assert req.reasoning_effort is None


def test_reasoning_effort_from_the_seat_and_from_a_phase(
        reg: ModelRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    thinker = _seat(reg, "model:thinker", monkeypatch)
    assert _ask(thinker, None).reasoning_effort == "high"
    assert _ask(thinker, GenerationConfig(reasoning_effort="minimal")).reasoning_effort == \
        "minimal"
    assert _ask(thinker, None).max_output_tokens is None  # openai has no default cap


def test_the_old_keywords_are_seat_settings_under_generation() -> None:
    provider = Capture()
    player = LLMPlayer(provider, Prompts(), name="x", max_output_tokens=100, temperature=0.5,
                       generation=GenerationConfig(temperature=0.9))
    req = _ask(player, GenerationConfig(max_output_tokens=7))
    assert (req.max_output_tokens, req.temperature) == (7, 0.9)
    assert provider.requests == [req]


def test_a_request_nobody_configures_is_unchanged() -> None:
    """What keeps old cassettes replaying: no setting, no difference in the request."""
    player = LLMPlayer(Capture(), Prompts(), name="x")
    assert _ask(player, None) == Prompts().render(Decision("g", "turn", 1, None))


def test_alias_seats_get_api_model_and_base_url(reg: ModelRegistry,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    chatty = _seat(reg, "model:chatty", monkeypatch)
    provider: Any = chatty.provider
    assert provider.model == "qwen2.5:7b" and provider.base_url == "http://127.0.0.1:11434/v1"
    assert chatty.name == "model:chatty"


def test_a_roster_identity_reaches_the_api_under_its_api_name(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped alias, not the Stille Post roster, maps the seed's Haiku id."""
    player = _seat(builtin_models(), "anthropic:claude-haiku-4-5-20241022", monkeypatch)
    provider: Any = player.provider
    assert provider.model == "claude-haiku-4-5-20251001"
    # The same name under another provider is not the alias.
    other: Any = _seat(builtin_models(), "openai:claude-haiku-4-5-20241022", monkeypatch)
    assert other.provider.model == "claude-haiku-4-5-20241022"


def test_the_generic_cli_names_no_game() -> None:
    source = (ROOT / "stille_post" / "cli" / "llm_seats.py").read_text(encoding="utf-8")
    assert "roster" not in source.lower()
    assert "games.stille_post" not in source and "chameleon" not in source.lower()
