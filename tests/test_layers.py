"""The package's import arrows point down, and no two modules import each other.

Layers, lowest first (docs/architecture.md):

    core < providers < players < games < session, tournament, viewer < importers, export < cli
         < api, envs, inspect_tasks

A module may import its own layer and any lower one. An import that points up makes the
lower layer depend on everything above it (a provider change would then ripple into
core). Every import counts, also one inside a function or under TYPE_CHECKING: a lazy
import still ties the two modules together, it only hides the tie from a reader.

Read with the standard library's `ast`, so the test imports none of the package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "stille_post"

LAYERS: dict[str, int] = {
    "core": 0,
    "providers": 1,
    "players": 2,
    "games": 3,
    "session": 4, "tournament": 4, "viewer": 4,
    "importers": 5,
    "export": 5,  # games as data: re-plays games (games) and reads results folders
    "cli": 6,
    "configfiles": 6,  # the CLI's config files: they name games, players and tournaments
    # The public Python API and the environments: top layers, which nothing below imports
    # (the CLI included: `stille_post.play` and the CLI are two doors to the same rooms).
    "api": 7,
    "envs": 7,
    # Our games as Inspect tasks: the top, since Inspect loads it through an entry point
    # and nothing of ours imports it (an opponent seat uses the CLI's seat factory).
    "inspect_tasks": 7,
}

# Two-module circles still to break; each entry must still be a circle (so the list
# only ever shrinks), and no other circle may appear.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, module) of every `stille_post` import in the file, relative ones resolved.
    `from a.b import c` yields `a.b.c` when that is a module of ours, else `a.b`."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield node.lineno, sub if sub in MODULES else target


MODULES: dict[str, Path] = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "stille_post" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


@cache  # parsed when a test asks, not when pytest collects (~0.5 s per test process)
def arrows() -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        out[name] = [(line, m) for line, m in imported_modules(path, tree)
                     if m.startswith("stille_post")]
    return out


def upward_imports(graph: dict[str, list[tuple[int, str]]]) -> list[str]:
    bad = []
    for module, targets in graph.items():
        here = layer_of(module)
        for line, target in targets:
            there = layer_of(target)
            if here is not None and there is not None and there > here:
                bad.append(f"{MODULES[module].relative_to(PACKAGE.parent)}:{line} "
                           f"({module.split('.')[1]}) imports {target}")
    return bad


def circles(graph: dict[str, list[tuple[int, str]]]) -> set[frozenset[str]]:
    edges = {m: {t for _, t in ts if t in MODULES and t != m} for m, ts in graph.items()}
    return {frozenset({a, b}) for a, targets in edges.items() for b in targets
            if a in edges.get(b, ())}


def test_every_package_folder_has_a_layer() -> None:
    tops = {m.split(".")[1] for m in MODULES if m.count(".") >= 1}
    assert tops <= set(LAYERS), f"give these a layer: {sorted(tops - set(LAYERS))}"


def test_imports_point_down() -> None:
    assert upward_imports(arrows()) == []


def test_no_two_modules_import_each_other() -> None:
    found = circles(arrows())
    assert found - KNOWN_CIRCLES == set(), "new import circles"
    assert KNOWN_CIRCLES - found == set(), "broken circles: take them off KNOWN_CIRCLES"


@pytest.mark.parametrize(("module", "target"), [
    ("stille_post.core.outcome", "stille_post.providers.base"),
    ("stille_post.players.llm", "stille_post.games.kit.table"),
    ("stille_post.tournament.report", "stille_post.cli.render"),
    ("stille_post.cli.play", "stille_post.api"),
    ("stille_post.session", "stille_post.envs.episode"),
    ("stille_post.cli.play", "stille_post.inspect_tasks.task"),
])
def test_an_upward_import_is_caught(module: str, target: str) -> None:
    known = arrows()
    graph = {**known, module: [*known[module], (1, target)]}
    assert any(target in line for line in upward_imports(graph))


def test_a_new_circle_is_caught() -> None:
    a, b = "stille_post.games.kit.votes", "stille_post.games.kit.framing"
    known = arrows()
    graph = {**known, a: [*known[a], (1, b)], b: [*known[b], (1, a)]}
    assert frozenset({a, b}) in circles(graph)
