"""What an LLM seat costs to make: every SDK client shares one verified TLS context, and a
tournament's seat factory lets each game's providers go with the game.

Before: each provider loaded the CA store into a context of its own (three for
google-genai), and a tournament's factory kept every provider it ever made; the cost of
a seat now and then is in docs/performance.md."""

from __future__ import annotations

import asyncio
import gc
import ssl
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stille_post.cli.llm_seats import SeatFactory
from stille_post.games import get_game
from stille_post.providers import create_provider
from stille_post.providers._common import tls_context

KINDS = [("openai", "gpt-5-mini", {}), ("anthropic", "claude-haiku-4-5", {}),
         ("google", "gemini-2.5-flash", {}),
         ("openai-compatible", "llama3", {"base_url": "http://127.0.0.1:9/v1"})]


@pytest.fixture
def ca_loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts every load of a CA store into a TLS context, from a fresh shared one."""
    loads: list[int] = []
    real = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(1)
        real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    tls_context.cache_clear()
    return loads


def test_every_provider_of_every_kind_shares_one_ca_load(ca_loads: list[int]) -> None:
    providers = [create_provider(kind, model, api_key="sk-test", **options)
                 for kind, model, options in KINDS for _ in range(5)]
    assert len(providers) == 20
    assert len(ca_loads) <= 1, f"{len(ca_loads)} CA loads for 20 providers"


def test_the_shared_context_verifies_certificates_and_hosts() -> None:
    ctx = tls_context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    assert tls_context() is ctx


@pytest.mark.parametrize("kind,model", [("openai", "gpt-5-mini"),
                                        ("anthropic", "claude-haiku-4-5")])
def test_the_sdk_keeps_its_own_client_class(kind: str, model: str) -> None:
    """The SDK's own class closes its connections when a provider is dropped."""
    provider: Any = create_provider(kind, model, api_key="sk-test")
    assert type(provider.client._client).__name__ == "AsyncHttpxClientWrapper"


def _seat(factory: SeatFactory) -> Any:
    return factory("openai:gpt-5-mini", get_game("chameleon").prompts)


def test_a_tournament_factory_keeps_no_provider() -> None:
    factory = SeatFactory(replay=True, keep_providers=False)
    player = _seat(factory)
    gone = weakref.ref(player.provider)
    del player
    gc.collect()
    assert gone() is None and factory.providers == []


def test_a_single_game_factory_keeps_its_providers_for_the_warnings() -> None:
    factory = SeatFactory(replay=True)
    player = _seat(factory)
    assert factory.providers == [player.provider]


def test_a_dropped_google_provider_closes_its_connections_on_the_loop() -> None:
    async def drop() -> Any:
        provider: Any = create_provider("google", "gemini-2.5-flash", api_key="sk-test")
        http = provider._http
        del provider
        gc.collect()
        await asyncio.sleep(0)  # the close it scheduled
        await asyncio.sleep(0)
        return http

    assert asyncio.run(drop()).is_closed


def test_an_unreadable_ca_file_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from stille_post.core.errors import ConfigError

    monkeypatch.setenv("SSL_CERT_FILE", "/nonexistent/ca.pem")
    tls_context.cache_clear()
    try:
        with pytest.raises(ConfigError, match=r"CA certificates from "
                                              r"SSL_CERT_FILE=/nonexistent/ca\.pem"):
            create_provider("openai", "gpt-5-mini", api_key="sk-test")
    finally:
        monkeypatch.delenv("SSL_CERT_FILE")
        tls_context.cache_clear()  # the next provider gets a good context again


def test_the_tournament_command_asks_for_a_factory_that_keeps_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`play` keeps its one game's providers (for the warnings); `tournament` must not."""
    from contextlib import contextmanager

    import stille_post.cli.llm_seats as llm_seats
    from stille_post.cli import main

    asked: dict[str, Any] = {}

    @contextmanager
    def session(**options: Any) -> Iterator[None]:
        asked.update(options)
        yield None  # no LLM seats: the bots play

    monkeypatch.setattr(llm_seats, "llm_session", session)
    with pytest.raises(SystemExit) as done:
        main(["tournament", "chameleon", "--games", "2", "--out", str(tmp_path / "t"),
              "--json"])
    assert done.value.code == 0 and asked["keep_providers"] is False


def _bodies() -> list[dict[str, Any]]:
    """Every shape of body the OpenAI adapter sends: text, tools and each tool choice,
    tool calls and their results, both token-limit names, temperature, reasoning effort,
    extra body parameters, odd text."""
    from stille_post.providers.base import ChatRequest, Message, ToolCall
    from tests.emulators import scenarios as S

    call = ToolCall("guess_model", {"seat": 3, "model": "gpt-5", "nested": {"a": [1, None]}},
                    id="call_1")
    history = [Message("user", "begin \u2028 <b>x</b> \x00"),
               Message("assistant", "", tool_calls=[call]),
               Message("tool", "recorded", tool_call_id="call_1"),
               Message("assistant", "done"), Message("user", "next")]
    requests = [S.text_request(), S.tool_request(max_output_tokens=160),
                S.guess_request(), S.tool_request(tool_choice="guess_model"),
                ChatRequest("rules", history, list(S.P.TOOLS), tool_choice="required",
                            temperature=0.3, reasoning_effort="low",
                            extra={"top_p": 0.9, "seed": 7, "metadata": {"k": "v"}})]
    bodies = []
    for kind, options in (("openai", {}), ("openai-compatible",
                                           {"base_url": "http://127.0.0.1:9/v1"})):
        provider: Any = create_provider(kind, "gpt-5-mini", api_key="sk-test", **options)
        bodies += [provider.body(r) for r in requests]
    return bodies


def test_the_sdks_transform_leaves_our_openai_bodies_unchanged() -> None:
    """The adapter posts its body without `create()`'s `maybe_transform` (whose CPU grows
    with every message of the history). That is sound while the transform is the identity on
    what we send; a new SDK that renames or reformats a field fails here."""
    from openai._utils import maybe_transform
    from openai.types.chat.completion_create_params import (
        CompletionCreateParamsNonStreaming,
    )

    bodies = _bodies()
    assert len(bodies) == 10 and any("max_tokens" in b for b in bodies)
    for body in bodies:
        assert maybe_transform(body, CompletionCreateParamsNonStreaming) == body


def test_extra_body_parameters_are_merged_over_the_rest_as_the_sdk_merges_them() -> None:
    from stille_post.providers.base import ChatRequest, Message

    provider: Any = create_provider("openai", "gpt-5-mini", api_key="sk-test")
    body = provider.body(ChatRequest("rules", [Message("user", "go")], temperature=0.1,
                                     extra={"temperature": 0.9, "seed": 7}))
    assert body["temperature"] == 0.9 and body["seed"] == 7 and "extra_body" not in body


def test_play_closes_its_seats_connections_on_its_own_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`play` owns the event loop: its seats' HTTP clients are closed on it, after the
    game and before the loop ends (a replayed game of four OpenAI seats)."""
    import json

    from stille_post.cli import main
    from tests.providers._helpers import cassette_or_skip

    cassette = cassette_or_skip("openai", "game_4seat")
    game = json.loads(cassette.with_suffix(".json").read_text(encoding="utf-8"))
    closed: list[bool] = []
    original = SeatFactory.aclose

    async def aclose(self: SeatFactory) -> None:
        await original(self)
        asyncio.get_running_loop()  # RuntimeError unless the game's loop still runs
        closed.extend(p.client.is_closed() for p in self.providers)

    monkeypatch.setattr(SeatFactory, "aclose", aclose)
    options = [a for k, v in game["options"].items() for a in ("--set", f"{k}={v}")]
    with pytest.raises(SystemExit) as done:
        main(["play", "stille-post", "--seed", str(game["seed"]), "--players",
              ",".join(game["players"]), *options, "--replay", str(cassette),
              "--out", str(tmp_path / "game.jsonl"), "--json"])
    assert done.value.code == 0
    assert closed == [True] * 4


def test_a_client_that_fails_to_close_does_not_stop_the_others() -> None:
    class Provider:
        def __init__(self, fails: bool) -> None:
            self.fails, self.closed = fails, False

        async def aclose(self) -> None:
            if self.fails:
                raise OSError("connection reset while closing")
            self.closed = True

    factory = SeatFactory()
    factory.providers = [Provider(False), Provider(True), Provider(False)]
    asyncio.run(factory.aclose())
    assert [p.closed for p in factory.providers] == [True, False, True]
