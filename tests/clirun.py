"""Run `stille-post` command lines for tests, fast: `run_cli(...)` and `run_many(...)`.

A fresh interpreter spends a noticeable fraction of a second importing the CLI (more with
an SDK), and the suite runs the CLI about a hundred times: that was a large share of its
CPU. So each test
process starts one server (this file, run as a script) that imports the CLI once and
forks a child per command line. The child points file descriptors 0/1/2 at /dev/null and
two files, sets the requested environment and working directory, runs
`stille_post.cli.main(argv)` exactly as the console script does, and exits with its code.
It starts from a clean interpreter that is not pytest (no capture, no warning recorder,
no threads), so what it prints and returns is what a user would see.

A command line that names plugin games (`STILLE_POST_GAMES`) reloads the registry and the
CLI's modules in its child; a platform without `fork` gets a real new process per line.
tests/cli/test_bad_inputs.py also runs a few cases through the installed console script
and checks that both agree.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

GAMES_VAR = "STILLE_POST_GAMES"
ENTRY = "from stille_post.cli import main; main()"


# --- the server side (runs as a script) -----------------------------------------------------

def _child(job: Mapping[str, Any]) -> None:
    code = 70
    try:
        os.chdir(str(job["cwd"]))
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY),
                                (1, job["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            opened = os.open(path, flags, 0o644)
            os.dup2(opened, fd)
            os.close(opened)
        env = dict(job["env"])
        argv = [str(a) for a in job["argv"]]
        games_changed = env.get(GAMES_VAR, "") != os.environ.get(GAMES_VAR, "")
        os.environ.clear()
        os.environ.update(env)
        if games_changed:
            _load_other_games(env)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace",  # noqa: SIM115
                          closefd=False)
        sys.argv = ["stille-post", *argv]
        from stille_post.cli import main

        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # a crash the CLI did not catch: show it, as Python would
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _load_other_games(env: Mapping[str, str]) -> None:
    """The server imported the CLI with no plugin games; this command line names some
    (`STILLE_POST_GAMES`): reload the registry, and the CLI modules, whose per-game
    commands are built at import, as a fresh interpreter would."""
    # Where `python -c` would look: the working directory first, then PYTHONPATH.
    for entry in [*reversed(env.get("PYTHONPATH", "").split(os.pathsep)), os.getcwd()]:
        if entry and entry not in sys.path:
            sys.path.insert(0, entry)
    from stille_post.games import reload_registry

    reload_registry()
    for name in [m for m in sys.modules if m == "stille_post.cli" or
                 m.startswith("stille_post.cli.")]:
        del sys.modules[name]


def _run_jobs(jobs: Sequence[Mapping[str, Any]], parallel: int) -> list[int]:
    codes = [0] * len(jobs)
    running: dict[int, int] = {}
    pending = list(enumerate(jobs))
    while pending or running:
        while pending and len(running) < parallel:
            index, job = pending.pop(0)
            pid = os.fork()
            if pid == 0:
                _child(job)
            running[pid] = index
        pid, status = os.wait()
        codes[running.pop(pid)] = os.waitstatus_to_exitcode(status)
    return codes


def _preload() -> None:
    """What many command lines import on first use, and a fresh interpreter would import
    again for each: matplotlib (a `report` draws charts: about 0.7 s) and the openai SDK
    (0.6 s; a dozen command lines of the suite play against a loopback OpenAI-compatible
    server or a cassette). Imported once, before any fork; the charts select the Agg
    backend themselves. The anthropic and google SDKs are left out: one or two command
    lines use them, and each server would pay 1.5 s for them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot
    import openai  # noqa: F401


def _build_the_command_once(app: Any) -> None:
    """typer turns the app into a click command on every call (18 ms for ours): built here
    once, before any fork, each child finds it made. The same command a fresh interpreter
    would build; an app made after a reload (plugin games) is built anew."""
    import typer.main

    build = typer.main.get_command
    built = build(app)

    def get_command(typer_app: Any) -> Any:
        return built if typer_app is app else build(typer_app)

    typer.main.get_command = get_command  # type: ignore[assignment]


def serve() -> None:
    """One request per line on stdin (a JSON list of jobs), one answer per line (their
    exit codes), until stdin closes."""
    import stille_post.cli  # (imported once, before any fork)

    _preload()
    _build_the_command_once(stille_post.cli.app)
    # Frozen before any fork: a child's collections skip the server's heap (the CLI and
    # matplotlib, hundreds of thousands of objects) instead of walking it, and touching
    # each object's header, which copied most of the heap's pages into every child. A
    # bad-input line took 0.25 s and now takes about 0.1 s. The child's own objects are
    # collected as usual, less often (fewer, larger young generations).
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)

    parallel = max(1, os.cpu_count() or 1)
    for line in sys.stdin:
        codes = _run_jobs(json.loads(line), parallel)
        sys.stdout.write(json.dumps(codes) + "\n")
        sys.stdout.flush()


# --- the client side (imported by tests) ------------------------------------------------------

class _Server:
    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.lock = threading.Lock()

    def _start(self) -> subprocess.Popen[str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, text=True, start_new_session=True,
                env={**os.environ, GAMES_VAR: ""})
        return self.proc

    def run(self, jobs: list[dict[str, Any]], timeout: float) -> list[int]:
        with self.lock:
            proc = self._start()
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(jobs) + "\n")
            proc.stdin.flush()
            answer: list[str] = []
            reader = threading.Thread(target=lambda: answer.append(proc.stdout.readline()),
                                      daemon=True)  # type: ignore[union-attr]
            reader.start()
            reader.join(timeout)
            if reader.is_alive() or not answer or not answer[0]:
                self.stop()  # the server and every child it forked
                raise subprocess.TimeoutExpired([j["argv"] for j in jobs], timeout)
            return [int(c) for c in json.loads(answer[0])]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None


_SERVER = _Server()
atexit.register(_SERVER.stop)


def keyless_env(**extra: str) -> dict[str, str]:
    """This environment without any API key variable (the names the CLI reads), plus
    `extra`: a command line under test must never find a real key."""
    from stille_post.providers.secrets import KEY_ENV_VARS

    env = {k: v for k, v in os.environ.items() if k not in KEY_ENV_VARS}
    env.update(extra)
    return env


def run_many(argvs: Sequence[Sequence[str]], *, cwd: Path | str,
             env: Mapping[str, str] | None = None, timeout: float = 600,
             ) -> list[subprocess.CompletedProcess[str]]:
    """Run each command line (without the program name) as `stille-post` would, in
    parallel on every core; `env` is the whole environment (default: this one)."""
    full_env = dict(os.environ if env is None else env)
    with tempfile.TemporaryDirectory(prefix="clirun-") as tmp:
        jobs = [{"argv": [str(a) for a in argv], "cwd": str(cwd), "env": full_env,
                 "stdout": os.path.join(tmp, f"{i}.out"),
                 "stderr": os.path.join(tmp, f"{i}.err")} for i, argv in enumerate(argvs)]
        if hasattr(os, "fork"):
            codes = _SERVER.run(jobs, timeout)
            return [subprocess.CompletedProcess(
                ["stille-post", *job["argv"]], code,
                Path(job["stdout"]).read_text(encoding="utf-8", errors="replace"),
                Path(job["stderr"]).read_text(encoding="utf-8", errors="replace"))
                for job, code in zip(jobs, codes, strict=True)]
    return [subprocess.run([sys.executable, "-c", ENTRY, *map(str, argv)], cwd=cwd,
                           env=full_env, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL, check=False) for argv in argvs]


def run_cli(*args: str, cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """One `stille-post ARGS...` (see `run_many`)."""
    return run_many([args], cwd=cwd if cwd is not None else os.getcwd(), env=env,
                    timeout=timeout)[0]


if __name__ == "__main__":
    # Run as a script, this file's folder (tests/) leads sys.path: its sub-packages must
    # not shadow anything the CLI imports.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent]
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        sys.exit("usage: python tests/clirun.py --serve  (a test helper; see its docstring)")
