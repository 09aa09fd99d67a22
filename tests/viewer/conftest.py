"""Transcripts and a headless Chromium for the HTML viewer's tests.

The seed-7 game and the Chameleon games are played fresh through the CLI, so the viewer
is tested against what the engines write today; the Chameleon tie game is played by
scripted seats (`script:FILE.yaml`). Two transcripts are written by hand: one with planted
markup, and one from a game this installation does not know (no layout, no vocabulary:
an event stream with a private secret word and log-only votes).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from stille_post.core.events import Event
from stille_post.core.transcript import TranscriptWriter
from stille_post.games import ENV_VAR, reload_registry

from .helpers import PLANTED, TOY, UNKNOWN_GAME, handmade_events, run_cli


@pytest.fixture(scope="session")
def viewer_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("viewer")


@pytest.fixture(scope="session")
def seed7(viewer_tmp: Path) -> Path:
    out = viewer_tmp / "seed7.jsonl"
    proc = run_cli("play", "--seed", "7", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="session")
def planted(seed7: Path, viewer_tmp: Path) -> Path:
    """Seed 7 with markup planted in the first message and in a seat's header fields."""
    lines = [json.loads(line) for line in seed7.read_text(encoding="utf-8").splitlines()]
    lines[0]["seats"]["2"]["player"] = "<b>bot</b></title><script>window.__pwned = 5</script>"
    first = next(o for o in lines if o.get("type") == "message")
    first["data"]["text"] = PLANTED
    out = viewer_tmp / "planted.jsonl"
    out.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines),
                   encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def unknown_game(viewer_tmp: Path) -> Path:
    out = viewer_tmp / "unknown.jsonl"
    seats = {str(s): {"model": f"model-{s}", "player": "bot:random"} for s in range(1, 5)}
    with TranscriptWriter(out) as w:
        w.header(game=UNKNOWN_GAME, config={"num_players": 4}, seed=3, seats=seats)
        for seq, (type_, actor, vis, data) in enumerate(handmade_events(), start=1):
            w.event(Event(seq, type_, 0 if seq < 4 else 1, 0, actor, vis, data))
        w.result(status="completed", placements={1: 1, 2: 1, 4: 1, 3: 4},
                 summary={"winners": [1, 2, 4], "causes": {"3": "voted out"}})
    return out


@pytest.fixture(scope="session")
def chameleon_seed3(viewer_tmp: Path) -> Path:
    """`stille-post play chameleon --seed 3`: the default bots, no tie."""
    out = viewer_tmp / "chameleon-seed3.jsonl"
    proc = run_cli("play", "chameleon", "--seed", "3", "--quiet", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


# Votes 2,1,2,1 tie Players 1 and 2; every seat would pick Player 2 as the dealer; a
# caught chameleon is re-asked ("2" is no card word), then guesses apple.
TIE_SCRIPTS = {1: ["alpha", "2", "2", "apple"], 2: ["beta", "1", "2", "apple"],
               3: ["gamma", "2", "2", "apple"], 4: ["delta", "1", "2", "apple"]}


def play_tie(folder: Path, rule: str) -> Path:
    """A tied vote under `rule` (seed 3: the chameleon is Player 2, the secret word
    strawberry, the dealer Player 4)."""
    seats = []
    for seat, replies in TIE_SCRIPTS.items():
        script = folder / f"tie-seat{seat}.yaml"
        script.write_text("".join(f'- "{r}"\n' for r in replies), encoding="utf-8")
        seats.append(f"script:{script}")
    out = folder / f"chameleon-tie-{rule}.jsonl"
    proc = run_cli("play", "chameleon", "--seed", "3", "--players", ",".join(seats),
                   "--set", f"tie_rule={rule}", "--quiet", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="session")
def chameleon_tie(viewer_tmp: Path) -> Path:
    """Settled by the dealer, the chameleon caught, a wrong second-chance guess."""
    return play_tie(viewer_tmp, "dealer")


@pytest.fixture(scope="session")
def toy_game(viewer_tmp: Path) -> Path:
    """The toy game of tests/toy_rps: a vocabulary and no layout of its own."""
    out = viewer_tmp / "toy.jsonl"
    proc = run_cli("play", "toy-rps", "--seed", "2", "--quiet", "--out", str(out),
                   env={ENV_VAR: TOY})
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The toy game in the registry for one test (the page is rendered in-process)."""
    monkeypatch.setenv(ENV_VAR, TOY)
    reload_registry()
    yield
    monkeypatch.undo()
    reload_registry()

# The headless Chromium (`browser`) is in tests/conftest.py: one per test process, shared
# by the viewer's tests and the games' layout tests.
