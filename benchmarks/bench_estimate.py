"""`tournament --estimate` against every recorded game cassette.

`python -m benchmarks estimate [--json]`: for each game cassette of cassettes/providers/,
the requests and tokens its reference transcript billed (input, cached reads for
Anthropic, output; requests counted in the cassette) against the estimate of the same
players and options, ten games from the cassette's seed (docs/campaigns.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from stille_post.tournament.config import TournamentConfig
from stille_post.tournament.estimate import estimate

ROOT = Path(__file__).resolve().parents[1] / "cassettes" / "providers"
SAMPLE = 10


def game_cassettes() -> list[Path]:
    """Every whole-game cassette's setup (`GAME.json`): the providers' games and the
    proving ground's real Qwen games (openai-compatible/qwen/)."""
    return sorted([*ROOT.glob("*/*.json"), *ROOT.glob("*/qwen/*.json")])


def billed_tokens(transcript: Path) -> int:
    """What the recorded game billed: input (with cached reads for Anthropic, whose input
    count leaves them out) and output, over every seat."""
    result = json.loads(transcript.read_text(encoding="utf-8").splitlines()[-1])
    anthropic = transcript.parent.name == "anthropic"
    return sum(u["input_tokens"] + (u.get("cached_input_tokens", 0) if anthropic else 0)
               + u["output_tokens"] for u in result["usage"].values())


def compare(path: Path) -> dict[str, Any]:
    recorded = json.loads(path.read_text(encoding="utf-8"))
    transcript = path.with_name(path.stem + ".transcript.jsonl")
    head = json.loads(transcript.read_text(encoding="utf-8").splitlines()[0])
    billed = billed_tokens(transcript)
    requests = len(yaml.safe_load(path.with_suffix(".yaml").read_text())["interactions"])
    config = TournamentConfig(game=head["game"], games=SAMPLE, seed=recorded["seed"],
                              seating="fixed", players=tuple(recorded["players"]),
                              options=recorded["options"])
    plan = estimate(config, sample=SAMPLE)
    where = path.parent.relative_to(ROOT).as_posix()
    return {"cassette": f"{where}/{path.stem}", "billed_tokens": billed,
            "requests": requests,
            "estimated_requests": round(plan["requests"]["expected"] / SAMPLE, 1),
            "ratio": round(plan["tokens"]["expected"] / SAMPLE / billed, 3),
            "range": [round(plan["tokens"][k] / SAMPLE / billed, 2) for k in ("low", "high")]}


def main(argv: list[str]) -> int:
    rows = [compare(p) for p in game_cassettes()]
    if "--json" in argv:
        print(json.dumps({"cassettes": rows,
                          "within_25_percent": sum(abs(r["ratio"] - 1) <= 0.25 for r in rows)}))
        return 0
    for r in rows:
        print(f"{r['cassette']:36s} requests {r['requests']:3d} / {r['estimated_requests']:5.1f}"
              f"  estimate/billed {r['ratio']:.2f}  range {r['range'][0]:.2f}-{r['range'][1]:.2f}")
    return 0
