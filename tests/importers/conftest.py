"""Fixtures for the importer tests (`--import-mode=importlib`: helpers come as fixtures)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.importers.eg import ImportStats, import_logs

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "fixtures" / "elimination_logs"

Import = Callable[..., ImportStats]
Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def logs() -> Path:
    return LOGS


@pytest.fixture
def do_import() -> Import:
    def run(out: Path, *paths: Path, strict: bool = False) -> ImportStats:
        return import_logs(list(paths) or [LOGS], out, strict=strict)
    return run


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    """The fixtures imported once into a fresh folder."""
    out = tmp_path / "imported"
    import_logs([LOGS], out)
    return out


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """Run `stille-post ARGS` in-process: (exit code, stdout, stderr)."""
    from stille_post.cli import _run

    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setenv("COLUMNS", "200")
        capsys.readouterr()
        code = _run(list(args), False)
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


@pytest.fixture
def read_jsonl() -> Callable[[Path], list[dict[str, Any]]]:
    def read(path: Path) -> list[dict[str, Any]]:
        return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    return read
