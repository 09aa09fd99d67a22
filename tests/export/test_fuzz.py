"""A transcript is untrusted: any value of any line replaced by any JSON value must end in
a skipped transcript (named) or exported rows, never an exception or a traceback.
Fixed seed: 120 mutated transcripts (40 per table), each exported on its own."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import dumps
from stille_post.export import ExportRequest, run_export
from stille_post.session import play_game

pytest.importorskip("pyarrow")

ODD: list[Any] = [None, True, -1, 0, 2**70, 1.5, float("nan"), "", "x", "\x00\u2028", [], [1],
                  {}, {"a": None}, [[[]]], "\\ud800"]


def _paths(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*path, i))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    obj[path[0]] = _set(obj[path[0]], path[1:], value)
    return obj


@pytest.mark.parametrize("what", ["decisions", "games", "events"])
def test_mutated_transcripts_are_exported_or_skipped(tmp_path: Path, what: str) -> None:
    source = tmp_path / "source.jsonl"
    asyncio.run(play_game("chameleon", seed=2, out=source, players=None, options={}))
    objs = [json.loads(x) for x in source.read_text(encoding="utf-8").splitlines()]
    rng = random.Random(f"export-fuzz-{what}")
    for n in range(40):
        mutated = json.loads(json.dumps(objs))
        line = rng.randrange(len(mutated))
        path = rng.choice(_paths(mutated[line]))
        mutated[line] = _set(mutated[line], path, rng.choice(ODD))
        folder = tmp_path / f"in-{n}"
        folder.mkdir()
        (folder / "g.jsonl").write_text("".join(dumps(o) + "\n" for o in mutated),
                                        encoding="utf-8")
        result = run_export(ExportRequest((folder,), tmp_path / f"out-{n}",
                                          what=what))  # type: ignore[arg-type]
        assert result.games + len(result.skipped) == 1, (line, path)
        assert all(s.reason for s in result.skipped)
