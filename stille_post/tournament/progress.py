"""The rich progress bar: games done and failed, ETA, tokens and dollars so far; and the
one line a run stopped by a signal ends with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class InFlightColumn(ProgressColumn):
    """Provider calls in flight right now, read at each refresh (not only when a game
    ends): a cap or a 429 back-off shows up here as the number staying low."""

    def render(self, task: Task) -> Text:
        from stille_post.providers.inflight import in_flight
        from stille_post.providers.replicas import progress_text

        replicas = progress_text()  # calls per replica of a replicated alias, if any
        return Text(f"{in_flight()} in flight" + (f" ({replicas})" if replicas else ""),
                    style="cyan")


class TournamentProgress:
    """Counts are kept here too, so the runner can report them with the bar hidden."""

    def __init__(self, total: int, *, already_done: int = 0, console: Console | None = None,
                 enabled: bool = True, budget: Callable[[], str] | None = None) -> None:
        # `budget` says the spend against the caps ("cap: $0.42 of $1.00"), per game.
        self._budget = budget
        self.done = already_done
        self.failed = 0
        self.tokens = 0
        self.dollars = 0.0
        self._progress: Progress | None = None
        self._task: Any = None
        if enabled:
            self._progress = Progress(
                TextColumn("[bold]games"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("[red]{task.fields[failed]} failed"),
                TextColumn("{task.fields[tokens]:,} tok"),
                TextColumn("${task.fields[dollars]:.2f}"),
                *([TextColumn("{task.fields[budget]}")] if budget is not None else []),
                InFlightColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console or Console(stderr=True),
                transient=False,
            )
            self._task = self._progress.add_task("games", total=total, completed=already_done,
                                                 failed=0, tokens=0, dollars=0.0,
                                                 budget=budget() if budget else "")

    def game_finished(self, *, failed: bool, tokens: int, dollars: float) -> None:
        self.games_finished(1, failed=int(failed), tokens=tokens, dollars=dollars)

    def games_finished(self, games: int, *, failed: int, tokens: int, dollars: float) -> None:
        """`games` finished at once (a worker process reports in batches)."""
        self.done += games
        self.failed += failed
        self.tokens += tokens
        self.dollars += dollars
        if self._progress is not None:
            extra: dict[str, Any] = {"budget": self._budget()} if self._budget else {}
            self._progress.update(self._task, advance=games, failed=self.failed,
                                  tokens=self.tokens, dollars=self.dollars, **extra)

    def __enter__(self) -> TournamentProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()


def stop_line(why: str, saved: int, planned: int, folder: Path, resume: str) -> str:
    """After the first Ctrl-C (or SIGTERM, SIGHUP): why, what is saved, how to go on."""
    games = f"{saved} of {planned} games saved" if saved >= 0 else "the finished games saved"
    return f"{why}: {games} in {folder}; continue with: {resume}"


def hard_stop_line(why: str, resume: str) -> str:
    """After a second signal, which exits at once."""
    return (f"{why} again: stopped at once; the games saved so far are kept; "
            f"continue with: {resume}")
