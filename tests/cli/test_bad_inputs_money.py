"""The misleading exit codes of issue 36's bad-input table (item 12), through the real CLI
(tests/clirun.py): each bad input exits 2 with one line on stderr naming the problem,
never a traceback, never `unexpected ...`, and never hangs (the whole table is bounded).

Before the fix: `unexpected ...` (exit 1) for infinite or list usage in a script, a
30,000-deep `--set` value, an import folder 1,200 levels deep and a cassette entry
without request fields; exit 0 for `price = { input = inf }`, `extra = { stream = true }`,
`decision_timeout_s=Infinity` and `import` of files that are not logs ("0 imported");
`import /dev/zero` hung.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.clirun import keyless_env, run_many

pytestmark = pytest.mark.heavy

SEATS = "random,gambler,cautious"
# A key that is no key and a port where nothing listens: without the fix these files
# were taken and the game played (every turn forfeited), exit 0; no call leaves the host.
MODELS = ('[models.x]\nprovider = "openai"\nmodel = "gpt-5-mini"\n'
          'base_url = "http://127.0.0.1:9/v1"\n')
NOT_A_KEY = "sk-test-0000000000000000000000000000"


@dataclass(frozen=True)
class Case:
    why: str
    argv: tuple[str, ...]
    says: str  # a piece of the one stderr line


def _play(*extra: str) -> tuple[str, ...]:
    return ("play", "--seed", "1", "--quiet", "--out", "{tmp}/game.jsonl", *extra)


def _import(*paths: str) -> tuple[str, ...]:
    return ("import", "elimination", "logs", *paths, "--out", "{tmp}/imported")


CASES = [
    Case("script: infinite usage", _play("--players", f"script:{{tmp}}/inf.yaml,{SEATS}"),
         "usage.input_tokens must be a whole number"),
    Case("script: NaN usage", _play("--players", f"script:{{tmp}}/nan.yaml,{SEATS}"),
         "usage.output_tokens must be a whole number"),
    Case("script: negative usage", _play("--players", f"script:{{tmp}}/neg.yaml,{SEATS}"),
         "usage.input_tokens must be a whole number"),
    Case("script: usage is a list", _play("--players", f"script:{{tmp}}/list.yaml,{SEATS}"),
         "usage must be a mapping"),
    Case("--set: a value 30,000 deep", _play("--set", "max_rounds=" + "[" * 30_000
                                             + "]" * 30_000), "nested more than 32"),
    Case("tournament --set: a value 30,000 deep",
         ("tournament", "stille-post", "--games", "1", "--out", "{tmp}/t1", "--set",
          "max_rounds=" + "[" * 30_000 + "]" * 30_000), "nested more than 32"),
    Case("--set decision_timeout_s=Infinity", _play("--set", "decision_timeout_s=Infinity"),
         "--decision-timeout-s: Input should be a finite number"),
    Case("--set decision_timeout_s=1e400", _play("--set", "decision_timeout_s=1e400"),
         "--decision-timeout-s: Input should be a finite number"),
    Case("cassette: an entry without request fields",
         _play("--players", f"openai:gpt-5-mini,{SEATS}", "--replay", "{tmp}/cassette.yaml"),
         "interaction 1: no request"),
    Case("cassette: a request without a method",
         _play("--players", f"openai:gpt-5-mini,{SEATS}", "--replay", "{tmp}/cassette2.yaml"),
         "interaction 1: the request has no method"),
    Case("models.toml: price input = inf",
         _play("--online", "--models", "{tmp}/inf.toml", "--players", f"model:x,{SEATS}"),
         "models.x.price.input: Input should be a finite number"),
    Case("models.toml: price output = nan",
         _play("--online", "--models", "{tmp}/nan.toml", "--players", f"model:x,{SEATS}"),
         "models.x.price.output: Input should be a finite number"),
    Case("models.toml: extra stream = true",
         _play("--online", "--models", "{tmp}/stream.toml", "--players", f"model:x,{SEATS}"),
         "'stream' cannot be set here"),
    Case("tournament: models.toml extra stream = true",
         ("tournament", "stille-post", "--games", "1", "--online", "--out", "{tmp}/t2",
          "--models", "{tmp}/stream.toml", "--players", f"model:x,{SEATS}"),
         "'stream' cannot be set here"),
    Case("import: a folder 1,200 levels deep", _import("{tmp}/deep"), "nested more than 64"),
    Case("import: a binary file", _import("{tmp}/binary.jsonl"), "binary.jsonl (not UTF-8"),
    Case("import: a UTF-16 file", _import("{tmp}/utf16.jsonl"), "utf16.jsonl (not UTF-8"),
    Case("import: an empty file", _import("{tmp}/empty.jsonl"), "empty.jsonl (empty)"),
    Case("import: JSON lines of no game", _import("{tmp}/other.jsonl"),
         "other.jsonl (no line has a game_id"),
    Case("import: /dev/null", _import("/dev/null"), "/dev/null: not a regular file"),
    Case("import: /dev/zero", _import("/dev/zero"), "/dev/zero: not a regular file"),
    Case("import: a named pipe", _import("{tmp}/fifo.jsonl"), "fifo.jsonl: not a regular file"),
]


def _remove_deep(root: Path) -> None:
    """Remove a folder tree without recursion: shutil.rmtree (and so pytest's cleanup of
    its temporary folders) exhausts the stack on a folder 1,200 deep."""
    if not root.is_dir():
        return
    folders, stack = [], [root]
    while stack:
        folder = stack.pop()
        folders.append(folder)
        for entry in folder.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                stack.append(entry)
            else:
                entry.unlink()
    for folder in reversed(folders):
        folder.rmdir()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("bad-money")
    try:
        yield _make_files(tmp)
    finally:
        _remove_deep(tmp / "deep")


def _make_files(tmp: Path) -> Path:
    scripts = {"inf": "input_tokens: .inf", "nan": "input_tokens: 1, output_tokens: .nan",
               "neg": "input_tokens: -1000000000", "list": None}
    for name, usage in scripts.items():
        body = "usage: [1, 2]" if usage is None else f"usage: {{{usage}}}"
        (tmp / f"{name}.yaml").write_text(f"- {{text: hi, {body}}}\n", encoding="utf-8")
    (tmp / "cassette.yaml").write_text(
        "interactions:\n- response: {status: {code: 200}}\nversion: 1\n", encoding="utf-8")
    (tmp / "cassette2.yaml").write_text(
        "interactions:\n- request: {uri: 'https://api.openai.com/v1/chat/completions', "
        "body: null, headers: {}}\n  response: {status: {code: 200}, headers: {}, "
        "body: {string: '{}'}}\nversion: 1\n", encoding="utf-8")
    (tmp / "inf.toml").write_text(MODELS + "price = { input = inf, cached_input = 0, "
                                  "output = 1 }\n", encoding="utf-8")
    (tmp / "nan.toml").write_text(MODELS + "price = { input = 1, cached_input = 0, "
                                  "output = nan }\n", encoding="utf-8")
    (tmp / "stream.toml").write_text(MODELS + "extra = { stream = true }\n", encoding="utf-8")
    below = tmp / "deep"
    below.mkdir()
    for _ in range(1200):  # one at a time: Path.mkdir(parents=True) recurses
        below = below / "d"
        below.mkdir()
    (below / "log.jsonl").write_text('{"game_id": "1", "type": "final_results"}\n',
                                     encoding="utf-8")
    (tmp / "binary.jsonl").write_bytes(bytes(range(256)) * 4)
    (tmp / "utf16.jsonl").write_bytes('{"game_id": "1", "type": "vote"}\n'.encode("utf-16"))
    (tmp / "empty.jsonl").write_bytes(b"")
    (tmp / "other.jsonl").write_text('{"a": 1}\n[1, 2]\n', encoding="utf-8")
    os.mkfifo(tmp / "fifo.jsonl")
    return tmp


@pytest.fixture(scope="module")
def results(files: Path) -> dict[str, tuple[int, str, str]]:
    argvs = [[a.replace("{tmp}", str(files)) for a in c.argv] for c in CASES]
    # One bound for the whole table: a hang (import /dev/zero did) fails it here.
    done = run_many(argvs, cwd=files, env=keyless_env(NO_COLOR="1", COLUMNS="200",
                                                      OPENAI_API_KEY=NOT_A_KEY),
                    timeout=240)
    return {c.why: (p.returncode, p.stdout, p.stderr) for c, p in zip(CASES, done, strict=True)}


@pytest.mark.parametrize("case", CASES, ids=[c.why for c in CASES])
def test_bad_input_exits_2_with_one_line(case: Case, files: Path,
                                         results: dict[str, tuple[int, str, str]]) -> None:
    code, out, err = results[case.why]
    lines = [x for x in err.splitlines() if x.strip()]
    shown = f"exit={code}\nstderr={err[-1500:]!r}"
    assert "Traceback" not in err + out and "unexpected" not in err, shown
    assert code == 2, shown
    assert len(lines) == 1 and lines[0].startswith("error: "), shown
    assert case.says in lines[0], shown


def test_nothing_is_written_for_files_that_are_not_logs(
        files: Path, results: dict[str, tuple[int, str, str]]) -> None:
    assert not (files / "imported").exists()
    assert not list(files.glob("game*.jsonl"))  # no game was played either
