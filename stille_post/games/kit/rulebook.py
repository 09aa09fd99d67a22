"""The rulebook as data: a game's `spec/*.yaml` scenarios, read, validated and checked.

A built-in game keeps its rulebook in its own folder (`games/<game>/spec/*.yaml`); the
scenarios are played by the kit's generic runner (`kit/scenarios.py`) with the game's
optional hooks, and checked here. The top-level `spec/` folder only collects every
registered game's rulebook as pytest items.

A YAML file holds one scenario mapping, or `scenarios: [...]`. The generic checks are
`then.events` (an ordered subsequence of partial matches), `then.result` (a partial
match), `then.absent`, `then.absent_events`, `then.count` and `then.error` (a setup the
game must refuse); a game's hooks may add `then:` keys of their own. See
docs/game-kit.md for the format.

A malformed file or scenario is a *problem* that names the file, never an exception
that stops the rest of the rulebook.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from stille_post.core import yamltext
from stille_post.core.errors import ScenarioError

if TYPE_CHECKING:
    from stille_post.games.kit.definition import GameDefinition

SCENARIO_KEYS = ("name", "rule", "given", "when", "then")
REQUIRED_KEYS = ("name", "rule", "then")
THEN_KEYS = ("events", "result", "absent", "absent_events", "count", "error")
SPEC_FOLDER = "spec"  # inside a game's package
_MISSING = object()


# --- loading and validating ----------------------------------------------------------

def load_file(path: Path | Traversable) -> list[Any]:
    """The raw scenarios of one file (each validated later, on its own)."""
    try:
        doc = yamltext.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ScenarioError(f"not valid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise ScenarioError("the file must hold a scenario mapping or `scenarios: [...]`")
    if "scenarios" not in doc:
        return [doc]
    extra = sorted(set(doc) - {"scenarios"})
    if extra:
        raise ScenarioError(f"unknown top-level key(s) {extra} next to `scenarios` "
                            "(a file is one scenario or `scenarios: [...]`, not both)")
    if not isinstance(doc["scenarios"], list) or not doc["scenarios"]:
        raise ScenarioError("`scenarios` must be a non-empty list of scenario mappings")
    return list(doc["scenarios"])


def validate(scenario: Any, extra_then: Iterable[str] = ()) -> None:
    if not isinstance(scenario, dict):
        raise ScenarioError(f"a scenario must be a mapping, got {type(scenario).__name__}")
    unknown = sorted(set(scenario) - set(SCENARIO_KEYS))
    if unknown:
        raise ScenarioError(f"unknown top-level key(s) {unknown}; allowed: {list(SCENARIO_KEYS)}")
    missing = [k for k in REQUIRED_KEYS if k not in scenario]
    if missing:
        raise ScenarioError(f"missing required key(s) {missing}")
    for key in ("given", "when", "then"):
        if key in scenario and not isinstance(scenario[key], dict):
            raise ScenarioError(f"`{key}` must be a mapping")
    then = scenario["then"]
    allowed = (*THEN_KEYS, *sorted(extra_then))
    unknown = sorted(set(then) - set(allowed))
    if unknown:
        raise ScenarioError(f"unknown `then` key(s) {unknown}; allowed: {list(allowed)}")
    if not then:
        raise ScenarioError("`then` asserts nothing")
    for key in ("events", "absent_events"):
        if not all(isinstance(e, dict) for e in then.get(key) or []):
            raise ScenarioError(f"`then.{key}` must be a list of mappings")
    if not all(isinstance(t, str) for t in then.get("absent") or []):
        raise ScenarioError("`then.absent` must be a list of event types")
    count = then.get("count") or {}
    if not isinstance(count, dict) or not all(isinstance(n, int) for n in count.values()):
        raise ScenarioError("`then.count` must map event types to integers")


# --- partial matching ----------------------------------------------------------------

def _key(actual: Mapping[Any, Any], key: Any) -> Any:
    """YAML keys `1` and `"1"` both find a seat key, whichever way the result spells it."""
    if key in actual:
        return key
    if str(key) in actual:
        return str(key)
    if isinstance(key, str) and key.isdigit() and int(key) in actual:
        return int(key)
    return _MISSING


def _equal(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, dict):
        if not isinstance(actual, Mapping) or len(expected) != len(actual):
            return False
        return all((k2 := _key(actual, k)) is not _MISSING and _equal(v, actual[k2])
                   for k, v in expected.items())
    if isinstance(expected, list | tuple):
        return (isinstance(actual, list | tuple) and len(expected) == len(actual)
                and all(_equal(e, a) for e, a in zip(expected, actual, strict=True)))
    return bool(expected == actual)


def mismatches(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Why `actual` does not match `expected`: dicts match as subsets, the rest by equality."""
    if isinstance(expected, dict):
        if not isinstance(actual, Mapping):
            return [f"{path or '.'}: expected a mapping, got {_short(actual)}"]
        out: list[str] = []
        for k, v in expected.items():
            k2 = _key(actual, k)
            sub = f"{path}.{k}" if path else str(k)
            if k2 is _MISSING:
                out.append(f"{sub}: missing (expected {_short(v)})")
            else:
                out.extend(mismatches(v, actual[k2], sub))
        return out
    if not _equal(expected, actual):
        return [f"{path or '.'}: expected {_short(expected)}, got {_short(actual)}"]
    return []


# --- readable output -----------------------------------------------------------------

def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def event_line(e: Mapping[str, Any]) -> str:
    actor = "-" if e.get("actor") is None else str(e["actor"])
    vis = e.get("visibility")
    vis_s = vis if isinstance(vis, str) else ",".join(map(str, vis or [])) or "log"
    raw = dict(e.get("data") or {})
    raw["text"] = raw.pop("text", None)  # last: the short fields are what a diff is about
    data = {k: (v[:40] + "…" if isinstance(v, str) and len(v) > 41 else v)
            for k, v in raw.items() if v is not None or k != "text"}
    return (f"{e.get('seq', '?'):>4} {e.get('type', '?'):<22} {actor:>2} {vis_s:<7} "
            f"{_short(data, 150)}")


def check_events(expected: list[dict[str, Any]], events: list[dict[str, Any]]) -> str | None:
    """Greedy in-order search: the earliest match for each entry is never worse, so a
    miss here means no ordered subsequence exists."""
    pos, found = 0, list[int]()
    for i, want in enumerate(expected):
        hit = next((j for j in range(pos, len(events)) if not mismatches(want, events[j])), None)
        if hit is None:
            return _events_report(expected, events, found, i, pos)
        found.append(hit)
        pos = hit + 1
    return None


def _events_report(expected: list[dict[str, Any]], events: list[dict[str, Any]],
                   found: list[int], missing: int, pos: int) -> str:
    after = f"after seq {events[pos - 1].get('seq')}" if pos else "anywhere"
    lines = ["then.events: an expected entry was not found in order", "expected (in order):"]
    for i, want in enumerate(expected):
        if i < missing:
            mark = f"  ✓ matched seq {events[found[i]].get('seq')}"
        elif i == missing:
            mark = f"  ✗ NOT FOUND {after}"
        else:
            mark = "    (not reached)"
        lines.append(f"  [{i}] {_short(want, 110)}{mark}")
    want = expected[missing]
    near = [e for e in events[pos:] if e.get("type") == want.get("type")][:3]
    if near:
        lines.append(f"closest actual events of type {want.get('type')!r} {after}:")
        for e in near:
            lines.append(f"  seq {e.get('seq')}: " + "; ".join(mismatches(want, e)))
    lines.append("actual events (seq type actor visibility data):")
    for j, e in enumerate(events):
        tag = next((f"<- [{i}]" for i, f in enumerate(found) if f == j), "")
        if j == pos and pos:
            lines.append(f"  {'-' * 20} search for [{missing}] started here {'-' * 20}")
        lines.append(f"  {event_line(e)} {tag}".rstrip())
    if pos and pos >= len(events):
        lines.append(f"  {'-' * 20} search for [{missing}] started after the last event "
                     f"{'-' * 20}")
    return "\n".join(lines)


def check_then(then: Mapping[str, Any], events: list[dict[str, Any]],
               result: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    if then.get("events"):
        report = check_events(list(then["events"]), events)
        if report:
            problems.append(report)
    if "result" in then:
        bad = mismatches(then["result"], result)
        if bad:
            problems.append("then.result does not match:\n" + "\n".join(f"  {b}" for b in bad))
    for etype in then.get("absent") or []:
        hits = [e for e in events if e.get("type") == etype]
        if hits:
            problems.append(f"then.absent: {etype!r} must not occur, but did:\n"
                            + "\n".join(f"  {event_line(e)}" for e in hits))
    for want in then.get("absent_events") or []:
        hits = [e for e in events if not mismatches(want, e)]
        if hits:
            problems.append(f"then.absent_events: {_short(want)} must not occur, but did:\n"
                            + "\n".join(f"  {event_line(e)}" for e in hits))
    for etype, n in (then.get("count") or {}).items():
        hits = [e for e in events if e.get("type") == etype]
        if len(hits) != n:
            problems.append(f"then.count: expected {n} {etype!r} event(s), got {len(hits)}"
                            + "".join(f"\n  {event_line(e)}" for e in hits))
    return problems


def check_error(then: Mapping[str, Any], result: Mapping[str, Any]) -> list[str]:
    """`then.error`: the game must refuse the scenario's set-up with this message."""
    if "error" not in then:
        return []
    err = str(result.get("error") or "")
    if str(then["error"]) not in err:
        return [f"then.error: expected a refusal containing {then['error']!r}, "
                f"got {err or 'no error'!r}"]
    return []


# --- a game's rulebook ---------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One scenario of a game's rulebook, or the problem that stops it from being one."""

    game: str
    file: str  # the file's name inside the game's spec folder
    name: str
    scenario: Any
    problem: str | None = None

    @property
    def id(self) -> str:
        return f"{self.game}/{self.file}::{Path(self.file).stem}[{self.name}]"


def scenario_files(definition: GameDefinition) -> list[Traversable]:
    """The game's `spec/*.yaml` files, shipped in its package (empty for none)."""
    folder = resources.files(definition.package).joinpath(SPEC_FOLDER)
    if not folder.is_dir():
        return []
    return sorted((f for f in folder.iterdir() if f.name.endswith((".yaml", ".yml"))),
                  key=lambda f: f.name)


def cases(definition: GameDefinition) -> Iterator[Case]:
    for path in scenario_files(definition):
        try:
            scenarios = load_file(path)
        except ScenarioError as exc:
            yield Case(definition.name, path.name, "<file>", {}, str(exc))
            continue
        seen: set[str] = set()
        for i, sc in enumerate(scenarios, start=1):
            name = sc.get("name") if isinstance(sc, dict) else None
            problem = None
            if not isinstance(name, str) or not name:
                name, problem = f"#{i}", "missing required key(s) ['name']"
            if name in seen:
                name, problem = f"{name}#{i}", f"duplicate scenario name {name!r}"
            seen.add(name)
            yield Case(definition.name, path.name, name, sc, problem)


def run_case(definition: GameDefinition, case: Case) -> list[str]:
    """Play one scenario and check it: the problems found, empty when it holds. A
    malformed scenario raises ScenarioError."""
    from stille_post.games.kit.scenarios import hooks_of, play_scenario

    if case.problem:
        raise ScenarioError(case.problem)
    hooks = hooks_of(definition)
    validate(case.scenario, hooks.then)
    events, result = play_scenario(definition, case.scenario, hooks)
    then = case.scenario["then"]
    problems = check_then(then, events, result) + check_error(then, result)
    if hooks.check is not None:
        problems.extend(hooks.check(case.scenario, events, result))
    return problems
