"""Every recorded whole game of the repository: a cassette of real (or emulated) HTTP
traffic, the setup it was recorded with (`NAME.json`: seed, players, options) and the
transcript written while recording (`NAME.transcript.jsonl`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes" / "providers"


@dataclass(frozen=True)
class CassetteGame:
    cassette: Path

    @property
    def name(self) -> str:
        return str(self.cassette.relative_to(CASSETTES).with_suffix(""))

    @property
    def kind(self) -> str:
        """The provider kind: the first folder under cassettes/providers."""
        return self.cassette.relative_to(CASSETTES).parts[0]

    @property
    def transcript(self) -> Path:
        return self.cassette.with_name(self.cassette.stem + ".transcript.jsonl")

    @property
    def setup(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.cassette.with_suffix(".json").read_text(
            encoding="utf-8"))
        return data

    @property
    def game(self) -> str:
        header = json.loads(self.transcript.read_text(encoding="utf-8").splitlines()[0])
        return str(header["game"])


def cassette_games() -> list[CassetteGame]:
    """Every cassette that has both its setup and its transcript beside it."""
    found = []
    for cassette in sorted(CASSETTES.rglob("*.yaml")):
        game = CassetteGame(cassette)
        if game.transcript.exists() and cassette.with_suffix(".json").exists():
            found.append(game)
    return found
