"""Acceptance: every real API recording in ../shared/real-api-cassettes parses through
`create_provider(kind, model, api_key="test-key", max_retries=0).complete(...)` into the
normalised Completion that expected.json gives, replayed by vcrpy matching only method,
host and path (our request bodies differ from the ones recorded by other projects)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.errors import ProviderError
from stille_post.providers import ChatRequest, Message, Tool, create_provider
from stille_post.providers.recording import cassette

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "real-api-cassettes"
EXPECTED = SHARED / "expected.json"


def _cases() -> list[Any]:
    if not EXPECTED.exists():
        return [pytest.param(None, None, marks=pytest.mark.skip(
            reason=f"{SHARED} is absent: the real-API reference cassettes live in ../shared"))]
    data = json.loads(EXPECTED.read_text(encoding="utf-8"))
    return [pytest.param(name, spec, id=name) for name, spec in sorted(data.items())]


REQUEST = ChatRequest(
    system="You are a helpful assistant.",
    messages=[Message("user", "Hello")],
    tools=[Tool("get_temperature", "", {"type": "object", "properties": {}})],
    tool_choice="auto",
)


def _chain_statuses(exc: BaseException) -> list[int | None]:
    out: list[int | None] = []
    cur: BaseException | None = exc
    while cur is not None:
        out.append(getattr(cur, "status", None) if isinstance(cur, ProviderError)
                   else getattr(cur, "status_code", getattr(cur, "code", None)))
        cur = cur.__cause__ or cur.__context__
    return out


@pytest.mark.parametrize(("name", "spec"), _cases())
def test_real_cassette_parses(name: str, spec: dict[str, Any]) -> None:
    provider = create_provider(spec["kind"], spec["model_param"], api_key="test-key",
                               max_retries=0)
    with cassette(SHARED / name, mode="replay", match_on=["method", "host", "path"]) as cas:
        if "expect_error" in spec:
            with pytest.raises(ProviderError) as info:
                asyncio.run(provider.complete(REQUEST))
            assert cas.play_count == 1, "the recorded error response was not served"
            assert info.value.status == spec["expect_error"]["status"]
            assert spec["expect_error"]["status"] in _chain_statuses(info.value)
            assert "test-key" not in str(info.value)
            return
        got = asyncio.run(provider.complete(REQUEST))
        assert cas.play_count == 1
    assert got.text.strip() == spec["text"].strip()
    assert [{"name": c.name, "arguments": c.arguments} for c in got.tool_calls] \
        == spec["tool_calls"]
    assert all(c.malformed is None for c in got.tool_calls)
    usage = spec["usage"]
    assert got.usage.input_tokens == usage["input_tokens"]
    assert got.usage.cached_input_tokens == usage["cached_input_tokens"]
    accepted = spec.get("output_tokens_accepted", [usage["output_tokens"]])
    assert got.usage.output_tokens in accepted
    wanted = spec.get("finish_reason_contains")
    if wanted is not None:
        assert got.finish_reason is not None
        assert any(w in got.finish_reason.lower() for w in wanted.split("|")), got.finish_reason


def test_thought_signature_kept_for_sending_back() -> None:
    """Gemini's signature sits on the first parallel call only, and is sent back."""
    name = "google/parallel_function_calls_gemini-3-flash-preview.yaml"
    if not (SHARED / name).exists():
        pytest.skip(f"{SHARED} is absent")
    provider = create_provider("google", "gemini-3-flash-preview", api_key="test-key",
                               max_retries=0)
    with cassette(SHARED / name, mode="replay", match_on=["method", "host", "path"]):
        got = asyncio.run(provider.complete(REQUEST))
    sigs = [bool(c.provider_data.get("thought_signature")) for c in got.tool_calls]
    assert sigs == [True, False, False]
    from stille_post.providers.google_api import to_google_contents

    history = ChatRequest("s", [Message("user", "go"), Message("assistant", "", got.tool_calls)])
    from google.genai import types

    parts = types.Content.model_validate(to_google_contents(history)[-1]).parts or []
    assert parts[0].thought_signature and parts[1].thought_signature is None


def test_anthropic_thinking_block_is_opaque_and_sent_back() -> None:
    name = "anthropic/thinking_text_tool_use_claude-sonnet-4.yaml"
    if not (SHARED / name).exists():
        pytest.skip(f"{SHARED} is absent")
    provider = create_provider("anthropic", "claude-sonnet-4-0", api_key="test-key",
                               max_retries=0)
    with cassette(SHARED / name, mode="replay", match_on=["method", "host", "path"]):
        got = asyncio.run(provider.complete(REQUEST))
    blocks = got.tool_calls[0].provider_data["anthropic_thinking"]
    assert blocks[0]["type"] == "thinking" and blocks[0]["signature"]
    assert "Looking at the available function" not in got.text  # thinking is not text
    from stille_post.providers.anthropic_api import to_anthropic_messages

    history = ChatRequest("s", [Message("user", "go"),
                                Message("assistant", got.text, got.tool_calls),
                                Message("tool", "ok", tool_call_id=got.tool_calls[0].id)])
    sent = to_anthropic_messages(history)
    assert [b["type"] for b in sent[1]["content"]] == ["thinking", "text", "tool_use"]
    assert sent[2]["content"][0]["type"] == "tool_result"
