"""Run one of our Inspect tasks through `inspect_ai.eval(...)` on Inspect's own mock
model, and read what it left: Inspect's log (read back with `read_eval_log`) and our
transcripts beside it. Also the expected score of a seat, computed from our transcript
file alone (the scorer works from the in-memory outcome)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import get_model

from stille_post.core.transcript import Transcript
from stille_post.inspect_tasks.task import task_name
from tests.inspect_tasks.policies import Policy

EVALUATED = "inspect:mockllm/model"


def run_task(game: str, log_dir: Path, policy: Policy, **task_options: Any) -> EvalLog:
    from stille_post.inspect_tasks._registry import TASKS

    model = get_model("mockllm/model", custom_outputs=policy, memoize=False)
    [log] = inspect_eval(TASKS[task_name(game)](**task_options), model=model,
                         log_dir=str(log_dir), display="none")
    return read_eval_log(log.location, resolve_attachments=True)


def beside(log: EvalLog) -> Path:
    location = Path(log.location)
    return location.with_name(location.stem + ".stille_post")


def expected_scores(transcript: Path, evaluated: str = EVALUATED) -> dict[str, float]:
    """The four numbers, from the transcript's header and result line, by the rules the
    scorer documents (a void or aborted game ranks nobody; several evaluated seats give
    the mean)."""
    t = Transcript.load(transcript)
    assert t.result is not None
    seats = [int(s) for s, info in t.seats.items() if info.get("player") == evaluated]
    placements = {int(k): int(v) for k, v in t.result["placements"].items()}
    n = len(t.seats)
    ranked = t.result["status"] == "completed" and t.result["summary"]["valid"]
    rows = []
    for seat in seats:
        rank = placements[seat] if ranked else n
        adh = t.result["adherence"][str(seat)]
        rows.append({"win": 1.0 if ranked and rank == 1 else 0.0,
                     "partial": (n - rank) / (n - 1) if ranked else 0.0,
                     "placement": float(rank),
                     "adherence": adh["valid_first_try"] / adh["decisions"]
                     if adh["decisions"] else float("nan")})
    out = {}
    for key in rows[0]:
        present = [r[key] for r in rows if r[key] == r[key]]  # a seat never asked: left out
        out[key] = sum(present) / len(present) if present else float("nan")
    return out


def log_text(log: EvalLog) -> str:
    return json.dumps(log.model_dump(mode="json"))
