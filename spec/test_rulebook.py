"""Every registered game's rulebook (`games/<game>/spec/*.yaml`), one item per scenario.

    pytest spec                      # every game's rulebook
    pytest spec -k chameleon         # one game
    pytest spec -k roulette          # scenarios whose id mentions "roulette"

An item's id is `<game>/<file>::<file stem>[<scenario name>]`. A malformed file or
scenario is a failing item that names its file, never a collection error.
"""

from __future__ import annotations

import pytest

from stille_post.core.errors import ScenarioError
from stille_post.games import all_games
from stille_post.games.kit.rulebook import Case, cases, run_case

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

GAMES = all_games()
CASES = [case for game in GAMES.values() for case in cases(game)]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_scenario(case: Case) -> None:
    where = f"{GAMES[case.game].package.replace('.', '/')}/spec/{case.file} :: {case.name}"
    malformed = None
    try:
        problems = run_case(GAMES[case.game], case)
    except ScenarioError as exc:
        malformed = str(exc)
    if malformed is not None:
        pytest.fail(f"{where}: malformed scenario: {malformed}", pytrace=False)
    if problems:
        rule = case.scenario.get("rule", "") if isinstance(case.scenario, dict) else ""
        pytest.fail(f"{where}\nrule: {rule}\n" + "\n\n".join(problems), pytrace=False)
