"""The Elimination Game's log format, driven through the generic importer as the CLI's
`stille-post import elimination logs` drives it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stille_post.games import get_game
from stille_post.importers import logs
from stille_post.importers.logs import ImportStats

LOGS = get_game("elimination").importer("logs")


def import_logs(paths: Sequence[Path], out: Path, **kw: Any) -> ImportStats:
    return logs.import_logs("elimination", LOGS, paths, out, **kw)


__all__ = ["LOGS", "ImportStats", "import_logs"]
