"""The docs are references: their links resolve, and the tests they cite exist.

Cheap on purpose (no imports of the package, no rendering): every relative link of
README.md, docs/*.md and the games' READMEs points at a file (and, for a `#anchor` into a
Markdown file, at one of its headings), and every test that docs/decisions.md or a game's
README names as the one pinning a decision (`tests/FILE.py::test`, a spec scenario
`FILE.yaml::name`) is there, found with `ast` and a YAML read.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from stille_post.core.yamltext import safe_load

ROOT = Path(__file__).resolve().parent.parent
GAMES = ROOT / "stille_post" / "games"

# [text](target) outside code; a target has no spaces (titles are not used in these docs).
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
# tests/kit/test_kit.py::test_name, tests/x.py::Class::test_name, with a [param] maybe.
TEST_ID = re.compile(r"(tests/[\w/]+\.py)::([\w:]+)(?:\[[^\]`]*\])?")
# spec/<game>/FILE.yaml::name, or FILE.yaml::name inside a game's README.
SPEC_ID = re.compile(r"(?:spec/([\w-]+)/)?(\w+\.yaml)::([\w-]+)")


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted(GAMES.glob("*/README.md")), GAMES / "README.md", ROOT / "spec" / "README.md"]


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()


def prose(text: str) -> str:
    """The text without fenced code blocks and code spans (examples are not links)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return frozenset(slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+)$", text,
                                                          re.MULTILINE))


def broken_links(doc: Path) -> list[str]:
    problems = []
    for target in LINK.findall(prose(doc.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists():
            problems.append(f"{_name(doc)}: {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{_name(doc)}: {target}: no heading #{anchor}")
    return problems


@cache
def defined_tests(test_file: Path) -> frozenset[str]:
    """`name` and `Class::name` for every function and class of a test module."""
    tree = ast.parse(test_file.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names.update(f"{node.name}::{f.name}" for f in node.body
                         if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef))
    return frozenset(names)


def spec_folders(game: str) -> list[Path]:
    """Where a game's rulebook scenarios may live: its own folder or the top-level spec/."""
    return [GAMES / game.replace("-", "_") / "spec", ROOT / "spec" / game.replace("-", "_")]


@cache
def scenario_names(yaml_file: Path) -> frozenset[str]:
    data = safe_load(yaml_file.read_text(encoding="utf-8")) or {}
    return frozenset(str(s.get("name")) for s in data.get("scenarios", []) or [])


def missing_tests(doc: Path, default_game: str | None) -> tuple[list[str], int]:
    """The test ids `doc` names that do not exist, and how many it names in all."""
    text = doc.read_text(encoding="utf-8")
    problems, named = [], 0
    for file, test in TEST_ID.findall(text):
        named += 1
        path = ROOT / file
        if not path.exists():
            problems.append(f"{_name(doc)}: {file}::{test}: no such file")
        elif test not in defined_tests(path):
            problems.append(f"{_name(doc)}: {file}::{test}: no such test")
    for game, file, scenario in SPEC_ID.findall(text):
        named += 1
        game = game or default_game or ""
        found = [f / file for f in spec_folders(game) if (f / file).exists()] if game else []
        if not found:
            problems.append(f"{_name(doc)}: {file}::{scenario}: no scenario file {file} "
                            f"for game {game or '?'}")
        elif not any(scenario in scenario_names(f) for f in found):
            problems.append(f"{_name(doc)}: {file}::{scenario}: no such scenario")
    return problems, named


def test_every_relative_link_resolves() -> None:
    docs = doc_files()
    assert len(docs) >= 8, docs  # the README, the docs folder and four game READMEs
    problems = [p for doc in docs for p in broken_links(doc)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("doc", ["docs/decisions.md", *(
    _name(p) for p in sorted(GAMES.glob("*/README.md")))])
def test_every_test_a_doc_names_exists(doc: str) -> None:
    path = ROOT / doc
    game = path.parent.name if path.parent.parent == GAMES else None
    problems, named = missing_tests(path, game)
    assert not problems, "\n".join(problems)
    if doc == "docs/decisions.md":
        assert named >= 100, f"decisions.md names only {named} tests"


# A path of the machine the docs were written on, or a commit (7+ hex digits with a letter).
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:tmp|work|home|root)/")
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def machine_details(doc: Path) -> list[str]:
    problems = []
    for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
        for m in (*MACHINE_PATH.finditer(line), *COMMIT.finditer(line)):
            problems.append(f"{_name(doc)}:{n}: {m.group(0)!r}")
    return problems


def test_no_machine_paths_or_commit_hashes() -> None:
    problems = [p for doc in doc_files() for p in machine_details(doc)]
    assert not problems, "\n".join(problems)


def code_blocks(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S)]


def test_the_readme_quick_start_is_what_ci_runs() -> None:
    """The quick start's test command is one line of its own code block, and `.ci/run`
    runs that exact line (an unclosed fence or an edited command fails here)."""
    blocks = code_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    install = 'python3 -m venv .venv && .venv/bin/pip install -q -c constraints.txt -e ".[dev]"'
    quick = [b.strip() for b in blocks if b.startswith(install)]
    assert quick[0] == f"{install} && .venv/bin/stille-post play"
    assert quick[1].startswith(f"{install} && .venv/bin/python -m pytest --block-network")
    assert "\n" not in quick[1]
    assert quick[1] in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_the_checks_see_what_they_must(tmp_path: Path) -> None:
    """A planted broken link, a missing anchor, a test that is not there and a scenario
    that is not there are each reported (so the checks above cannot go blind)."""
    doc = tmp_path / "doc.md"
    doc.write_text(
        "[gone](nowhere.md) [ok](doc.md#a-heading) [bad anchor](doc.md#no-such)\n"
        "`[in code](nowhere.md)` [web](https://example.org)\n\n## A heading\n"
        "tests/test_docs.py::test_every_relative_link_resolves "
        "tests/test_docs.py::test_that_is_not_there "
        "spec/stille_post/matching.yaml::no-such-scenario\n"
        "see /tmp/run/x.md, commit d678803; game 1754984898827689 and runs/t1 are fine\n",
        encoding="utf-8")
    assert broken_links(doc) == [f"{_name(doc)}: nowhere.md: no such file",
                                 f"{_name(doc)}: doc.md#no-such: no heading #no-such"]
    problems, named = missing_tests(doc, None)
    assert named == 3
    assert [p.split(": ", 1)[1] for p in problems] == [
        "tests/test_docs.py::test_that_is_not_there: no such test",
        "matching.yaml::no-such-scenario: no such scenario"]
    assert [p.split(": ", 1)[1] for p in machine_details(doc)] == ["'/tmp/'", "'d678803'"]


def test_slugs_follow_github() -> None:
    assert slug("Rulings (where RULES.md §1 is silent)") == "rulings-where-rulesmd-1-is-silent"
    assert slug("The `--role` option") == "the---role-option"
