"""Running the installed console script, as a user would."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests import clirun

ROOT = Path(__file__).resolve().parents[2]
# The CLI's entry point in a process of its own (tests/clirun.py: forked from a server
# that imported the CLI once; tests/cli/test_bad_inputs.py checks the installed console
# script gives the same answers).


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = clirun.keyless_env(HTTPS_PROXY="http://127.0.0.1:9",
                             HTTP_PROXY="http://127.0.0.1:9", COLUMNS="200")
    return clirun.run_cli(*args, cwd=cwd, env=env)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a usage error (exit 2), or a failed assertion."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-1500:])
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]
