"""The export is a generic layer: it reads the registry's definitions and the transcripts'
typed contracts, and never names a game (as tests/kit/test_toy_game.py checks for the
CLI, the tournament, the viewer and the session)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GAME_NAMES = re.compile(r"chameleon|elimination|connections|stille.?post", re.IGNORECASE)
# The package's own name in imports and module paths.
PACKAGE = re.compile(r"stille_post[./]|from stille_post import|StillePostError|"
                     r"`?stille-post`?(?= |$|`|\")|\"stille-post\"")


def test_the_export_names_no_game() -> None:
    hits = []
    for path in sorted(ROOT.joinpath("stille_post", "export").glob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if GAME_NAMES.search(PACKAGE.sub("", line)):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "\n".join(hits)
