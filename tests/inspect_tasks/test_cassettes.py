"""`--record`/`--replay` with `inspect:` seats. Inspect's OpenAI client goes over the
transport our VCR configuration patches: a game recorded against the loopback OpenAI
emulator (stored under the real API's address) replays from the command line offline,
without a key, to the same transcript; a request the cassette lacks aborts the game at
once, as for any seat. Other Inspect providers get one line at start."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import Transcript, canonical_text
from stille_post.players.llm import LLMPlayer
from stille_post.providers.inspect_model import InspectProvider, cassette_note
from stille_post.providers.recording import cassette
from stille_post.session import play_game
from tests.clirun import keyless_env, run_cli
from tests.emulators.server import REAL_ORIGINS, running

SEATS = ["inspect:openai/gpt-4.1-nano", "bot", "bot", "bot"]
pytestmark = pytest.mark.slow  # each command line imports Inspect and its OpenAI client


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("cassette")
    tape, played = folder / "inspect_openai.yaml", folder / "recorded.jsonl"
    mp = pytest.MonkeyPatch()
    with running("openai") as emu:
        mp.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
        mp.setenv("OPENAI_BASE_URL", emu.base_url)

        def factory(spec: str, prompts: Any) -> LLMPlayer:
            return LLMPlayer(InspectProvider(spec.partition(":")[2]), prompts, name=spec)

        with cassette(tape, mode="record", rewrite_hosts={emu.origin: REAL_ORIGINS["openai"]}):
            asyncio.run(play_game("chameleon", seed=2, out=played, players=SEATS,
                                  llm_factory=factory))
    mp.undo()
    return tape, played


def test_an_inspect_openai_seat_replays_offline_from_the_command_line(
        recorded: tuple[Path, Path], tmp_path: Path) -> None:
    tape, played = recorded
    assert "api.openai.com" in tape.read_text() and "sk-test" not in tape.read_text()
    out = tmp_path / "replayed.jsonl"
    done = run_cli("play", "chameleon", "--players", ",".join(SEATS), "--seed", "2",
                   "--replay", str(tape), "--out", str(out), "--quiet", env=keyless_env())
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr  # the openai client records: nothing to say
    assert canonical_text(out) == canonical_text(played)
    result = Transcript.load(out).result
    assert result is not None and result["adherence"]["1"]["decisions"] >= 1


def test_a_request_the_cassette_lacks_aborts_the_game(recorded: tuple[Path, Path],
                                                      tmp_path: Path) -> None:
    tape, _ = recorded
    done = run_cli("play", "chameleon", "--players", ",".join(SEATS), "--seed", "9",
                   "--replay", str(tape), "--out", str(tmp_path / "g.jsonl"), "--quiet",
                   env=keyless_env())
    assert done.returncode == 1, done.stderr
    result = Transcript.load(tmp_path / "g.jsonl").result
    assert result is not None and result["status"] == "aborted"
    assert "not in the replayed cassette" in result["reason"]


def test_other_inspect_providers_get_one_line_at_start(recorded: tuple[Path, Path],
                                                       tmp_path: Path) -> None:
    tape, _ = recorded
    assert cassette_note("openai/gpt-5-mini", "replay") is None
    assert "no HTTP calls" in (cassette_note("mockllm/model", "record") or "")
    done = run_cli("play", "chameleon", "--players",
                   "inspect:mockllm/model,inspect:vllm/some-model,bot,bot", "--seed", "2",
                   "--replay", str(tape), "--out", str(tmp_path / "g.jsonl"), "--quiet",
                   env=keyless_env())
    lines = done.stderr.splitlines()
    assert sum("makes no HTTP calls" in line for line in lines) == 1
    assert sum("inspect:vllm/some-model: --replay is checked for Inspect's openai models "
               "only" in line for line in lines) == 1
