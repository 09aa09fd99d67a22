"""Running the installed console script, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The venv's console script when there is one (what the issue asks to drive), else the
# same entry point through this interpreter.
SCRIPT = Path(sys.executable).with_name("stille-post")
KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
            "OPENAI_COMPATIBLE_API_KEY")


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    env.update({"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
                "COLUMNS": "200"})
    cmd = [str(SCRIPT)] if SCRIPT.exists() else \
        [sys.executable, "-c", "from stille_post.cli import main; main()"]
    return subprocess.run([*cmd, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a usage error (exit 2), or a failed assertion."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-1500:])
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]
