"""`llm_session(record=...)` writes a cassette that `llm_session(replay=...)` replays into
the identical transcript (recorded here against a loopback emulator)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from stille_post.cli.llm_seats import SeatFactory, llm_session
from stille_post.core.errors import UsageError
from stille_post.providers.secrets import find_keys
from stille_post.session import play_game
from tests.emulators.server import REAL_ORIGINS, running
from tests.providers._helpers import comparable

PLAYERS = ["google:gemini-3-flash-preview", "detective", "google:gemini-2.5-flash", "random"]


@pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
def test_record_then_replay_gives_the_same_transcript(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    key = "AIza" + "Sy0123456789abcdefghijklmnopqrstu"
    monkeypatch.setenv("GEMINI_API_KEY", key)
    cas = tmp_path / "game.yaml"
    with running("google") as emu, llm_session(
            online=True, record=cas, replay=None, base_urls={"google": emu.base_url},
            rewrite_hosts={emu.origin: REAL_ORIGINS["google"]}) as factory:
        assert isinstance(factory, SeatFactory)
        seats: SeatFactory = factory

        async def play() -> None:
            try:
                await play_game("stille-post", seed=5, out=tmp_path / "live.jsonl",
                                players=PLAYERS, options={"max_rounds": 1},
                                llm_factory=seats)
            finally:
                await seats.aclose()

        asyncio.run(play())
    text = cas.read_text(encoding="utf-8")
    assert key not in text and find_keys(text) == []
    assert "generativelanguage.googleapis.com/v1beta/models/" in text
    assert "127.0.0.1" not in text
    monkeypatch.delenv("GEMINI_API_KEY")
    with llm_session(online=False, record=None, replay=cas) as factory:
        asyncio.run(play_game("stille-post", seed=5, out=tmp_path / "replay.jsonl",
                              players=PLAYERS, options={"max_rounds": 1},
                              llm_factory=factory))
    assert comparable(tmp_path / "replay.jsonl") == comparable(tmp_path / "live.jsonl")


def test_session_refuses_bad_flag_combinations(tmp_path: Path) -> None:
    existing = tmp_path / "c.yaml"
    existing.write_text("interactions: []\nversion: 1\n")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"online": True, "record": existing, "replay": existing}, "cannot be combined"),
        ({"online": False, "record": tmp_path / "n.yaml", "replay": None}, "needs --online"),
        ({"online": True, "record": None, "replay": existing}, "drop --online"),
        ({"online": False, "record": None, "replay": tmp_path / "nope.yaml"}, "no cassette"),
        ({"online": True, "record": existing, "replay": None}, "already exists"),
    ]
    for kwargs, message in cases:
        with pytest.raises(UsageError, match=message), llm_session(**kwargs):
            pass
    with llm_session(online=False, record=None, replay=None) as factory:
        assert factory is None
