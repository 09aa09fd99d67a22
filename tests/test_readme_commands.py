"""The replay commands the README and docs/llm-seats.md give run as written, offline and
without a key (issue 40, item 21: the README's example named a cassette that did not
exist). Each `stille-post play --replay` line of their code blocks is run exactly, from a
folder where `cassettes/` and `examples/` are the repository's, with no API key in the
environment."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.clirun import keyless_env, run_many

pytestmark = pytest.mark.heavy  # seconds: a few whole games replayed

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "docs/llm-seats.md")


def replay_lines(doc: Path) -> list[str]:
    """Every `stille-post play --replay ...` line inside the doc's code blocks (a line
    continued with a backslash is joined)."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", doc.read_text(encoding="utf-8"), re.M | re.S)
    lines = []
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("  #", 1)[0].strip()
            if command.startswith("stille-post play") and "--replay" in command:
                lines.append(command)
    return lines


def test_every_replay_command_of_the_docs_runs_offline(tmp_path: Path) -> None:
    commands = {doc: replay_lines(ROOT / doc) for doc in DOCS}
    assert len(commands["README.md"]) >= 2 and len(commands["docs/llm-seats.md"]) >= 3
    for folder in ("cassettes", "examples"):  # the docs' commands run from the repository
        (tmp_path / folder).symlink_to(ROOT / folder)
    argvs = []
    for lines in commands.values():
        for line in lines:
            argv = shlex.split(line)[1:]
            cassette = argv[argv.index("--replay") + 1]
            if not (tmp_path / cassette).exists():
                continue  # a cassette the doc's own commands record first (my_game.yaml)
            argvs.append([*argv, "--json", "--out", str(tmp_path / f"g{len(argvs)}.jsonl")])
    # every cassette a doc names exists, but the one its record line makes
    named = {shlex.split(x)[shlex.split(x).index("--replay") + 1]
             for lines in commands.values() for x in lines}
    assert named - {"my_game.yaml"} == {a[a.index("--replay") + 1] for a in argvs}
    assert len(argvs) >= 3
    results = run_many(argvs, cwd=tmp_path, env=keyless_env(COLUMNS="200"))
    for argv, done in zip(argvs, results, strict=True):
        assert done.returncode == 0, (argv, done.stderr)
        summary = json.loads(done.stdout)
        assert summary["status"] == "completed" and summary["valid"], argv
        assert "warnings" not in summary, (argv, summary["warnings"])
        # the same transcript as the recording's (its events; the replay is exact)
        cassette = Path(argv[argv.index("--replay") + 1])
        recorded = ROOT / cassette.with_name(cassette.stem + ".transcript.jsonl")
        played = Path(argv[argv.index("--out") + 1])
        if recorded.exists():
            assert _events(played) == _events(recorded), argv


def _events(path: Path) -> list[dict[str, object]]:
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    return [{k: v for k, v in e.items() if k != "ts"} for e in lines if e.get("kind") == "event"]


def test_the_readme_example_is_a_real_model_and_says_which_cassettes_are_emulated() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "live_game.yaml" not in readme
    first = replay_lines(ROOT / "README.md")[0]
    assert "cassettes/providers/openai-compatible/qwen/" in first  # a real model
    provenance = (ROOT / "cassettes/providers/openai-compatible/PROVENANCE.md").read_text(
        encoding="utf-8")
    assert "REAL" in provenance and "qwen/" in provenance
    for word in ("**emulated**", "**real**"):
        assert word in readme
