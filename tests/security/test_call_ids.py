"""M1: a tool-call id is server text like any other. A server that puts the caller's key
in one must not get it into the transcript, the viewer, or the requests of later turns
(the id is echoed back with the tool's result)."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from pathlib import Path

import pytest

from stille_post.session import play_game
from stille_post.viewer import write_html
from tests.chaos.harness import ChaosFactory
from tests.emulators.faults import FaultPolicy
from tests.emulators.server import Emulator

KEY = "gw-callid-4Rt8Zq2Lm7Vx"  # not key-shaped: only value masking catches it


@pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
def test_a_key_in_a_tool_call_id_reaches_no_transcript_page_or_request(
        tmp_path: Path) -> None:
    policies = {api: FaultPolicy(1.0, seed=i, kinds=("echo_key_call_id",))
                for i, api in enumerate(("openai", "anthropic", "google"))}
    with ExitStack() as stack:
        emus = {}
        for api, policy in policies.items():
            emus[api] = Emulator(api, faults=policy).start()
            stack.callback(emus[api].stop)
        factory = ChaosFactory(emus, api_key=KEY)
        out = tmp_path / "game.jsonl"

        async def play() -> None:
            try:
                await play_game("stille-post", seed=7, out=out, options={"max_rounds": 1},
                                players=["openai:gpt-5-mini", "anthropic:claude-haiku-4-5",
                                         "google:gemini-2.5-flash", "detective"],
                                llm_factory=factory)
            finally:
                await factory.aclose()

        asyncio.run(play())
        bodies = [b for e in emus.values() for b in e.state.raw_bodies]
    assert all(p.counts["echo_key_call_id"] > 0 for p in policies.values())
    text = out.read_text(encoding="utf-8")
    assert "call_[redacted]" in text  # the ids were there, and masked
    assert KEY not in text
    write_html(out, tmp_path / "page.html")
    assert KEY not in (tmp_path / "page.html").read_text(encoding="utf-8")
    assert bodies and not [b for b in bodies if KEY.encode() in b]
