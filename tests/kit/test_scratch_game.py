"""A built-in game is one folder: the scratch game of tests/kit/scratch_game/
(Highest Unique Number, written against the kit only) becomes a built-in game by its
folder alone.

- in process (fast): its folder joins the `stille_post.games` package, the registry
  lists it as a built-in game, and its rulebook passes through the kit's generic runner
  (the conformance checks run on it through tests/kit/conftest.py's `game` fixture);
- `slow`: the folder is copied into `stille_post/games/` of a temporary copy of the
  source tree, touching no other file; its rulebook and the conformance checks pass
  there, and the wheel built from that copy holds its code, data and rulebook.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from stille_post.core.errors import ScenarioError
from stille_post.games import _builtin, get_game
from stille_post.games.kit.definition import GameDefinition
from stille_post.games.kit.rulebook import Case, cases, run_case
from stille_post.games.kit.scenarios import play_scenario

from .conftest import SCRATCH_GAMES, scratch_builtin

ROOT = Path(__file__).resolve().parents[2]
FOLDER = "highest_unique"


@pytest.fixture
def scratch() -> Iterator[GameDefinition]:
    with scratch_builtin():
        yield get_game("highest-unique")


def test_the_folder_alone_makes_a_built_in_game(scratch: GameDefinition) -> None:
    assert scratch.package == f"stille_post.games.{FOLDER}"
    assert scratch in _builtin()  # found as a folder of the package, not as a plugin


def test_its_rulebook_passes_through_the_generic_runner(scratch: GameDefinition) -> None:
    found = list(cases(scratch))
    assert [c.name for c in found] == [
        "the-highest-unique-pick-scores", "no-unique-pick-draws-among-the-highest",
        "a-number-off-the-list-is-re-asked", "one-seat-is-refused"]
    for case in found:
        assert run_case(scratch, case) == [], case.id


def test_a_scenario_that_disagrees_with_the_rules_fails(scratch: GameDefinition) -> None:
    case = next(c for c in cases(scratch) if c.name == "the-highest-unique-pick-scores")
    wrong = {**case.scenario, "then": {"result": {"winners": [1]}}}
    problems = run_case(scratch, Case(case.game, case.file, case.name, wrong))
    assert problems and "winners" in problems[0]


def test_a_forced_draw_never_used_is_an_error(scratch: GameDefinition) -> None:
    scenario = {"name": "x", "rule": "x", "given": {"config": {"num_players": 2, "rounds": 1},
                                                    "rng": {"choice": [1]}},
                "when": {"seats": {1: ["3"], 2: ["4"]}}, "then": {"count": {"pick": 2}}}
    with pytest.raises(ScenarioError, match="never drawn"):
        play_scenario(scratch, scenario)


def _source_copy(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)


@pytest.mark.slow
def test_copied_into_the_package_it_passes_and_ships(tmp_path: Path) -> None:
    src = tmp_path / "src"
    _source_copy(src)
    before = {p.relative_to(src) for p in src.rglob("*") if p.is_file()}
    shutil.copytree(SCRATCH_GAMES / FOLDER, src / "stille_post" / "games" / FOLDER,
                    ignore=shutil.ignore_patterns("__pycache__"))
    after = {p.relative_to(src) for p in src.rglob("*") if p.is_file()}
    added = after - before
    assert added and all(p.parts[:3] == ("stille_post", "games", FOLDER) for p in added)

    # its rulebook and the conformance checks, with the copy's package first on the path
    env = {"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "-n", "0", "spec/test_rulebook.py", "tests/kit/test_conformance.py",
         "-k", "highest"], cwd=src, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    passed = int(re.search(r"(\d+) passed", run.stdout).group(1))  # type: ignore[union-attr]
    assert passed >= 4 + 5, run.stdout[-2000:]  # its 4 scenarios and the conformance checks

    # the wheel holds its code, its data and its rulebook (built offline: `wheel` is a
    # test dependency)
    pytest.importorskip("wheel", reason="building a wheel offline needs `wheel`")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
                   check=True, capture_output=True, timeout=600)
    wheel = next((tmp_path / "dist").glob("*.whl"))
    inside = set(zipfile.ZipFile(wheel).namelist())
    for name in ("__init__.py", "game.py", "data/numbers.txt", "spec/rounds.yaml"):
        assert f"stille_post/games/{FOLDER}/{name}" in inside, name


def test_an_expected_refusal_that_does_not_come_fails(scratch: GameDefinition) -> None:
    case = next(c for c in cases(scratch) if c.name == "one-seat-is-refused")
    wrong = {**case.scenario, "given": {"config": {"num_players": 2, "rounds": 1}}}
    problems = run_case(scratch, Case(case.game, case.file, case.name, wrong))
    assert problems == ["then.error: expected a refusal containing '--num-players', "
                        "got 'no error'"]
