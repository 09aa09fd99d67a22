"""Determinism, as far as it is Stille Post's own: parallel identity guesses land in seat
order, and the reader rebuilds views. Same seed -> same transcript is checked for every
game by the kit's conformance suite (tests/kit/test_conformance.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from stille_post.core.transcript import Transcript
from stille_post.session import play_game


def _play(tmp: Path, name: str, seed: int, players: list[str] | None = None) -> Path:
    out = tmp / f"{name}.jsonl"
    asyncio.run(play_game("stille-post", seed=seed, out=out, players=players,
                          options={"max_rounds": 6}))
    return out


def test_parallel_identity_guesses_apply_in_seat_order(play, chaos) -> None:
    """The chaotic players answer in parallel; events of a phase still come in seat order,
    and the same seed gives the same events twice."""
    runs = []
    for _ in range(2):
        players, _ = chaos(5, 42)
        _, events, _ = play(players, seed=42, guess_every=1, max_rounds=3)
        runs.append([e.to_json() for e in events])
        phase_guesses = [e.actor for e in events if e.type == "identity_guess"
                         and e.data["phase"] == 1]
        assert phase_guesses == sorted(phase_guesses)
    assert runs[0] == runs[1]


def test_transcript_reader_rebuilds_each_players_view(tmp_path: Path, play, bots) -> None:
    path = _play(tmp_path, "v", 5)
    t = Transcript.load(path)
    assert t.complete and t.game == "stille-post"
    for seat in t.seats:
        view = t.view(seat)
        assert all(e.visibility.allows(seat) for e in view)
        private_other = [e for e in t.events if not e.visibility.allows(seat)]
        assert not set(id(e) for e in view) & set(id(e) for e in private_other)
