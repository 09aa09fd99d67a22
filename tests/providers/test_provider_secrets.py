"""Secrets: a gateway that echoes the caller's key, in a 401 body and in a 200 body.

The key below is deliberately not key-shaped (no `sk-`, no `AIza`): only the literal
redaction of configured key values can catch it. The test plays a tournament of LLM games
against a loopback emulator that echoes the key, records the HTTP traffic to a cassette,
writes a report (JSON, CSV, HTML) and a viewer page, runs `report` and `view` through the
CLI's `main()`, and greps every one of those outputs, and every request body the server
received after the key was echoed, for the key.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from stille_post.cli import main
from stille_post.providers.recording import cassette
from stille_post.providers.secrets import forget_secrets, redact, register_secret
from stille_post.tournament import TournamentConfig
from stille_post.tournament.report import build_report, write_csv, write_html
from stille_post.tournament.runner import run_tournament
from stille_post.viewer import write_html as write_page
from tests.chaos.harness import ChaosFactory
from tests.emulators.faults import FaultPolicy
from tests.emulators.server import Emulator

KEY = "gw-live-7f3a9c2e-ZZqv81"


def test_redact_masks_configured_values_patterns_and_query_parameters(
        monkeypatch: pytest.MonkeyPatch) -> None:
    forget_secrets()
    assert redact(f"echo {KEY}") == f"echo {KEY}"  # not configured yet, not key-shaped
    register_secret(KEY)
    assert KEY not in redact(f"Incorrect API key provided: {KEY}.")
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "env-only-secret-123")
    assert "env-only-secret-123" not in redact("key env-only-secret-123 refused")
    for param in ("key", "api_key", "token", "access_token"):
        url = f"https://gw.example/v1/chat?{param}=abc123def&model=x"
        assert "abc123def" not in redact(url) and "model=x" in redact(url)
    assert "[redacted]" in redact("sk-proj-abcdefghijklmnop1234")
    register_secret("dummy")  # placeholders and short values are never "secrets"
    assert redact("a dummy value") == "a dummy value"
    forget_secrets()


def _grep(path: Path) -> list[str]:
    hits = []
    for p in [path] if path.is_file() else sorted(path.rglob("*")):
        if p.is_file() and KEY.encode() in p.read_bytes():
            hits.append(str(p))
    return hits


@pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
def test_a_gateway_echoing_the_key_leaks_it_nowhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forget_secrets()  # the key must be found because it is configured, not remembered
    # Half the answers echo the key: as a 401 error body, or as the model's own text.
    policy = FaultPolicy(0.5, seed=5, kinds=("echo_key_401", "echo_key_200"))
    emu = Emulator("openai", faults=policy).start()
    try:
        factory = ChaosFactory({"openai": emu, "anthropic": emu, "google": emu},
                               api_key=KEY)

        config = TournamentConfig(game="stille-post", games=3, seed=40,
                                  players=("openai:gpt-5-mini", "detective",
                                           "openai:gpt-4.1-mini", "random"),
                                  options={"max_rounds": 2})
        out = tmp_path / "t"
        cas = tmp_path / "cassette.yaml"

        async def play() -> None:
            try:
                await run_tournament(config, out, llm_factory=factory, durable=False)
            finally:
                await factory.aclose()

        with cassette(cas, mode="record"):
            asyncio.run(play())
    finally:
        emu.stop()
    assert policy.counts["echo_key_401"] > 0 and policy.counts["echo_key_200"] > 0
    # The server really echoed the key (so the test could fail)...
    transcripts = sorted((out / "games").glob("*.jsonl"))
    assert transcripts and any("[redacted]" in p.read_text(encoding="utf-8")
                               for p in transcripts)
    # ...and it is in no output.
    report = build_report(out, passes=2)
    (tmp_path / "report.json").write_text(json.dumps(report), encoding="utf-8")
    write_csv(report, tmp_path / "csv")
    write_html(report, tmp_path / "report.html")
    write_page(transcripts[0], tmp_path / "page.html")
    capsys.readouterr()
    for argv in (["report", str(out), "--passes", "2"], ["report", str(out), "--json",
                                                          "--passes", "2"],
                 ["view", str(transcripts[0]), "-o", str(tmp_path / "page2.html")]):
        with pytest.raises(SystemExit):
            main(argv)
    captured = capsys.readouterr()
    assert KEY not in captured.out and KEY not in captured.err
    assert _grep(tmp_path) == []
    # Every request the server got after the echoes: no prompt carries the key onwards.
    assert emu.state.raw_bodies and not [b for b in emu.state.raw_bodies if KEY.encode() in b]
    assert cas.is_file() and KEY not in cas.read_text(encoding="utf-8")
