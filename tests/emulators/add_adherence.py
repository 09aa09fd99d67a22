"""Add the kit's adherence fields to the committed whole-game transcripts, without
re-recording (docs/adherence.md).

The game in a cassette did not change: only the transcript now says more about it (the
result line's `adherence`, each `repair_request`'s `error`). This replays each cassette,
checks that the replay equals the committed transcript once those two fields are taken
out (anything else differing stops the script: that needs a real re-recording), then
writes the committed lines back with just those fields added; wall-clock fields and
every other byte stay as recorded.

    python -m tests.emulators.add_adherence
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from stille_post.cli.llm_seats import llm_session
from stille_post.core.transcript import dumps
from stille_post.session import play_game

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "providers"
GAMES = {"game_4seat": "stille-post", "connections_game": "connections",
         "elimination_game": "elimination", "chameleon_game": "chameleon"}
# Wall-clock fields, and the header's file-format number (how the file is written, not
# what was played: the cassette tests ignore it too).
WALL_CLOCK = ("timing", "version", "format")


def _strip(obj: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in obj.items() if k not in WALL_CLOCK and k != "adherence"}
    if out.get("type") == "repair_request":
        out["data"] = {k: v for k, v in out["data"].items() if k != "error"}
    return out


def migrate(cassette: Path) -> bool:
    """True when the committed transcript was rewritten."""
    committed = cassette.with_name(cassette.stem + ".transcript.jsonl")
    setup = json.loads(cassette.with_suffix(".json").read_text(encoding="utf-8"))
    game = GAMES[cassette.stem]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "replay.jsonl"
        with llm_session(online=False, record=None, replay=cassette) as factory:
            asyncio.run(play_game(game, seed=setup["seed"], out=out, players=setup["players"],
                                  options=setup["options"], llm_factory=factory))
        new = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    old_text = committed.read_text(encoding="utf-8").splitlines()
    old = [json.loads(x) for x in old_text]
    if len(old) != len(new) or any(_strip(a) != _strip(b) for a, b in zip(old, new, strict=True)):
        raise SystemExit(f"{committed}: the replay differs beyond the adherence fields; "
                         "re-record it instead")
    lines = []
    for line, o, n in zip(old_text, old, new, strict=True):
        if o.get("type") == "repair_request" and "error" in n["data"]:
            o["data"] = n["data"]
            line = dumps(o)
        elif o.get("kind") == "result" and "adherence" in n:
            timing = o.pop("timing", None)
            o["adherence"] = n["adherence"]
            if timing is not None:
                o["timing"] = timing
            line = dumps(o)
        lines.append(line)
    text = "\n".join(lines) + "\n"
    if text == committed.read_text(encoding="utf-8"):
        return False
    committed.write_text(text, encoding="utf-8")
    return True


def main() -> None:
    for cassette in sorted(CASSETTES.glob("*/*.yaml")):
        if cassette.stem in GAMES and cassette.with_suffix(".json").exists():
            changed = migrate(cassette)
            print(f"{cassette.relative_to(CASSETTES)}: {'updated' if changed else 'as is'}",
                  file=sys.stderr)


if __name__ == "__main__":
    main()
