"""nox sessions: tests, spec, lint, bench. `nox -l` lists them."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "spec", "lint"]
nox.options.reuse_existing_virtualenvs = True


def _install(session: nox.Session) -> None:
    session.install("-e", ".[dev]")


@nox.session
def tests(session: nox.Session) -> None:
    """The whole offline suite (spec scenarios + tests), network blocked."""
    _install(session)
    session.run("pytest", "--block-network", *session.posargs)


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


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: print figures and ratios (never asserted)."""
    _install(session)
    session.run("python", "-m", "benchmarks", *session.posargs)
