"""Self-test of the rulebook checks (kit/rulebook.py): a throwaway game package with a
trivial runner hook and deliberately broken scenario files. Each failure is reported
clearly and names its file, and a bad file does not stop the good ones."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from stille_post.core.errors import ScenarioError
from stille_post.games.kit.definition import GameDefinition
from stille_post.games.kit.rulebook import cases, run_case

HOOKS = '''
from stille_post.games.kit.scenarios import RulebookHooks

def run(scenario):
    events = [
        {"seq": 1, "type": "game_start", "round": 0, "turn": 0, "actor": None,
         "visibility": "public", "data": {"n": 2}},
        {"seq": 2, "type": "hint", "round": 1, "turn": 1, "actor": None,
         "visibility": [1], "data": {"kind": "tier", "value": "flagship/large"}},
    ]
    return events, {"status": "completed", "placements": {1: 1, 2: 2}}

HOOKS = RulebookHooks(run=run)
'''

FILES = {
    "good.yaml": """
name: good
rule: "demo"
then:
  events: [{type: game_start}, {type: hint, visibility: [1], data: {kind: tier}}]
  result: {placements: {1: 1}}
  count: {hint: 1}
""",
    "unknown_key.yaml": """
name: typo
rule: "demo"
thne: {}
then: {count: {hint: 1}}
""",
    "no_then.yaml": """
scenarios:
  - {name: has-no-then, rule: "demo", given: {}}
""",
    "not_yaml.yaml": "name: [unclosed\n",
    "wrong_order.yaml": """
name: wrong-order
rule: "demo"
then:
  events: [{type: hint}, {type: game_start}]
  result: {placements: {2: 1}}
""",
}


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[GameDefinition]:
    package = tmp_path / "demo_rulebook_game"
    (package / "spec").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "hooks.py").write_text(HOOKS, encoding="utf-8")
    for name, text in FILES.items():
        (package / "spec" / name).write_text(text, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    yield cast(GameDefinition, SimpleNamespace(
        name="demo", package="demo_rulebook_game", rulebook="demo_rulebook_game.hooks:HOOKS"))
    sys.path.remove(str(tmp_path))
    for mod in [m for m in sys.modules if m.startswith("demo_rulebook_game")]:
        del sys.modules[mod]


def outcome(game: GameDefinition) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for case in cases(game):
        try:
            out[case.id] = run_case(game, case) or "passed"
        except ScenarioError as exc:
            out[case.id] = f"malformed: {exc}"
    return out


def test_bad_files_are_reported_and_good_ones_still_run(demo: GameDefinition) -> None:
    got = outcome(demo)
    assert got["demo/good.yaml::good[good]"] == "passed"
    assert got["demo/unknown_key.yaml::unknown_key[typo]"] == (
        "malformed: unknown top-level key(s) ['thne']; allowed: "
        "['name', 'rule', 'given', 'when', 'then']")
    assert got["demo/no_then.yaml::no_then[has-no-then]"] == (
        "malformed: missing required key(s) ['then']")
    assert got["demo/not_yaml.yaml::not_yaml[<file>]"].startswith("malformed: not valid YAML")
    # a real mismatch: the expected list with the missing entry marked, then the events
    events, result = got["demo/wrong_order.yaml::wrong_order[wrong-order]"]
    assert "✗ NOT FOUND after seq 2" in events
    assert "search for [1] started after the last event" in events
    assert "placements.2: expected 1, got 2" in result
