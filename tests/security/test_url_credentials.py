"""M2: a password in a seat URL (`http://user:PASS@host/v1`) and an `?api_key=` value stay
out of tournament.json, the index, `report --json`, the report cache, cassettes,
transcripts and warnings. A folder whose seats were masked asks for them again on
`--resume` instead of playing with a masked password."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stille_post.cli import _run
from stille_post.providers.secrets import redact
from tests.emulators.server import Emulator

PASSWORD = "pw-Zt8Kq3Lx0Vb"
QUERY_KEY = "qk-Hn4Rp7Ws2Ye"
SECRETS = (PASSWORD, QUERY_KEY)
LOOPBACK = pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])


def test_redact_masks_url_passwords_and_keeps_the_url_parseable() -> None:
    from urllib.parse import urlsplit

    masked = redact(f"openai-compatible:m@http://alice:{PASSWORD}@127.0.0.1:8/v1?api_key=x1")
    assert PASSWORD not in masked and "alice:" in masked and "x1" not in masked
    url = masked.partition("@")[2]
    assert urlsplit(url).hostname == "127.0.0.1"  # no "[...]" that reads as IPv6
    assert redact("mail bob@example.org, ratio 1:2@3") == "mail bob@example.org, ratio 1:2@3"


@pytest.fixture
def emulator() -> Iterator[Emulator]:
    emu = Emulator("openai").start()
    try:
        yield emu
    finally:
        emu.stop()


def _seats(emu: Emulator) -> str:
    host = emu.base_url.removeprefix("http://")
    return (f"openai-compatible:m1@http://alice:{PASSWORD}@{host},detective,"
            f"openai-compatible:m2@http://{host}?api_key={QUERY_KEY},random")


def _leaks(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file()
            and any(s.encode() in p.read_bytes() for s in SECRETS)]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = _run(list(argv), False)
    out = capsys.readouterr()
    return code, out.out, out.err


@LOOPBACK
def test_seat_url_credentials_reach_no_file_and_no_output(
        tmp_path: Path, emulator: Emulator, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "not-needed")
    monkeypatch.setenv("COLUMNS", "200")
    seats = _seats(emulator)
    out = tmp_path / "t"
    tour = ("tournament", "stille-post", "--games", "2", "--seed", "1", "--players", seats,
            "--set", "max_rounds=1", "--online", "--out", str(out), "--json")
    outputs = [_cli(capsys, *tour)]
    assert outputs[0][0] == 0, outputs[0]
    outputs.append(_cli(capsys, "report", str(out), "--json", "--passes", "2"))
    assert outputs[-1][0] == 0
    assert "alice:%5Bredacted%5D@" in outputs[-1][1]  # the seat is there, masked
    outputs.append(_cli(capsys, "play", "--seed", "2", "--players", seats, "--online",
                        "--max-rounds", "1", "--out", str(tmp_path / "p.jsonl"),
                        "--record", str(tmp_path / "c.yaml")))
    assert outputs[-1][0] == 0 and "warning:" in outputs[-1][2]  # the 404ing seat
    assert (tmp_path / "c.yaml").is_file() and (tmp_path / "p.jsonl").is_file()
    # `--resume --out FOLDER` alone cannot play a masked password: one line, exit 2.
    code, _, err = _cli(capsys, "tournament", "--resume", "--out", str(out))
    assert code == 2 and "give the seats again" in err and len(err.strip().splitlines()) == 1
    # With the seats given again, the resume is the same tournament.
    code, _, err = _cli(capsys, *tour, "--resume")
    assert code == 0, err
    for _, stdout, stderr in outputs:
        assert not any(s in stdout or s in stderr for s in SECRETS)
    assert _leaks(tmp_path) == []
