"""Root pytest configuration shared by spec/ and tests/.

- `--online` runs tests marked `online` against the real APIs (skipped without it, and
  skipped when the keys they need are missing).
- VCR cassettes live in the top-level `cassettes/`; pytest-recording's record mode comes
  only from the command line (`--record-mode=once|rewrite`), never from config.
- Under `-n auto --dist loadfile`, files marked `heavy` (a few seconds each) are handed
  out first, then the rest, most tests first; see `pytest_collection_modifyitems`.
"""

from __future__ import annotations

import compileall
import gc
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

ROOT = Path(__file__).parent

# Some machines (this project's CI among them) export PYTHONDONTWRITEBYTECODE=1. Then every
# test process compiles every test module (with pytest's assertion rewriting) and every
# package module from source, and so does every `stille-post` child a test starts: about
# four seconds per process before a test runs. The caches go to __pycache__/ (ignored by
# git); reading them needs no write, so children benefit as soon as one process wrote.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# Property tests: 100 examples each in the fast suite (hypothesis's default); `nox -s slow`
# runs every property test again with `--hypothesis-profile=thorough`. A test that sets
# max_examples itself keeps its own count.
settings.register_profile("fast", max_examples=100, deadline=None)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile("fast")

# The VCR configuration (secret filters, header allow-lists, matching) is shared with the
# CLI's --record/--replay: one definition in stille_post.providers.recording.


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--online", action="store_true", default=False,
                     help="run tests marked 'online' against the live APIs (needs keys)")


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        _compile_before_the_workers_start()
        _rewrite_test_modules_once(config)
    # xdist's loadfile hands out files with the most tests first, which leaves the files of
    # one or two long tests (a kill -9 and resume, a statistical run) to the end: one
    # worker then finishes them while the other idles (docs/performance.md). The order is
    # set below instead, and xdist keeps it.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


# The modules pytest compiles itself, with its assertion rewriting (python_files' default
# and conftest files): left out of the plain compile, and rewritten once below.
_PYTEST_REWRITES = re.compile(r"(^|[\\/])(test_[^\\/]*|conftest)\.py$")


def _compile_before_the_workers_start() -> None:
    """A fresh clone has no bytecode: every test process, and every `stille-post` child,
    would compile the same modules at once (CI's run is always such a run: 3 s more on 2
    cores). Compiled here first, by the xdist controller, in 0.3 s. Test modules and
    conftest files are left to pytest, which compiles them with its assertion rewriting."""
    for folder in ("stille_post", "tests", "spec", "benchmarks"):
        if (ROOT / folder).is_dir():
            compileall.compile_dir(ROOT / folder, quiet=2, workers=0, rx=_PYTEST_REWRITES)


def _rewrite_test_modules_once(config: pytest.Config) -> None:
    """Both workers would rewrite every test module's asserts at once (1.8 s of CPU each
    on a fresh clone); done here once, on every core, in forked processes, through
    pytest's own (private) functions. If they are not there: skipped, and the workers
    rewrite as before."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )
    except ImportError:
        return
    import multiprocessing

    state = config.stash.get(assertstate_key, None)
    if state is None or not hasattr(os, "fork"):
        return  # --assert=plain, or no fork here

    def rewrite(paths: list[Path]) -> None:
        for path in paths:
            cache = get_cache_dir(path)
            cache.mkdir(exist_ok=True)
            pyc = cache / (path.name[:-3] + PYC_TAIL)
            if _read_pyc(path, pyc, state.trace) is None:
                try:
                    source_hash, code = _rewrite_test(path, config)
                except (SyntaxError, OSError, ValueError):
                    continue  # the worker that imports it reports it, as usual
                _write_pyc(state, code, source_hash, pyc)

    files = sorted(p for folder in ("tests", "spec") for p in (ROOT / folder).rglob("*.py")
                   if _PYTEST_REWRITES.search(str(p)))
    cores = os.cpu_count() or 1
    fork = multiprocessing.get_context("fork")  # the target is not pickled
    procs = [fork.Process(target=rewrite, args=(files[i::cores],)) for i in range(cores)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _heavy_files_first(items)
    if config.getoption("--online"):
        return
    skip = pytest.mark.skip(reason="live API test: run with --online and the provider's key")
    for item in items:
        if "online" in item.keywords:
            item.add_marker(skip)


def _heavy_files_first(items: list[pytest.Item]) -> None:
    """Longest work first, so that the run ends on short files: files marked `heavy`,
    then the others by number of tests (xdist's own rule). Each file's tests keep their
    order, and every worker computes the same order (xdist checks that)."""
    tests_in: dict[Path, int] = {}
    heavy: set[Path] = set()
    for item in items:
        tests_in[item.path] = tests_in.get(item.path, 0) + 1
        if item.get_closest_marker("heavy") is not None:
            heavy.add(item.path)
    first_seen = {path: i for i, path in enumerate(tests_in)}
    items.sort(key=lambda item: (item.path not in heavy, -tests_in[item.path],
                                 first_seen[item.path]))


def pytest_collection_finish(session: pytest.Session) -> None:
    # Everything imported so far (the three SDKs, matplotlib, scipy: hundreds of thousands
    # of objects) lives as long as the process. Left in the collector's generations, every
    # full collection during the tests walks all of it again; frozen, it is skipped. The
    # tests' own garbage is collected as usual, in fewer and larger young generations.
    # Together: about 9 s less CPU per run of the suite (docs/performance.md).
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    # An xdist worker's last act. Its heap (the three SDKs alone import thousands of modules)
    # would be walked by the collector once more as the interpreter exits, and the whole
    # run waits for it. Frozen objects are skipped; the process is ending anyway.
    if hasattr(config, "workerinput"):
        gc.freeze()


def pytest_recording_configure(config: pytest.Config, vcr: Any) -> None:
    from stille_post.providers.recording import json_body

    vcr.register_matcher("body", json_body)  # as the CLI's --replay does


@pytest.fixture(scope="module")
def vcr_config() -> dict[str, Any]:
    from stille_post.providers.recording import vcr_config as shared_vcr_config

    return shared_vcr_config()


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    return str(ROOT / "cassettes" / request.module.__name__.split(".")[-1])
