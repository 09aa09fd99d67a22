"""Adding a game is one folder: the toy game of tests/toy_rps, registered from outside the
package, goes through play, tournament, report and view end to end, and the generic
layers name no game."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from tests import clirun

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "STILLE_POST_GAMES": "tests.toy_rps:GAME"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return clirun.run_cli(*args, env=ENV)


def test_the_toy_game_goes_through_every_command(tmp_path: Path) -> None:
    games = json.loads(_cli("games", "--json").stdout)["games"]
    toy = next(g for g in games if g["name"] == "toy-rps")
    assert toy["options"]["rounds"]["flag"] == "--rounds" and "long" in toy["presets"]

    assert "--rounds" in _cli("play", "toy-rps", "--help").stdout

    out = tmp_path / "one.jsonl"
    done = _cli("play", "toy-rps", "--seed", "4", "--rounds", "5", "--json", "--out", str(out))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["game"] == "toy-rps" and summary["turns"] == 5

    folder = tmp_path / "t"
    done = _cli("tournament", "toy-rps", "--games", "12", "--seed", "1", "--preset", "long",
                "--players", "rock,random", "--out", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"]["completed"] == 12

    done = _cli("report", str(folder), "--passes", "3", "--json", "--html",
                str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert {r["player"] for r in report["leaderboard"]} == {"bot:rock", "bot:random"}
    assert (tmp_path / "r.html").stat().st_size > 10_000

    done = _cli("view", str(out), "-o", str(tmp_path / "one.html"))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "one.html").read_text(encoding="utf-8")
    assert "Rock-paper-scissors (toy)" in page


def test_the_generic_layers_name_no_game() -> None:
    """cli/, tournament/, viewer/, inspect_tasks/ and session.py read typed contracts only
    (the program's and the package's own names aside)."""
    pattern = re.compile(r"chameleon|[\"'](elimination|connections)[\"']|stille.?post",
                         re.IGNORECASE)
    allowed = re.compile(r"stille_post[./]|from stille_post import|"
                         r"`?stille-post`?(?= |$|`|\")|StillePost(Layouts|Viewer)|"
                         r"STILLE_POST_|prog_name|\"stille-post\"|stille-post (play|tournament"
                         r"|report|view|merge|games|import)|stille-post:")
    files = [*ROOT.joinpath("stille_post", "cli").glob("*.py"),
             *ROOT.joinpath("stille_post", "tournament").glob("*.py"),
             *ROOT.joinpath("stille_post", "viewer").glob("*.py"),
             *ROOT.joinpath("stille_post", "viewer", "static").glob("*.js"),
             *ROOT.joinpath("stille_post", "inspect_tasks").glob("*.py"),
             ROOT / "stille_post" / "session.py"]
    hits = []
    for path in files:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            # "elimination" is also a generic event kind, the only one a layer may name.
            if pattern.search(allowed.sub("", line)) and "generic" not in line:
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "\n".join(hits)
