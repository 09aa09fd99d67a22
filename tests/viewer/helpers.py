"""Shared pieces of the viewer tests: paths, planted markup, the CLI, a hand-made game."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from stille_post.core.events import Visibility
from stille_post.viewer import write_html

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "viewer"  # git-ignored (.gitignore: artifacts/)

# Markup a model might write. Each payload would set window.__pwned if it ever ran.
PLANTED = (
    "<script>window.__pwned = 1</script>"
    "<img src=x onerror=\"window.__pwned = 2\">"
    "</script><script>window.__pwned = 3</script>"
    "<!--<script>window.__pwned = 4//-->"
    "\u2028<b>bold?</b> & &amp;"
)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real `stille-post` entry point (exit codes and one-line errors included)."""
    return subprocess.run(
        [sys.executable, "-c", "from stille_post.cli import main; main()", *args],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )


def render(transcript: Path) -> Path:
    """The page, written in-process (the CLI itself is tested separately: it is slower)."""
    return write_html(transcript, transcript.with_suffix(".html"))


def chameleon_events() -> list[tuple[str, int | None, Visibility, dict[str, Any]]]:
    pub = Visibility.public()
    knowers = Visibility.only(1, 2, 4)  # seat 3 is the chameleon: no secret word
    return [
        ("game_start", None, pub, {"text": "Category: fruit."}),
        ("secret", None, knowers, {"word": "mango", "text": "The secret word is mango."}),
        ("role", None, Visibility.only(3), {"text": "You are the chameleon."}),
        ("clue", 1, pub, {"word": "sweet"}),
        ("clue", 2, pub, {"word": "tropical"}),
        ("clue", 3, pub, {"word": "yellow"}),
        ("clue", 4, pub, {"word": "pit"}),
        ("whisper", 2, Visibility.only(2, 4), {"text": "I suspect 3."}),
        ("vote", 1, Visibility.log_only(), {"target": 3, "reason": "vague clue"}),
        ("vote_result", None, pub, {"tally": {"3": 3, "1": 1}, "text": "Player 3 is accused."}),
        ("eliminated", None, pub, {"seat": 3, "cause": "voted out"}),
    ]
