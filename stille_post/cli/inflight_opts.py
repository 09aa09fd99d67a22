"""`--max-in-flight` for the tournament command: the flag, the file's `max_in_flight`, or
the value a resumed folder recorded, checked against the provider kinds and aliases."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stille_post.players.specs import LLM_KINDS
from stille_post.providers.inflight import parse_max_in_flight
from stille_post.providers.models import load_models


def in_flight_texts(cli: list[str] | None, file: int | Mapping[str, int] | None,
                    saved: Any) -> list[str]:
    """The caps as `--max-in-flight` texts; the command line wins over the file, the file
    over what the folder's last run recorded."""
    if cli:
        return list(cli)
    if isinstance(file, int):
        return [str(file)]
    if isinstance(file, Mapping):
        return [f"{k}={v}" for k, v in file.items()]
    return [str(t) for t in saved] if isinstance(saved, list) else []


def parse_in_flight(texts: list[str], models_file: Path | None) -> dict[str, Any]:
    """`llm_session` options: the registry (loaded once, here) and the caps it accepts."""
    registry = load_models(Path(models_file) if models_file is not None else None)
    caps = parse_max_in_flight(texts, registry.aliases, LLM_KINDS)
    return {"models": registry, "max_in_flight": caps}
