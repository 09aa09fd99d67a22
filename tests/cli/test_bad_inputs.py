"""The CLI's contract, driven through the INSTALLED console script in subprocesses.

Every bad input exits with its code (2 for a usage or input error, 1 for a failed run),
prints exactly one line on stderr, and never a traceback. The cases avoid game-specific
options on purpose (those parsers belong to each game): they are seeds, files, folders,
cassettes, shards, counts, rate limits, player specs, game names and unknown options.

A few cases (`THROUGH_THE_SCRIPT`) run through the installed console script, one process
each; the rest run in processes forked from one interpreter that imported the CLI once
(tests/clirun.py), which saves importing the CLI per case. The script cases run both ways and
must agree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.clirun import keyless_env, run_many

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

BOTS = "detective,random,gambler,cautious"
LLM_SEATS = "openai:gpt-5-mini,random,gambler,cautious"


def console_script() -> str:
    """The installed `stille-post`: beside this interpreter, else on PATH."""
    here = Path(sys.executable).parent / "stille-post"
    if here.is_file():
        return str(here)
    found = shutil.which("stille-post")
    if found is None:
        pytest.skip("the stille-post console script is not installed")
    return found


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]
    code: int
    why: str
    # extra check on the folder after the run (e.g. no .tmp file left behind)
    after: Callable[[Path], bool] | None = None
    max_stderr_lines: int = 1
    min_stderr_lines: int = 1
    slow: bool = False  # a variant of a core case: kept out of the core table
    known_gap: str | None = None  # a strict xfail: the owner of that code must fix it


def no_tmp(folder: Path) -> bool:
    return not list(folder.rglob("*.tmp"))


def cases() -> list[Case]:
    c: list[Case] = []

    def add(code: int, why: str, *argv: str, **kw: object) -> None:
        c.append(Case(tuple(argv), code, why, **kw))  # type: ignore[arg-type]

    # --- global --------------------------------------------------------------------
    add(2, "unknown option", "--bogus")
    add(2, "unknown command", "nosuchcommand")
    # --- play: seeds, options, players, games ----------------------------------------
    add(2, "seed not a number", "play", "--seed", "abc")
    add(2, "seed a float", "play", "--seed", "1.5")
    add(2, "seed empty", "play", "--seed", "")
    add(2, "seed without value", "play", "--seed")
    add(2, "unknown play option", "play", "--bogus")
    add(2, "unknown game", "play", "nosuchgame", "--seed", "1")
    add(2, "unknown bot", "play", "--seed", "1", "--players", "nosuchbot,random,random,random")
    add(2, "empty players", "play", "--seed", "1", "--players", "")
    add(2, "players only commas", "play", "--seed", "1", "--players", ",,,")
    add(2, "LLM seat without --online", "play", "--seed", "1", "--players", LLM_SEATS)
    add(2, "unknown provider kind", "play", "--seed", "1", "--players",
        "bogus:model,random,random,random")
    add(2, "openai-compatible without URL", "play", "--seed", "1", "--online", "--players",
        "openai-compatible:m,random,random,random")
    add(2, "one seat", "play", "--seed", "1", "--players", "random")
    # (an --out that exists, file or folder, is not an error: play picks a fresh name)
    add(2, "--out under a file", "play", "--seed", "1", "--quiet", "--out",
        "{garbage}/x.jsonl")
    add(2, "--out where nothing can be created", "play", "--seed", "1", "--quiet", "--out",
        "/proc/no-such-dir/x.jsonl")
    add(2, "--replay missing", "play", "--seed", "1", "--players", LLM_SEATS, "--replay",
        "{missing}")
    add(2, "--replay a folder", "play", "--seed", "1", "--players", LLM_SEATS, "--replay",
        "{dir}")
    add(2, "--record and --replay", "play", "--seed", "1", "--players", LLM_SEATS,
        "--record", "{tmp}/r.yaml", "--replay", "{cassette_garbage}")
    add(2, "--record without --online", "play", "--seed", "1", "--players", LLM_SEATS,
        "--record", "{tmp}/r2.yaml")
    add(2, "--replay with --online", "play", "--seed", "1", "--players", LLM_SEATS,
        "--online", "--replay", "{cassette_garbage}")
    add(2, "--replay garbage YAML", "play", "--seed", "1", "--quiet", "--players", LLM_SEATS,
        "--replay", "{cassette_garbage}")
    add(2, "--replay not UTF-8", "play", "--seed", "1", "--quiet", "--players", LLM_SEATS,
        "--replay", "{nonutf8}")
    add(2, "--replay without interactions", "play", "--seed", "1", "--quiet", "--players",
        LLM_SEATS, "--replay", "{cassette_no_list}")
    add(1, "--replay of an empty cassette aborts the game", "play", "--seed", "1", "--quiet",
        "--players", LLM_SEATS, "--replay", "{cassette_empty}", "--out", "{tmp}/aborted.jsonl")
    add(2, "--roster missing", "play", "--seed", "1", "--roster", "{missing}")
    add(2, "--roster garbage", "play", "--seed", "1", "--roster", "{garbage}")
    add(2, "--roster not UTF-8", "play", "--seed", "1", "--roster", "{nonutf8}")
    add(2, "--roster a folder", "play", "--seed", "1", "--roster", "{dir}")
    add(2, "--set without =", "play", "--seed", "1", "--set", "garbage")
    add(2, "--set unknown key", "play", "--seed", "1", "--set", "no_such_option=1")
    add(2, "--role without =", "play", "--seed", "1", "--role", "x")
    add(2, "--preset unknown", "play", "--seed", "1", "--preset", "no-such-preset")
    add(2, "script seat missing", "play", "--seed", "1", "--players",
        "script:{missing},random,random,random")
    add(2, "script seat garbage", "play", "--seed", "1", "--players",
        "script:{garbage},random,random,random")
    add(2, "script seat not UTF-8", "play", "--seed", "1", "--players",
        "script:{nonutf8},random,random,random")
    # --- tournament ---------------------------------------------------------------
    t = ("tournament", "stille-post", "--players", BOTS, "--seed", "1")
    add(2, "--games -1", *t, "--games", "-1", "--out", "{tmp}/t1")
    add(2, "--games 0", *t, "--games", "0", "--out", "{tmp}/t2")
    add(2, "--games 100000000", *t, "--games", "100000000", "--out", "{tmp}/t3")
    add(2, "--games abc", *t, "--games", "abc", "--out", "{tmp}/t4")
    add(2, "--shard 3/2", *t, "--games", "4", "--shard", "3/2", "--out", "{tmp}/t5")
    add(2, "--shard 0/2", *t, "--games", "4", "--shard", "0/2", "--out", "{tmp}/t6")
    add(2, "--shard x", *t, "--games", "4", "--shard", "x", "--out", "{tmp}/t7")
    add(2, "--rate-limit garbage", *t, "--games", "4", "--rate-limit", "garbage",
        "--out", "{tmp}/t9")
    add(2, "--rate-limit not a number", *t, "--games", "4", "--rate-limit", "openai=abc",
        "--out", "{tmp}/t10")
    add(2, "--rate-limit negative", *t, "--games", "4", "--rate-limit", "openai=-5",
        "--out", "{tmp}/t11")
    add(2, "--out is a file", *t, "--games", "4", "--out", "{garbage}")
    add(2, "--concurrency 0", *t, "--games", "4", "--concurrency", "0", "--out", "{tmp}/t12")
    add(2, "--workers 0", *t, "--games", "4", "--workers", "0", "--out", "{tmp}/t17",
        after=lambda tmp: not (tmp / "t17").exists())
    add(2, "--workers 2 with a rate limit", *t, "--games", "4", "--workers", "2",
        "--rate-limit", "openai=60", "--out", "{tmp}/t18",
        after=lambda tmp: not (tmp / "t18").exists())
    add(2, "an option of another game", "play", "stille-post", "--words", "5")
    add(2, "a game option before another game's name", "play", "--max-rounds", "3",
        "chameleon")
    add(2, "--out holds another tournament", *t, "--games", "4", "--out", "{tour}")
    add(2, "--config missing", "tournament", "--config", "{missing}")
    add(2, "--config garbage", "tournament", "--config", "{garbage}")
    add(2, "--config not UTF-8", "tournament", "--config", "{nonutf8}")
    add(2, "--config a folder", "tournament", "--config", "{dir}")
    add(2, "--models garbage", *t, "--games", "4", "--models", "{garbage}",
        "--out", "{tmp}/t12")
    add(2, "--pool and --players", "tournament", "stille-post", "--games", "4", "--players",
        BOTS, "--pool", "random,gambler,cautious,detective", "--out", "{tmp}/t13")
    add(2, "unknown bot in a tournament", "tournament", "stille-post", "--games", "4",
        "--players", "nosuchbot,random,random,random", "--out", "{tmp}/t14")
    add(2, "LLM seats without --online", "tournament", "stille-post", "--games", "4",
        "--players", LLM_SEATS, "--out", "{tmp}/t15")
    add(2, "unknown game in a tournament", "tournament", "nosuchgame", "--games", "4",
        "--out", "{tmp}/t16")
    # --- report ------------------------------------------------------------------
    add(2, "report: missing folder", "report", "{missing}")
    add(2, "report: a file", "report", "{garbage}")
    add(2, "report: an empty folder", "report", "{dir}")
    add(2, "report: no argument", "report")
    add(2, "report: --workers 0", "report", "{tour}", "--workers", "0", "--passes", "2")
    add(2, "report: --passes 0", "report", "{tour}", "--passes", "0")
    add(2, "report: --passes abc", "report", "{tour}", "--passes", "abc")
    add(2, "report: --html is a folder", "report", "{tour}", "--passes", "2", "--html",
        "{dir}", after=no_tmp)
    add(2, "report: --html in a missing folder", "report", "{tour}", "--passes", "2",
        "--html", "{missing}/r.html")
    add(2, "report: --csv is a file", "report", "{tour}", "--passes", "2", "--csv",
        "{garbage}")
    add(2, "report: a garbage line inside a transcript", "report", "{tour_garbage_line}",
        "--passes", "2")
    add(2, "report: garbage tournament.json", "report", "{tour_bad_config}")
    add(0, "report: a corrupt index is rebuilt from the transcripts", "report",
        "{tour_bad_index}", "--passes", "2", "--json", min_stderr_lines=0)
    # --- view -------------------------------------------------------------------
    add(2, "view: missing", "view", "{missing}")
    add(2, "view: a folder", "view", "{dir}")
    add(2, "view: garbage", "view", "{garbage}")
    add(2, "view: not UTF-8", "view", "{nonutf8}")
    add(2, "view: empty file", "view", "{empty}")
    add(2, "view: a garbage line inside", "view", "{transcript_garbage_line}")
    add(2, "view: -o is a folder", "view", "{transcript}", "-o", "{dir}", after=no_tmp)
    add(2, "view: -o is the transcript", "view", "{transcript}", "-o", "{transcript}")
    add(2, "view: -o in a missing folder", "view", "{transcript}", "-o",
        "{missing}/page.html")
    # --- merge ------------------------------------------------------------------
    add(2, "merge: missing shard", "merge", "{tmp}/m1", "{missing}")
    add(2, "merge: a file as shard", "merge", "{tmp}/m2", "{garbage}")
    add(2, "merge: an empty folder as shard", "merge", "{tmp}/m3", "{dir}")
    add(2, "merge: no shard", "merge", "{tmp}/m4")
    add(2, "merge: out is a file", "merge", "{garbage}", "{tour}")
    add(2, "merge: garbage tournament.json", "merge", "{tmp}/m5", "{tour_bad_config}")
    slow = {
        'seed a float', 'seed empty', 'players only commas', 'openai-compatible without URL',
        '--replay a folder', '--replay with --online', '--roster a folder',
        'script seat not UTF-8', '--games 0', '--shard 0/2', '--rate-limit negative',
        '--config a folder', 'report: --passes abc', 'report: --html in a missing folder',
        'view: -o in a missing folder', 'merge: no shard', 'view: empty file',
        '--role without =', 'unknown game in a tournament',
        '--out where nothing can be created'
    }
    return [Case(x.argv, x.code, x.why, x.after, x.max_stderr_lines, x.min_stderr_lines,
                 x.why in slow, x.known_gap) for x in c]


CASES = cases()
CORE = [c for c in CASES if not c.slow]
EXTRA = [c for c in CASES if c.slow]


def _param(case: Case) -> object:
    marks = [pytest.mark.slow] if case.slow else []
    if case.known_gap:
        marks.append(pytest.mark.xfail(strict=True, reason=case.known_gap))
    return pytest.param(case, id=case.why, marks=marks)


# The table runs once per process (a module fixture): the README's command distributes
# the suite by file (`--dist loadfile`), so one worker runs all of it.


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("bad-inputs")
    paths: dict[str, Path] = {
        "tmp": tmp, "dir": tmp / "a-folder", "missing": tmp / "no-such-file",
        "garbage": tmp / "garbage.txt", "nonutf8": tmp / "latin1.toml",
        "empty": tmp / "empty.jsonl", "cassette_garbage": tmp / "cassette.yaml",
        "cassette_no_list": tmp / "no-list.yaml", "cassette_empty": tmp / "empty.yaml",
    }
    paths["dir"].mkdir()
    paths["garbage"].write_text("this is not [ a { valid = file\n\x00\n", encoding="utf-8")
    paths["nonutf8"].write_bytes(b"name = \"caf\xe9\"\n\xff\xfe\n")
    paths["empty"].write_bytes(b"")
    paths["cassette_garbage"].write_text("{{{ not: [yaml\n", encoding="utf-8")
    paths["cassette_no_list"].write_text("interactions: 5\n", encoding="utf-8")
    paths["cassette_empty"].write_text("interactions: []\nversion: 1\n", encoding="utf-8")
    # A small finished tournament of bots, and damaged copies of it.
    tour = tmp / "tour"
    # Forked like the cases (tests/clirun.py): a fresh interpreter costs a second here.
    (made,) = run_many([["tournament", "stille-post", "--games", "3", "--players", BOTS,
                         "--seed", "1", "--out", str(tour), "--no-fsync"]], cwd=tmp,
                       env=keyless_env(), timeout=120)
    assert made.returncode == 0, made.stderr
    paths["tour"] = tour
    for name in ("tour_garbage_line", "tour_bad_config", "tour_bad_index"):
        shutil.copytree(tour, tmp / name)
        paths[name] = tmp / name
    victim = sorted((paths["tour_garbage_line"] / "games").glob("*.jsonl"))[0]
    lines = victim.read_text(encoding="utf-8").splitlines()
    victim.write_text("\n".join([lines[0], "}}garbage{{", *lines[1:]]) + "\n",
                      encoding="utf-8")
    (paths["tour_bad_config"] / "tournament.json").write_text("{not json", encoding="utf-8")
    for extra in ("index.sqlite-wal", "index.sqlite-shm"):
        (paths["tour_bad_index"] / extra).unlink(missing_ok=True)
    (paths["tour_bad_index"] / "index.sqlite").write_bytes(b"not a database at all" * 100)
    transcript = sorted((tour / "games").glob("*.jsonl"))[0]
    paths["transcript"] = tmp / "one.jsonl"
    shutil.copyfile(transcript, paths["transcript"])
    paths["transcript_garbage_line"] = tmp / "garbage-line.jsonl"
    shutil.copyfile(victim, paths["transcript_garbage_line"])
    return {k: str(v) for k, v in paths.items()}


@dataclass
class Result:
    case: Case
    code: int
    stdout: str
    stderr: str


# One case of each command, run through the installed console script (the entry point
# itself) as well as through the fork server.
# Three kinds (a usage error, a missing folder, a damaged file), each a second of a fresh
# interpreter: enough to show the fork server and the console script agree.
THROUGH_THE_SCRIPT = ("unknown option", "report: missing folder", "view: garbage")


def _env() -> dict[str, str]:
    return keyless_env(NO_COLOR="1", COLUMNS="200", STILLE_POST_DEBUG="")


def _argv(case: Case, fx: dict[str, str]) -> list[str]:
    return [a.format(**fx) for a in case.argv]


def _run_script(script: str, case: Case, fx: dict[str, str], cwd: Path) -> Result:
    proc = subprocess.run([script, *_argv(case, fx)], capture_output=True, text=True,
                          cwd=cwd, env=_env(), timeout=120, stdin=subprocess.DEVNULL)
    return Result(case, proc.returncode, proc.stdout, proc.stderr)


def _run_forked(cases: list[Case], fx: dict[str, str], cwd: Path) -> list[Result]:
    done = run_many([_argv(c, fx) for c in cases], cwd=cwd, env=_env())
    return [Result(c, p.returncode, p.stdout, p.stderr)
            for c, p in zip(cases, done, strict=True)]


def _run_all(cases: list[Case], fx: dict[str, str]) -> dict[str, Result]:
    cwd = Path(fx["tmp"]) / "cwd"
    cwd.mkdir(exist_ok=True)
    return {r.case.why: r for r in _run_forked(cases, fx, cwd)}


@pytest.fixture(scope="module")
def results(fixtures: dict[str, str]) -> dict[str, Result]:
    return _run_all(CORE, fixtures)


@pytest.fixture(scope="module")
def results_extra(fixtures: dict[str, str]) -> dict[str, Result]:
    return _run_all(EXTRA, fixtures)


@pytest.fixture(scope="module")
def script_results(fixtures: dict[str, str]) -> dict[str, Result]:
    script = console_script()
    cwd = Path(fixtures["tmp"]) / "cwd-script"
    cwd.mkdir(exist_ok=True)
    chosen = [c for c in CORE if c.why in THROUGH_THE_SCRIPT]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(lambda c: _run_script(script, c, fixtures, cwd), chosen))
    return {r.case.why: r for r in done}


def test_the_table_is_big_enough() -> None:
    assert len(CORE) >= 60
    assert len({c.why for c in CASES}) == len(CASES)


def _check(case: Case, r: Result, fixtures: dict[str, str]) -> None:
    err_lines = [line for line in r.stderr.splitlines() if line.strip()]
    shown = f"argv={list(case.argv)}\nexit={r.code}\nstderr={r.stderr[-2000:]!r}"
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, shown
    assert r.code == case.code, shown
    assert case.min_stderr_lines <= len(err_lines) <= case.max_stderr_lines, shown
    if case.after is not None:
        assert case.after(Path(fixtures["tmp"])), shown


@pytest.mark.parametrize("case", [_param(c) for c in CORE])
def test_bad_input(case: Case, results: dict[str, Result], fixtures: dict[str, str]) -> None:
    _check(case, results[case.why], fixtures)


@pytest.mark.parametrize("case", [_param(c) for c in EXTRA])
def test_bad_input_variant(case: Case, results_extra: dict[str, Result],
                           fixtures: dict[str, str]) -> None:
    _check(case, results_extra[case.why], fixtures)


@pytest.mark.parametrize("why", THROUGH_THE_SCRIPT)
def test_the_console_script_agrees_with_the_fork_server(
        why: str, script_results: dict[str, Result], results: dict[str, Result],
        fixtures: dict[str, str]) -> None:
    real = script_results[why]
    _check(real.case, real, fixtures)
    assert (real.code, real.stdout, real.stderr) == (
        results[why].code, results[why].stdout, results[why].stderr)


def test_play_seed_abc_is_one_line_and_exit_2(results: dict[str, Result]) -> None:
    r = results["seed not a number"]
    assert r.code == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "--seed" in r.stderr


def test_a_garbage_transcript_line_is_named_with_file_and_line(
        results: dict[str, Result]) -> None:
    r = results["report: a garbage line inside a transcript"]
    assert ".jsonl:2" in r.stderr


def test_an_unexpected_error_is_one_line_and_debug_shows_the_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import stille_post.cli as cli

    def broken(**_: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(cli, "app", broken)
    with pytest.raises(SystemExit) as info:
        cli.main(["play"])
    err = capsys.readouterr().err
    assert info.value.code == 1 and len(err.strip().splitlines()) == 1
    assert "RuntimeError: boom second line" in err and "--debug" in err
    assert "Traceback" not in err
    with pytest.raises(SystemExit) as info:
        cli.main(["play", "--debug"])
    assert info.value.code == 1 and "Traceback" in capsys.readouterr().err
