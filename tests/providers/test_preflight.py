"""A dead server is found before the run (providers/preflight.py): each distinct endpoint
is probed once, at the same time; a seat none of whose replicas answers stops the run in
one line naming the URL (exit 2); a dead replica of a live seat is a warning line;
`--no-preflight` skips the probe."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from stille_post.cli import _run
from stille_post.cli.llm_seats import llm_session, seat_endpoints
from stille_post.core.errors import UsageError
from stille_post.providers import preflight
from stille_post.providers.models import load_models
from tests import clirun
from tests.emulators.server import Emulator

LOOPBACK = pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
SECRET = "pw-9Lk2Qx7Vb"


def _dead_port() -> int:
    """A loopback port with nothing listening (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_display_url_drops_the_password_and_the_query() -> None:
    url = f"http://alice:{SECRET}@127.0.0.1:8000/v1?api_key={SECRET}"
    assert preflight.display_url(url) == "http://127.0.0.1:8000/v1"
    assert preflight.display_url("http://[::1]:9/v1") == "http://[::1]:9/v1"


@LOOPBACK
def test_any_http_answer_is_alive_and_a_refused_connection_is_not() -> None:
    emu = Emulator("openai").start()  # answers GET /v1/models with an HTTP error: alive
    try:
        found = preflight.probe_all([("openai-compatible", emu.base_url),
                                     ("openai-compatible", f"http://127.0.0.1:{_dead_port()}/v1")])
    finally:
        emu.stop()
    alive, dead = found.values()
    assert alive.alive and alive.problem is None
    assert not dead.alive and dead.problem == "connection refused"


@LOOPBACK
def test_a_plain_http_probe_needs_no_ca_store(monkeypatch: pytest.MonkeyPatch) -> None:
    # A local server's probe opens no TLS: a CA store that cannot load (or its load
    # time, most of a dead server's budget) does not come into it; https still needs it.
    from stille_post.providers._common import tls_context

    monkeypatch.setenv("SSL_CERT_FILE", "/nonexistent/ca.pem")
    tls_context.cache_clear()
    emu = Emulator("openai").start()
    try:
        assert preflight.probe("openai-compatible", emu.base_url).alive
        secure = preflight.probe("openai-compatible", "https://127.0.0.1:9/v1")
    finally:
        emu.stop()
        tls_context.cache_clear()
    assert not secure.alive  # https: the CA store is needed, and here it cannot load


@LOOPBACK
def test_play_against_a_port_with_nothing_listening_exits_2_in_one_line(
        tmp_path: Path) -> None:
    port = _dead_port()
    proc = clirun.run_cli("play", "--seed", "1", "--online", "--players",
                          f"openai-compatible:m@http://u:{SECRET}@127.0.0.1:{port}/v1,"
                          "random,random,random", cwd=tmp_path)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert f"nothing answers at http://127.0.0.1:{port}/v1" in lines[0]
    assert "connection refused" in lines[0] and "--no-preflight" in lines[0]
    assert SECRET not in proc.stderr + proc.stdout
    assert not list(tmp_path.rglob("*.jsonl"))  # nothing was played


@LOOPBACK
def test_every_replica_refusing_stops_a_tournament_naming_the_first(tmp_path: Path) -> None:
    a, b = _dead_port(), _dead_port()
    (tmp_path / "models.toml").write_text(
        '[models.rep]\nprovider = "openai-compatible"\nmodel = "m"\n'
        f'base_url = ["http://127.0.0.1:{a}/v1", "http://127.0.0.1:{b}/v1"]\n',
        encoding="utf-8")
    proc = clirun.run_cli("tournament", "stille-post", "--online", "--games", "2",
                          "--players", "model:rep,detective,random,cautious", "--out", "t",
                          cwd=tmp_path)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert f"http://127.0.0.1:{a}/v1 (and 1 other replica) for model:rep" in lines[0]
    assert not (tmp_path / "t").exists()


@LOOPBACK
def test_a_dead_replica_beside_a_live_one_is_a_warning_and_the_game_plays(
        tmp_path: Path) -> None:
    emu = Emulator("openai").start()
    dead = f"http://127.0.0.1:{_dead_port()}/v1"
    (tmp_path / "models.toml").write_text(
        '[models.rep]\nprovider = "openai-compatible"\nmodel = "m"\n'
        f'base_url = ["{dead}", "{emu.base_url}"]\n', encoding="utf-8")
    try:
        proc = clirun.run_cli("play", "--seed", "1", "--online", "--quiet", "--max-rounds",
                              "1", "--players", "model:rep,detective,random,cautious",
                              "--out", "g.jsonl", cwd=tmp_path)
    finally:
        emu.stop()
    assert proc.returncode == 0, proc.stderr
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and f"replica {dead} of model:rep" in warnings[0]
    assert len(emu.state.requests) > 0  # the live replica played the seat


@LOOPBACK
def test_no_preflight_skips_the_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    probed: list[str] = []
    monkeypatch.setattr(preflight, "probe",
                        lambda kind, url, timeout_s=1.5: probed.append(url) or
                        preflight.Probe(url, "connection refused"))
    monkeypatch.chdir(tmp_path)
    seat = f"openai-compatible:m@http://127.0.0.1:{_dead_port()}/v1"
    argv = ["play", "--seed", "1", "--online", "--quiet", "--players",
            f"{seat},random,random,random", "--out", "g.jsonl"]
    assert _run(argv, False) == 2 and len(probed) == 1
    assert "nothing answers" in capsys.readouterr().err
    with pytest.raises(UsageError), llm_session(online=True, record=None, replay=None,
                                                preflight_seats=[seat]):
        pass
    probed.clear()
    with llm_session(online=True, record=None, replay=None, preflight_seats=None) as factory:
        assert factory is not None
    assert probed == []


def test_the_endpoints_of_a_run_are_its_llm_seats_once_each(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text('[models.rep]\nprovider = "openai-compatible"\nmodel = "m"\n'
                    'base_url = ["http://a:1/v1", "http://b:2/v1"]\n', encoding="utf-8")
    found = seat_endpoints(["model:rep", "random", "bot:detective", "script:x.yaml",
                            "openai:gpt-5-mini", "model:rep",
                            "agent:scratchpad+openai-compatible:q@http://c:3/v1"],
                           load_models(path))
    assert [(s.seat, s.kind, tuple(s.urls)) for s in found] == [
        ("model:rep", "openai-compatible", ("http://a:1/v1", "http://b:2/v1")),
        ("openai:gpt-5-mini", "openai", ("https://api.openai.com/v1",)),
        ("agent:scratchpad+openai-compatible:q@http://c:3/v1", "openai-compatible",
         ("http://c:3/v1",))]
