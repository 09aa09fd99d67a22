"""Add the kit's decision records (transcript format 3) to the committed whole-game
transcripts of the cassettes, without re-recording.

The game in a cassette did not change: only the transcript now says more about it (a
log-only `decision` event after each ask, with the seat's replies). This replays each
cassette, checks that the replay equals the committed transcript once the decision
events are taken out (event for event, `seq` aside, which the new events shift; the
result line byte for byte, wall clock aside), then writes the committed header (with
format 3), the replay's event lines and the committed result line. Anything else
differing stops the script: that needs a real re-recording.

    python -m tests.export.add_decisions
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from stille_post.cli.llm_seats import llm_session
from stille_post.core.transcript import FORMAT_VERSION, dumps
from stille_post.session import play_game
from tests.export.cassette_games import CASSETTES, CassetteGame, cassette_games

WALL_CLOCK = ("timing", "version")


def _event(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "seq"}


def _result(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in WALL_CLOCK}


def migrate(game: CassetteGame) -> bool:
    """True when the committed transcript was rewritten."""
    committed = game.transcript
    setup = game.setup
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "replay.jsonl"
        # A structured recording's requests carry its legal-move schemas: replay it so.
        with llm_session(online=False, record=None, replay=game.cassette,
                         structured=setup.get("structured")) as factory:
            asyncio.run(play_game(game.game, seed=setup["seed"], out=out,
                                  players=setup["players"], options=setup["options"],
                                  llm_factory=factory))
        new_text = out.read_text(encoding="utf-8").splitlines()
    old_text = committed.read_text(encoding="utf-8").splitlines()
    old = [json.loads(x) for x in old_text]
    new = [json.loads(x) for x in new_text]
    old_events = [_event(o) for o in old if o["kind"] == "event" and o["type"] != "decision"]
    new_events = [_event(o) for o in new if o["kind"] == "event" and o["type"] != "decision"]
    if old_events != new_events or _result(old[-1]) != _result(new[-1]):
        raise SystemExit(f"{committed}: the replay differs beyond the decision records; "
                         "re-record it instead")
    header = old[0]
    header["format"] = FORMAT_VERSION
    events = [line for line, o in zip(new_text, new, strict=True) if o["kind"] == "event"]
    text = "\n".join([dumps(header), *events, old_text[-1]]) + "\n"
    if text == committed.read_text(encoding="utf-8"):
        return False
    committed.write_text(text, encoding="utf-8")
    return True


def main() -> None:
    for game in cassette_games():
        try:
            changed = migrate(game)
        except SystemExit as exc:  # a recording that no longer replays: left as it is
            print(f"{game.cassette.relative_to(CASSETTES)}: {exc}", file=sys.stderr)
            continue
        print(f"{game.cassette.relative_to(CASSETTES)}: {'updated' if changed else 'as is'}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
