"""Print the summary and the report of two small fixed-seed bot folders as JSON.

Run once against main's code before the streaming change (PYTHONPATH=<main's tree>) to
write streamed_golden.json; tests/perf/test_streamed_results.py runs it against the
current code and compares."""
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from stille_post.tournament import TournamentConfig, run_tournament
from stille_post.tournament.report import build_report
from stille_post.tournament.results import aggregate, load_results


def strip(d):
    if isinstance(d, dict):
        return {k: strip(v) for k, v in d.items() if k not in ("folder", "out")}
    if isinstance(d, list):
        return [strip(v) for v in d]
    return d

out = {}
with tempfile.TemporaryDirectory() as tmp:
    for name, cfg in (("default", TournamentConfig(game="stille-post", games=24, seed=5)),
                      ("selfplay", TournamentConfig(game="stille-post", games=16, seed=9,
                       players=("bot:random", "bot:detective", "bot:random", "bot:detective")))):
        f = Path(tmp) / name
        asyncio.run(run_tournament(cfg, f, durable=False))
        out[name] = {"summary": strip(aggregate(load_results(f))),
                     "report": strip(build_report(f, passes=4, seed=1, cache=False))}
json.dump(out, sys.stdout, sort_keys=True, indent=1)
