"""Chaos on the new surface (issue 27): the importer, config files and scripts, fed seeded
random damage, each run bounded in time. Counted per surface:

- crash: an exception the package did not turn into its own error (for the importer: a
  non-zero exit, since a bad line is a named skip), or a message with a traceback;
- lost: a game the damage did not touch that is not imported, or a `.part` left behind;
- leak: a secret of the input (a URL password, a query key) in any output;
- hang: a run past `BOUND_S` (SIGALRM in the main thread; `_Hang` is no Exception).

The games themselves (all four, seat URLs with credentials) are in harness.py.
"""

from __future__ import annotations

import io
import random
import signal
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import cast

from stille_post.core.errors import UsageError
from tests.security.bombs import alias_bomb, text_bomb

BOUND_S = 30
ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "fixtures" / "elimination_logs" / "game_1754984898827689.jsonl"
GID = "1754984898827689"
SURFACE_SECRET = "chaos-pw-Jd4Wq8Nc2Mz6"


@dataclass
class SurfaceFigures:
    tried: int = 0
    crashes: int = 0
    lost: int = 0
    leaks: int = 0
    hangs: int = 0
    refused: int = 0  # a one-line error of the package's own (the defined outcome)
    examples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.crashes == self.lost == self.leaks == self.hangs == 0


class Hang(BaseException):
    """Raised by `bounded`'s SIGALRM: not an Exception, so no `except Exception` in the
    code under test can swallow it."""


@contextmanager
def bounded(seconds: int = BOUND_S) -> Iterator[None]:
    """Raise `Hang` in the main thread if the block runs past `seconds`."""
    def alarm(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"ran past {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _cli(argv: list[str]) -> tuple[int, str]:
    from stille_post.cli import _run

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = _run(argv, False)
    return code, out.getvalue() + err.getvalue()


# --- damage -----------------------------------------------------------------------------

def _damage_line(rng: random.Random, line: bytes) -> bytes:
    """One seeded way to break a log line."""
    pick = rng.randrange(10)
    if pick == 0:
        return line[: rng.randrange(1, max(2, len(line)))]  # cut off
    if pick == 1:
        i = rng.randrange(len(line))
        return line[:i] + bytes([rng.randrange(256)]) + line[i + 1:]  # one byte flipped
    if pick == 2:
        return line.replace(b'"message": "', b'"message": "\\ud83d', 1)  # lone surrogate
    if pick == 3:
        return line.replace(GID.encode(), b"\\u001b]0;x\\u0007" + GID.encode(), 1)
    if pick == 4:
        return b"[" * 50_000 + b"]" * 50_000
    if pick == 5:
        return line.replace(b'"round": 1', b'"round": ' + b"9" * 5000, 1)
    if pick == 6:
        return b"\xef\xbb\xbf" + line
    if pick == 7:
        return line.replace(b'"type": "', b'"type": 7, "x": "', 1)
    if pick == 8:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    return line + b"\x00"


def chaos_import(files: int, seed: int, tmp: Path) -> SurfaceFigures:
    """Each file: the fixture game with 1-3 damaged lines, then an untouched copy of it
    under another id, which must always be imported."""
    f = SurfaceFigures()
    good = LOG.read_bytes().splitlines()
    for n in range(files):
        rng = random.Random(f"{seed}:import:{n}")
        lines = list(good)
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(len(lines))
            lines[i] = _damage_line(rng, lines[i])
        intact_id = f"99{n:014d}"
        intact = [x.replace(GID.encode(), intact_id.encode()) for x in good]
        folder = tmp / f"import-{n}"
        folder.mkdir(parents=True)
        (folder / "log.jsonl").write_bytes(b"\n".join(lines + intact) + b"\n")
        f.tried += 1
        label = f"import {n} (seed {seed})"
        try:
            with bounded():
                code, text = _cli(["import", "elimination", "logs", str(folder / "log.jsonl"),
                                   "--out", str(folder / "out")])
        except Hang:
            f.hangs += 1
            f.examples.append(f"{label}: ran past {BOUND_S} s")
            continue
        if code != 0 or "Traceback" in text or "unexpected" in text:
            f.crashes += 1
            f.examples.append(f"{label}: exit {code}: {text[-200:]!r}")
        games = folder / "out" / "games"
        if not (games / f"eg-{intact_id}.jsonl").is_file() or list(games.glob("*.part")):
            f.lost += 1
            f.examples.append(f"{label}: the intact game was not imported")
        if "\x1b" in text:
            f.leaks += 1  # a terminal escape reached the terminal
            f.examples.append(f"{label}: an escape sequence in the summary")
    return f


# --- config files, models.toml and scripts -----------------------------------------------

def _mutate_text(rng: random.Random, text: str) -> str:
    pick = rng.randrange(7)
    if pick == 0:
        return text[: rng.randrange(len(text))]
    if pick == 1:
        i = rng.randrange(len(text))
        return text[:i] + rng.choice('[]{}="\'\n\\#.,x0-') + text[i + 1:]
    if pick == 2:
        return text + "\nx = " + "[" * 3000 + "]" * 3000 + "\n"
    if pick == 3:
        return text.replace("40", "9" * 5000, 1).replace("0.7", "-3.0", 1)
    if pick == 4:
        return text.replace("127.0.0.1", f"u:{SURFACE_SECRET}@127.0.0.1:99999", 1)
    if pick == 5:
        lines = text.splitlines()
        rng.shuffle(lines)
        return "\n".join(lines)
    return text.replace("=", "= [", 1)


def _checked(f: SurfaceFigures, label: str, run: Callable[[], object],
             refusals: tuple[type[BaseException], ...]) -> None:
    f.tried += 1
    err = io.StringIO()
    try:
        with bounded(), redirect_stderr(err):
            run()
    except Hang:
        f.hangs += 1
        f.examples.append(f"{label}: ran past {BOUND_S} s")
        return
    except refusals as exc:
        f.refused += 1
        if SURFACE_SECRET in str(exc) and "[redacted]" not in str(exc):
            from stille_post.providers.secrets import redact

            if SURFACE_SECRET in redact(str(exc)):  # what the CLI would print
                f.leaks += 1
                f.examples.append(f"{label}: the password in {str(exc)[:120]!r}")
    except Exception as exc:  # what we count
        f.crashes += 1
        f.examples.append(f"{label}: escaped {type(exc).__name__}: {str(exc)[:150]}")
    if SURFACE_SECRET in err.getvalue():
        f.leaks += 1
        f.examples.append(f"{label}: the password on stderr")


def chaos_config_files(n: int, seed: int, tmp: Path) -> SurfaceFigures:
    """Mutated copies of the shipped tournament.toml and models.toml, loaded as the CLI
    loads them (refused in one line, or accepted: never a crash, hang or leak)."""
    from stille_post.configfiles import load_tournament_file
    from stille_post.providers.models import load_models

    f = SurfaceFigures()
    tournament = (ROOT / "examples" / "tournament.toml").read_text(encoding="utf-8")
    models = (ROOT / "examples" / "models.toml").read_text(encoding="utf-8")
    folder = tmp / "configs"
    folder.mkdir(parents=True)
    for i in range(n):
        rng = random.Random(f"{seed}:config:{i}")
        t, m = folder / f"t{i}.toml", folder / f"m{i}.toml"
        t.write_text(_mutate_text(rng, tournament), encoding="utf-8", errors="replace")
        m.write_text(_mutate_text(rng, models), encoding="utf-8", errors="replace")
        _checked(f, f"tournament file {i}", lambda t=t: load_tournament_file(t),  # type: ignore[misc]
                 (UsageError,))
        _checked(f, f"models file {i}", lambda m=m: load_models(m),  # type: ignore[misc]
                 (UsageError,))
    return f


def chaos_scripts(n: int, seed: int, tmp: Path) -> SurfaceFigures:
    """Mutated scripts and YAML bombs, read as a `script:` seat is read."""
    from stille_post.players.base import PromptBook
    from stille_post.players.script_seat import script_player
    from stille_post.players.specs import SeatSpec

    f = SurfaceFigures()
    base = ("- {tool: {name: guess_model, arguments: {guesses: {'2': gpt-5}}}}\n"
            "- 'plain text'\n- {text: hello, usage: {input_tokens: 3}}\n"
            "- {error: rate_limit}\n- {raw_arguments: '{oops'}\n")
    folder = tmp / "scripts"
    folder.mkdir(parents=True)
    prompts = cast(PromptBook, object())  # never rendered: the seat is only read
    for i in range(n):
        rng = random.Random(f"{seed}:script:{i}")
        text = (alias_bomb() if i % 10 == 0 else text_bomb() if i % 10 == 1
                else _mutate_text(rng, base))
        path = folder / f"s{i}.yaml"
        path.write_text(text, encoding="utf-8", errors="replace")
        _checked(f, f"script {i}",
                 lambda p=path: script_player(SeatSpec(raw=f"script:{p}", script=str(p)),  # type: ignore[misc]
                                              prompts),
                 (UsageError,))
    return f


def run_surface(seed: int, *, imports: int, configs: int,
                scripts: int) -> list[tuple[str, SurfaceFigures]]:
    with tempfile.TemporaryDirectory(prefix="chaos-surface-") as tmp:
        return [("importer", chaos_import(imports, seed, Path(tmp) / "imp")),
                ("config files", chaos_config_files(configs, seed, Path(tmp) / "cfg")),
                ("scripts", chaos_scripts(scripts, seed, Path(tmp) / "scr"))]


def report_surface(name: str, f: SurfaceFigures) -> str:
    return (f"{name}: {f.tried} hostile inputs ({f.refused} refused in one line): "
            f"crashes {f.crashes}, leaks {f.leaks}, lost games {f.lost}, hangs {f.hangs}")


__all__ = ["SurfaceFigures", "report_surface", "run_surface"]
