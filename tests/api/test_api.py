"""The public Python API: `stille_post.play`, `play_async`, `tournament`, `games` and
`load_transcript`, nothing else public; the same games and records as the CLI; the
README's "From Python" section runs as written; the base install needs no extra."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import stille_post
from stille_post.core.errors import UsageError
from stille_post.core.transcript import canonical_text
from tests.clirun import keyless_env, run_many

ROOT = Path(__file__).resolve().parents[2]


def test_only_the_five_names_are_public() -> None:
    assert sorted(stille_post.__all__) == ["games", "load_transcript", "play",
                                           "play_async", "tournament"]
    for name in stille_post.__all__:
        assert callable(getattr(stille_post, name))
    with pytest.raises(AttributeError):
        _ = stille_post.nothing_like_this  # type: ignore[attr-defined]


def test_play_alone_plays_the_default_bots_as_the_cli_does(tmp_path: Path) -> None:
    result = stille_post.play("chameleon", seed=3, transcript=tmp_path / "api.jsonl")
    cli = run_many([["play", "chameleon", "--seed", "3", "--json",
                     "--out", str(tmp_path / "cli.jsonl")]], cwd=tmp_path,
                   env=keyless_env())[0]
    assert cli.returncode == 0, cli.stderr
    assert result.summary == json.loads(cli.stdout)
    assert canonical_text(tmp_path / "api.jsonl") == canonical_text(tmp_path / "cli.jsonl")
    assert result.status == "completed" and result.seed == 3
    assert result.placements == {int(k): v for k, v in result.summary["placements"].items()}
    assert set(result.seats) == {1, 2, 3, 4}
    assert all(row["player"].startswith("bot:") for row in result.seats.values())


def test_players_options_and_a_transcript_that_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first = stille_post.play("stille-post", players="detective,random,gambler",
                             options={"max_rounds": 2}, seed=9, transcript=path)
    second = stille_post.play("stille-post", players=["detective", "random", "gambler"],
                              options={"max_rounds": 2}, seed=9, transcript=path)
    assert first.transcript == path and second.transcript == tmp_path / "t-2.jsonl"
    assert canonical_text(path) == canonical_text(second.transcript)
    game = stille_post.load_transcript(path)
    assert game.complete and game.header["config"]["max_rounds"] == 2
    assert len(game.seats) == 3 and game.summary.turns == first.summary["turns"]


def test_no_transcript_is_kept_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    monkeypatch.chdir(tmp_path)
    result = stille_post.play("chameleon", seed=1)
    assert result.transcript is None and list(tmp_path.iterdir()) == []


def test_play_async_and_play_inside_a_running_loop() -> None:
    async def notebook() -> tuple[stille_post.api.GameResult, stille_post.api.GameResult]:
        awaited = await stille_post.play_async("chameleon", seed=4)
        blocking = stille_post.play("chameleon", seed=4)  # a cell that forgot `await`
        return awaited, blocking

    awaited, blocking = asyncio.run(notebook())
    assert awaited.summary == blocking.summary


def test_games_is_what_the_cli_lists(tmp_path: Path) -> None:
    cli = run_many([["games", "--json"]], cwd=tmp_path, env=keyless_env())[0]
    listed = {g["name"]: g for g in json.loads(cli.stdout)["games"]}
    assert json.loads(json.dumps(stille_post.games(), default=str)) == listed
    assert {"stille-post", "elimination", "connections", "chameleon"} <= set(listed)


def test_load_transcript_refuses_what_is_not_one(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"kind": "event"}\n', encoding="utf-8")
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00garbage\n{}\n")
    for path, message in ((tmp_path / "none.jsonl", "no transcript at"),
                          (tmp_path, "no transcript at"),
                          (tmp_path / "bad.jsonl", "no header line"),
                          (tmp_path / "bin.jsonl", "not valid UTF-8")):
        with pytest.raises(UsageError, match=message) as raised:
            stille_post.load_transcript(path)
        assert "\n" not in str(raised.value)


def test_a_tournament_is_the_cli_s(tmp_path: Path) -> None:
    board = stille_post.tournament("chameleon", games=3, seed=2, out=tmp_path / "api",
                                   players="heuristic,copycat,heuristic,heuristic")
    cli = run_many([["tournament", "chameleon", "--games", "3", "--seed", "2", "--out",
                     str(tmp_path / "cli"), "--players", "heuristic,copycat,heuristic,heuristic",
                     "--json", "--workers", "1"]], cwd=tmp_path, env=keyless_env())[0]
    assert cli.returncode == 0, cli.stderr
    expected = json.loads(cli.stdout)
    expected.pop("this_run")
    assert expected.pop("out") == str(tmp_path / "cli")
    assert board.summary.pop("out") == str(tmp_path / "api")
    assert (board.played, board.skipped, board.aborted) == (3, 0, 0)
    assert json.loads(json.dumps(board.summary)) == expected
    for name in sorted(p.name for p in (tmp_path / "cli" / "games").glob("*.jsonl")):
        assert canonical_text(tmp_path / "api" / "games" / name) == \
            canonical_text(tmp_path / "cli" / "games" / name)
    with pytest.raises(UsageError, match="tournament has no setting 'gamez'"):
        stille_post.tournament("chameleon", gamez=3)
    with pytest.raises(UsageError, match="games"):
        stille_post.tournament("chameleon", games=0, out=tmp_path / "zero")


def from_python_blocks() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


def test_the_readme_s_from_python_section_runs_as_written(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    blocks = from_python_blocks()
    assert len(blocks) == 2 and "stille_post.play(" in blocks[0] and "aec_env" in blocks[1]
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "README.md (From Python)", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("completed {1: ")
    assert out[2] == "['chameleon', 'connections', 'elimination', 'stille-post']"
    assert out[3].startswith("4 ")
    assert (tmp_path / "runs" / "elimination-5.jsonl").is_file()


BLOCK_EXTRAS = '''
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pettingzoo", "gymnasium", "textarena"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
'''


def test_the_base_install_needs_no_extra() -> None:
    """With pettingzoo, gymnasium and textarena unimportable: the API plays, and
    `stille_post.envs` is one ImportError line naming the extra."""
    code = BLOCK_EXTRAS + '''
import stille_post
print(stille_post.play("chameleon", seed=3).status)
try:
    import stille_post.envs
except ImportError as exc:
    print(exc)
'''
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=keyless_env(), timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == ["completed", "stille_post.envs needs the envs extra (missing "
                     "gymnasium): pip install 'stille_post[envs]'"]


def test_importing_the_package_loads_no_api_or_env_module() -> None:
    code = ("import sys, stille_post; print(sorted(m for m in sys.modules if m.startswith("
            "('stille_post.api', 'stille_post.envs', 'stille_post.session'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=dict(os.environ), timeout=60, check=False)
    assert done.stdout.strip() == "[]", done.stderr
