"""Where the shipped data lives.

The roster, price table and cards are reviewed data under the top-level `fixtures/`.
`STILLE_POST_FIXTURES` points elsewhere (for an installed copy or a private roster).
"""

from __future__ import annotations

import os
from pathlib import Path


def fixtures_dir() -> Path:
    env = os.environ.get("STILLE_POST_FIXTURES")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "fixtures"
