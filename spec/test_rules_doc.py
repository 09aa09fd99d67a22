"""docs/rules.md, the project's own statement of the four games' rules, stays true to the
rulebook: every scenario it cites exists, each game's section cites scenarios of that
game, and no doc sends a reader to a file outside the repository (the shared rulebook
and design card the project was started from are not part of a clone)."""

from __future__ import annotations

import re

from tests.test_docs import ROOT, SPEC_ID, doc_files, missing_tests

RULES = ROOT / "docs" / "rules.md"
# How a doc would point outside the repository: the shared folder's files by name, or a
# path that climbs out of the clone.
OUTSIDE = re.compile(r"RULES\.md|DESIGN\.md|\.\./shared|shared folder|seeds/\d{3}")


def test_every_scenario_the_rules_cite_exists() -> None:
    problems, named = missing_tests(RULES, None)
    assert not problems, "\n".join(problems)
    assert named >= 80, named


def test_each_game_section_cites_its_own_rulebook() -> None:
    text = RULES.read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.MULTILINE)[1:]
    games = {"§1 Stille Post": "stille_post", "§2 The Elimination Game": "elimination",
             "§3 The Chameleon": "chameleon", "§4 Connections": "connections"}
    assert [s.splitlines()[0] for s in sections] == list(games)
    for section in sections:
        game = games[section.splitlines()[0]]
        cited = {g for g, _f, _n in SPEC_ID.findall(section)}
        assert cited == {game}, (game, cited)
        assert f"../stille_post/games/{game}/README.md" in section  # the details


def test_no_doc_points_outside_the_repository() -> None:
    docs = [*doc_files(), *sorted((ROOT / "cassettes").rglob("*.md")),
            *sorted(ROOT.glob("stille_post/games/*/*.md"))]
    found = [f"{p.relative_to(ROOT)}:{n}: {m.group(0)}" for p in docs
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
             for m in OUTSIDE.finditer(line)]
    assert not found, "\n".join(found)
