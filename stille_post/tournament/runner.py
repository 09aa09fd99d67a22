"""Run a tournament: many games on one asyncio loop, each through `play_game`.

A fixed pool of `concurrency` workers pulls games from the plan, so memory does not grow
with the number of games; inside a game the engine already awaits simultaneous decisions
together. Finished games are made durable and indexed in groups (transcripts renamed
into place and synced, then their rows: tournament/groupcommit.py), so `--resume` after
any crash replays exactly the games without a row or a transcript in place.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import nullcontext, suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from stille_post.core.errors import ConfigError, UsageError
from stille_post.core.quietgc import quiet_gc
from stille_post.core.rng import make_rng
from stille_post.core.stopping import STOP_REASONS, detach_output, is_hangup
from stille_post.core.text import clean_text
from stille_post.core.transcript import FSYNC_RESULTS, TranscriptWriter
from stille_post.games import get_game
from stille_post.games.kit.setup import LLMFactory, prepare
from stille_post.providers.inflight import count_across_processes
from stille_post.providers.pool import close_idle
from stille_post.providers.pricing import recorded_cost_usd
from stille_post.providers.secrets import redact
from stille_post.session import GameRun, play_game
from stille_post.tournament.budget import BudgetGuard
from stille_post.tournament.caps import Caps, check_caps
from stille_post.tournament.config import GameSpec, TournamentConfig
from stille_post.tournament.groupcommit import GroupCommit
from stille_post.tournament.index import GameIndex, IndexRow
from stille_post.tournament.limits import RateLimits
from stille_post.tournament.progress import TournamentProgress, hard_stop_line, stop_line
from stille_post.tournament.results import (
    GAMES_DIR,
    IO_FAILURE,
    is_complete,
    open_for_run,
    result_line,
    row_from_transcript,
    transcript_path,
)
from stille_post.tournament.seating import (
    SEATING_FILE,
    AdaptiveSeating,
    append_round,
    read_rounds,
)


@dataclass
class RunStats:
    planned: int  # games this run (shard) owns
    skipped: int  # already finished before this run started
    played: int = 0
    aborted: int = 0
    tokens: int = 0
    dollars: float = 0.0
    game_ids: list[str] = field(default_factory=list)  # played by this run, in finish order
    budget: dict[str, Any] | None = None  # spend.json as this run left it (with caps)


def check_run_settings(concurrency: int, workers: int, limits: RateLimits | None) -> None:
    """Refuse settings no run can use (the CLI calls this before it announces a run)."""
    if concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    if workers < 1:
        raise ConfigError("--workers must be at least 1")
    if workers > 1 and limits is not None and limits.limits:
        # Each process would keep its own buckets and allow the whole rate.
        raise ConfigError("rate limits need --workers 1")


async def run_tournament(
    config: TournamentConfig,
    out: Path,
    *,
    resume: bool = False,
    concurrency: int = 8,
    limits: RateLimits | None = None,
    llm_factory: LLMFactory | None = None,
    progress: bool = False,
    durable: bool = True,
    retry_aborted: bool = False,
    run_settings: Mapping[str, Any] | None = None,
    workers: int = 1,
    caps: Caps | None = None,
    stop_on_signals: bool = False,
    resume_command: str | None = None,
) -> RunStats:
    """Play every game of `config`'s shard that `out` has not finished yet.

    `stop_on_signals` (the CLI): the first Ctrl-C, SIGTERM or SIGHUP stops the run
    within seconds, its finished games saved, and raises `RunInterrupted` (the stop
    line names `resume_command`); a second one exits the process at once
    (`_RunSignals`).

    `durable` syncs each group of finished transcripts (data and renames) before their
    rows are written: without it a power cut (not a process crash) could leave an indexed
    game whose file never reached the disk.
    An aborted game is a finished game (the report counts it); `retry_aborted` plays
    such games again, replacing their transcripts and rows.

    `workers` > 1 plays in that many processes (each an asyncio loop with its share of the
    games and of `concurrency`), all writing to `out`: the CPU-bound case (bots, fast
    local models) then uses every core. Needs the `fork` start method (Linux). The shares
    add up to `concurrency` exactly (`process_slots`), so there are never more processes
    than games at once.

    `caps` (tournament/budget.py): no game starts once the next one would cross a cap.
    """
    check_run_settings(concurrency, workers, limits)
    workers = min(workers, concurrency)  # each process plays at least one game at a time
    if caps is not None:
        check_caps(config, caps, workers)
    validate(config, llm_factory)
    signals = _RunSignals(out, resume_command) if stop_on_signals else None
    if signals is not None:
        signals.install()
    try:
        with quiet_gc():
            return await _run(config, out, resume=resume, concurrency=concurrency,
                              limits=limits, llm_factory=llm_factory, progress=progress,
                              durable=durable, retry_aborted=retry_aborted,
                              run_settings=run_settings, workers=workers, caps=caps)
    except asyncio.CancelledError:
        if signals is None or signals.signum is None:
            raise
        raise signals.interrupted(len(config.shard_plan())) from None
    finally:
        if signals is not None:
            signals.remove()


class RunInterrupted(Exception):
    """A run stopped by a signal, its finished games saved. `line` is the one line to
    print: why, how many games are saved, and the command that continues the run."""

    def __init__(self, signum: int, line: str) -> None:
        super().__init__(line)
        self.signum = signum
        self.line = line

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # as a shell reports a process the signal ended


class _RunSignals:
    """Ctrl-C, SIGTERM and SIGHUP during a run.

    The first cancels the run: worker processes are told to stop (SIGTERM; they ignore
    the terminal's own signals, `_worker_process`) and given STOP_GRACE_S to commit the
    games they finished, the cut games stay `.part` files for the resume, and the run
    ends with `RunInterrupted`. The second exits the process at once: the workers are
    killed and the line is printed with `os._exit`, as after a `kill -9`, which a resume
    survives (tests/tournament/test_tour_resume.py)."""

    def __init__(self, out: Path, resume_command: str | None) -> None:
        self.out = out
        self.resume = resume_command or resume_command_for(out)
        self.signum: int | None = None
        self._installed: list[int] = []

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        for signum in STOP_REASONS:
            try:
                loop.add_signal_handler(signum, self._signal, signum, task)
            except (NotImplementedError, RuntimeError, ValueError):
                continue  # not the main thread: the caller keeps its own handling
            self._installed.append(signum)

    def remove(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in self._installed:
            loop.remove_signal_handler(signum)
        self._installed.clear()

    def _signal(self, signum: int, task: asyncio.Task[Any] | None) -> None:
        if self.signum is not None:
            self._hard_stop(signum)
        self.signum = signum
        if is_hangup(signum):
            detach_output()
        if task is not None:
            task.cancel()

    def _hard_stop(self, signum: int) -> None:
        for p in list(_LIVE_WORKERS):
            with suppress(Exception):
                p.kill()
        show_cursor = "\x1b[?25h" if os.isatty(2) else ""  # the progress bar hid it
        line = hard_stop_line(STOP_REASONS[signum], self.resume)
        with suppress(OSError):
            os.write(2, f"{show_cursor}\n{line}\n".encode())
        os._exit(128 + signum)

    def interrupted(self, planned: int) -> RunInterrupted:
        assert self.signum is not None
        try:
            index = GameIndex.open(self.out)
            try:
                saved = index.count()
            finally:
                index.close()
        except Exception:  # the line still says how to go on
            saved = -1
        return RunInterrupted(self.signum, stop_line(STOP_REASONS[self.signum], saved,
                                                     planned, self.out, self.resume))


def resume_command_for(out: Path) -> str:
    """The command that continues the run in `out` (the folder keeps every setting)."""
    return f"stille-post tournament --resume --out {shlex.quote(str(out))}"


async def _run(config: TournamentConfig, out: Path, *, resume: bool, concurrency: int,
               limits: RateLimits | None, llm_factory: LLMFactory | None, progress: bool,
               durable: bool, retry_aborted: bool, run_settings: Mapping[str, Any] | None,
               workers: int, caps: Caps | None = None) -> RunStats:
    index = open_for_run(out, config, resume=resume, run=run_settings)
    guard = BudgetGuard.open(out, config, caps, index) if caps is not None and caps.active \
        else None
    stats: RunStats | None = None
    # The games' writers do not fsync on the event loop: finished transcripts are synced
    # in groups, in a thread, when `durable` (tournament/groupcommit.py), and not at all
    # without it. Tasks created below inherit this context.
    no_fsync = FSYNC_RESULTS.set(False)
    try:
        if retry_aborted:
            index.drop_unfinished_outcomes()
        finished = index.ids()
        plan = config.shard_plan()
        todo = [g for g in plan if g.id not in finished]
        stats = RunStats(planned=len(plan), skipped=len(plan) - len(todo))
        factory = (limits or RateLimits()).wrap(llm_factory)
        if guard is not None:
            factory = guard.wrap(factory)
        spec_by_id = {g.id: (g.index, g.seed) for g in plan}
        if config.seating == "adaptive":
            await _play_rounds(config, out, index, stats, spec_by_id, factory,
                               finished=finished, workers=workers, concurrency=concurrency,
                               durable=durable, retry_aborted=retry_aborted,
                               progress=progress, budget=guard)
            return stats
        if workers > 1 and len(todo) > 1:
            index.close()  # each process opens its own connection
            return await _run_processes(config, out, todo, stats, spec_by_id, factory,
                                        workers=min(workers, len(todo)),
                                        concurrency=concurrency, durable=durable,
                                        retry_aborted=retry_aborted, progress=progress,
                                        planned=len(plan))
        await _play_share(config, out, index, todo, stats, spec_by_id, factory,
                          concurrency=concurrency, durable=durable,
                          retry_aborted=retry_aborted, progress=progress,
                          planned=len(plan), budget=guard)
        return stats
    finally:
        FSYNC_RESULTS.reset(no_fsync)
        if guard is not None:
            # Why this run stopped, and what the folder has spent, go to spend.json.
            index.flush()
            left = len(config.shard_plan()) - index.count()
            record = guard.record(len(config.shard_plan()), index.count(),
                                  interrupted=left > 0 and guard.stopped is None
                                  and sys.exc_info()[0] is not None)
            if stats is not None:
                stats.budget = record
        index.close()
        # Last: an await here may be cancelled again (a second Ctrl-C), and the index and
        # the budget record above must not depend on it.
        await close_idle()  # the providers the games gave back (providers/pool.py)


async def _play_rounds(config: TournamentConfig, out: Path, index: GameIndex,
                       stats: RunStats, spec_by_id: dict[str, tuple[int, int]],
                       factory: LLMFactory | None, *, finished: set[str], workers: int,
                       concurrency: int, durable: bool, retry_aborted: bool, progress: bool,
                       budget: BudgetGuard | None) -> None:
    """`--seating adaptive`: the games in rounds of `config.round_games`. Round r's seats
    come from the ratings of every game of rounds < r (their transcripts' placements, in
    game order) and an rng seeded by (seed, r); the round is then played like any plan
    (`concurrency` games at a time, or `workers` processes) and waited for before the
    next is chosen. So concurrency, workers and timing never change a choice, and each
    round's tables are appended to seating.jsonl before its games start: `--resume`
    adopts the recorded rounds (even when a replayed aborted game now has a result) and
    chooses the later ones exactly as an uninterrupted run would."""
    assert config.pool is not None and config.seats is not None
    assert config.round_games is not None
    seating = AdaptiveSeating(config.pool, config.seats, seed=config.seed,
                              role_seats=config.role_seats())
    recorded = read_rounds(out, config.pool)
    size = config.round_games
    in_processes = workers > 1
    if in_processes:
        index.close()  # each process opens its own connection
    with TournamentProgress(config.games, already_done=stats.skipped, enabled=progress,
                            budget=budget.progress_text if budget else None) as bar:
        for r, start in enumerate(range(0, config.games, size)):
            n = min(size, config.games - start)
            if r < len(recorded):
                if len(recorded[r]) != n:
                    raise ConfigError(f"{out / SEATING_FILE}: round {r} has "
                                      f"{len(recorded[r])} games, this tournament {n}")
                tables = seating.next_round(n, recorded[r])
            else:
                tables = seating.next_round(n)
                append_round(out, config.pool, r, tables, durable=durable)
            specs = [GameSpec(start + k, config.seed + start + k, t)
                     for k, t in enumerate(tables)]
            todo = [g for g in specs if g.id not in finished]
            if todo and in_processes:
                await _run_processes(config, out, todo, stats, spec_by_id, factory,
                                     workers=min(workers, len(todo)),
                                     concurrency=concurrency, durable=durable,
                                     retry_aborted=retry_aborted, progress=progress,
                                     planned=config.games, bar=bar)
            elif todo:
                await _play_share(config, out, index, todo, stats, spec_by_id, factory,
                                  concurrency=concurrency, durable=durable,
                                  retry_aborted=retry_aborted, progress=progress,
                                  planned=config.games, budget=budget, bar=bar)
                index.flush()  # places the round's transcripts
            if budget is not None and budget.stopped is not None:
                return  # a cap: the next round is chosen by the run that continues
            for g in specs:
                assert g.players is not None
                seating.record(g.players, _ranks(out, g))


def _ranks(out: Path, spec: GameSpec) -> list[int] | None:
    """Each seat's placement in `spec`'s finished game (None: aborted, invalid, missing)."""
    result = result_line(transcript_path(out, spec.id))
    if not result or result.get("status") != "completed":
        return None
    placements = result.get("placements") or {}
    if (result.get("summary") or {}).get("valid") is False:
        return None
    try:
        return [int(placements[str(i + 1)]) for i in range(len(spec.players or ()))]
    except (KeyError, TypeError, ValueError):
        return None


async def _play_share(config: TournamentConfig, out: Path, index: GameIndex,
                      todo: list[GameSpec], stats: RunStats,
                      spec_by_id: dict[str, tuple[int, int]], factory: LLMFactory | None, *,
                      concurrency: int, durable: bool, retry_aborted: bool, progress: bool,
                      planned: int, report: Any = None,
                      budget: BudgetGuard | None = None,
                      bar: TournamentProgress | None = None) -> None:
    """Play `todo` on this event loop with `concurrency` games at a time. `report(failed,
    tokens, dollars)` (a worker process) is told of each finished game instead of a
    progress bar. `bar`: a progress bar that outlives this call (adaptive rounds)."""
    # Finished games wait for their group's commit as `.part` files: the group is renamed
    # into place, synced, then indexed (tournament/groupcommit.py).
    group = GroupCommit(index, out / GAMES_DIR, durable=durable)
    with nullcontext(bar) if bar is not None else TournamentProgress(
            planned, already_done=stats.skipped, enabled=progress and report is None,
            budget=budget.progress_text if budget else None) as bar:
        pending: Iterator[GameSpec] = iter(todo)

        def finished(failed: bool, tokens: int, dollars: float) -> None:
            bar.game_finished(failed=failed, tokens=tokens, dollars=dollars)
            if report is not None:
                report(failed, tokens, dollars)

        async def worker() -> None:
            for spec in pending:  # shared iterator: each game goes to one worker
                final = transcript_path(out, spec.id)
                kept = row_from_transcript(out, spec_by_id, final) \
                    if is_complete(final) else None
                if kept is not None and (kept.status == "completed" or not retry_aborted):
                    # Finished on disk but not indexed: index it, never play it again.
                    index.add(kept)
                    stats.skipped += 1
                    finished(kept.status != "completed", 0, 0.0)
                    continue
                if budget is not None and not await budget.admit(spec):
                    # A cap: no new game starts; the running ones finish. (`admit` waits
                    # while a game's cost is unknown: games start one at a time then.)
                    break
                part: Path | None = None
                try:
                    played = await _play_one(config, out, spec, factory)
                    row = _index_row(out, spec, played.run)
                    part = played.path
                except (UsageError, asyncio.CancelledError):
                    raise
                except Exception as exc:  # one game must not end the run
                    row = _aborted_row(out, spec, exc, config.game)
                await group.add(row, part, final)
                if budget is not None:
                    budget.finished(spec.id, out)
                stats.played += 1
                stats.aborted += row.status != "completed"
                tokens = row.input_tokens + row.output_tokens
                stats.tokens += tokens
                stats.dollars += row.dollars
                stats.game_ids.append(spec.id)
                finished(row.status != "completed", tokens, row.dollars)

        group.start()
        workers = [asyncio.create_task(worker()) for _ in range(min(concurrency, len(todo)))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            # One failing game (a usage error, say) stops the run: cancel the rest so
            # their partial transcripts are closed as aborted and replayed on resume.
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        finally:
            # The finished games that wait are committed, even when the run stops.
            await group.close()
        index.flush()  # rows of transcripts found on disk (`kept`), if any wait


def process_slots(concurrency: int, workers: int) -> list[int]:
    """Games at once for each worker process: `concurrency` in all, exactly, as even as
    can be, and never a process without one (so at most `concurrency` processes).
    `--concurrency` is a bound a user may set for a server's sake: 64 games at once on 3
    processes are 22 + 21 + 21, and `--workers 4 --concurrency 2` is 2 processes."""
    workers = max(1, min(workers, concurrency))
    share, extra = divmod(concurrency, workers)
    return [share + (1 if k < extra else 0) for k in range(workers)]


async def _run_processes(config: TournamentConfig, out: Path, todo: list[GameSpec],
                         stats: RunStats, spec_by_id: dict[str, tuple[int, int]],
                         factory: LLMFactory | None, *, workers: int, concurrency: int,
                         durable: bool, retry_aborted: bool, progress: bool,
                         planned: int, bar: TournamentProgress | None = None) -> RunStats:
    """`workers` forked processes, each playing every `workers`-th game of `todo` with
    its share of `concurrency`; they tell this one about each game (for the progress bar)
    and their totals. The folder was prepared once, here, before the fork."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    queue = ctx.SimpleQueue()
    slots = process_slots(concurrency, workers)
    workers = len(slots)
    errors: list[tuple[str, str]] = []
    # count_across_processes: the progress line's "N in flight" counts every worker's
    with count_across_processes(workers, ctx) as join, \
            nullcontext(bar) if bar is not None else TournamentProgress(
                planned, already_done=stats.skipped, enabled=progress) as bar:
        procs = [ctx.Process(target=_worker_process, daemon=True,
                             args=(config, out, todo[k::workers], spec_by_id, factory,
                                   slots[k],
                                   durable, retry_aborted, planned, queue, partial(join, k),
                                   k))
                 for k in range(workers)]
        # Forked with the stop signals blocked: a worker inherits this loop's signal
        # wake-up pipe, and a signal it took before resetting that would reach this
        # process as if sent here (a Ctrl-C then read as two). Each worker resets and
        # unblocks them first thing (_worker_process); here they wait, blocked, until
        # the forks are done, and are then delivered.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            for p in procs:
                p.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        _LIVE_WORKERS.update(procs)
        messages = _QueueReader(queue)
        running = set(range(len(procs)))
        gone: dict[int, float] = {}
        try:
            while running:
                msg = await messages.get(timeout=0.5)
                if msg is None:  # quiet for a while: is every worker still there?
                    _check_alive(procs, running, messages, errors, gone)
                    continue
                if msg[0] == "finished":
                    bar.games_finished(msg[1], failed=msg[2], tokens=msg[3], dollars=msg[4])
                elif msg[0] == "done":
                    running.discard(msg[2])
                    share: RunStats = msg[1]
                    stats.skipped += share.skipped
                    stats.played += share.played
                    stats.aborted += share.aborted
                    stats.tokens += share.tokens
                    stats.dollars += share.dollars
                    stats.game_ids.extend(share.game_ids)
                elif msg[0] == "error":
                    running.discard(msg[3])
                    errors.append((msg[1], msg[2]))
        except asyncio.CancelledError:
            # Ctrl-C or a signal (`_RunSignals`): each worker commits the games it has
            # finished, closes its cut games as aborted `.part` files (replayed on
            # resume) and exits; one that takes longer than STOP_GRACE_S is killed,
            # which a resume also survives.
            await _stop_workers(procs)
            raise
        finally:
            for p in procs:
                if errors or running:
                    p.terminate()
            await _reap(procs)
            _LIVE_WORKERS.difference_update(procs)
    if errors:
        kind, text = errors[0]
        raise UsageError(text) if kind == "usage" else RuntimeError(f"a worker failed: {text}")
    return stats


_STOP_SIGNALS = set(STOP_REASONS)
# Live worker processes of this process's run: the hard stop (a second Ctrl-C) kills them.
_LIVE_WORKERS: set[Any] = set()
# How long stopping workers may take to commit what they finished before they are killed.
STOP_GRACE_S = 3.0


class _QueueReader:
    """The workers' messages, read by a daemon thread. Not `asyncio.to_thread`: a read
    that never returns (the workers gone) would hold the default executor, and so the
    interpreter's exit, for ever; a daemon thread is simply left behind."""

    def __init__(self, queue: Any) -> None:
        import threading

        self._loop = asyncio.get_running_loop()
        self._inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._thread = threading.Thread(target=self._read, args=(queue,), daemon=True,
                                        name="run-workers")
        self._thread.start()

    def _read(self, queue: Any) -> None:
        while True:
            try:
                msg = queue.get()
            except (EOFError, OSError):
                return
            try:
                self._loop.call_soon_threadsafe(self._inbox.put_nowait, msg)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                return

    async def get(self, timeout: float) -> Any:
        """The next message, or None after `timeout` seconds. `asyncio.timeout`, not
        `wait_for`: on Python 3.11, a cancel (Ctrl-C) that met a message in the same
        turn of the loop was swallowed by `wait_for`, which returned the message."""
        try:
            async with asyncio.timeout(timeout):
                return await self._inbox.get()
        except TimeoutError:
            return None

    def pending(self) -> bool:
        return not self._inbox.empty()


def _check_alive(procs: list[Any], running: set[int], messages: _QueueReader,
                 errors: list[tuple[str, str]], gone: dict[int, float]) -> None:
    """A worker that is gone without its last message (killed by the OOM killer, say)
    is a failed run, not a wait for ever. Its last message may still be on its way when
    its exit is seen: it is given a second before it counts as lost."""
    if messages.pending():
        return
    now = time.monotonic()
    for k in sorted(running):
        code = procs[k].exitcode
        if code is None:
            continue
        if now - gone.setdefault(k, now) >= 1.0:
            running.discard(k)
            errors.append(("other", f"worker {k + 1} ended without reporting "
                                    f"(exit code {code})"))


async def _stop_workers(procs: list[Any]) -> None:
    for p in procs:
        if p.exitcode is None:
            p.terminate()  # SIGTERM: the worker stops its games (_worker_process)
    deadline = time.monotonic() + STOP_GRACE_S
    while time.monotonic() < deadline and any(p.exitcode is None for p in procs):
        await asyncio.sleep(0.02)
    for p in procs:
        if p.exitcode is None:
            p.kill()


async def _reap(procs: list[Any]) -> None:
    """Wait for the workers to end, without a thread (see _QueueReader)."""
    while any(p.exitcode is None for p in procs):
        await asyncio.sleep(0.01)
    for p in procs:
        p.join()


def _die_with_parent() -> None:
    """A worker must not outlive the run it belongs to: when the parent is killed (even
    with SIGKILL, which no handler sees), the kernel kills the worker too (Linux
    PR_SET_PDEATHSIG), so an interrupted tournament stops playing, and spending, at once.
    Its unfinished games are redone by --resume as usual."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: daemon processes still end with a parent that exits normally
    if os.getppid() == 1:  # the parent died before the call above took effect
        os._exit(1)


# A worker tells the parent about finished games (for the progress bar) at most every
# REPORT_SECONDS, in one message. A message per game woke the parent, which shares the
# cores, for every game, and that showed in the wall time of fast runs with several
# workers. Slow games are still reported as each one ends.
REPORT_SECONDS = 0.1


class _Finished:
    """A worker's finished games not yet told to the parent."""

    def __init__(self, queue: Any) -> None:
        self.queue = queue
        self.games = self.failed = self.tokens = 0
        self.dollars = 0.0
        self.sent_at = time.monotonic()

    def __call__(self, failed: bool, tokens: int, dollars: float) -> None:
        self.games += 1
        self.failed += failed
        self.tokens += tokens
        self.dollars += dollars
        if time.monotonic() - self.sent_at >= REPORT_SECONDS:
            self.send()

    def send(self) -> None:
        if self.games:
            self.queue.put(("finished", self.games, self.failed, self.tokens, self.dollars))
            self.games = self.failed = self.tokens = 0
            self.dollars = 0.0
        self.sent_at = time.monotonic()


def _worker_process(config: TournamentConfig, out: Path, todo: list[GameSpec],
                    spec_by_id: dict[str, tuple[int, int]], factory: LLMFactory | None,
                    concurrency: int, durable: bool, retry_aborted: bool, planned: int,
                    queue: Any, count_calls_here: Callable[[], None], k: int = 0) -> None:
    """One forked worker: a fresh event loop over its share of the games.

    Signals: Ctrl-C and a closed terminal reach the whole process group, and only the
    parent decides what they mean (`_RunSignals`): a worker ignores them. It stops when
    the parent sends SIGTERM: its games are cancelled (their `.part` files closed as
    aborted), the finished ones committed, and it exits."""
    # The parent's event loop has the signals write to its wake-up pipe, and the fork
    # shares that pipe: a signal here would look like a second one there. They arrive
    # blocked (_run_processes) until this is undone.
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    _die_with_parent()
    count_calls_here()
    # Forked from inside the parent's running loop: this thread still looks like it is
    # running one, which asyncio.run refuses.
    asyncio.events._set_running_loop(None)

    report = _Finished(queue)

    async def main() -> RunStats:
        task = asyncio.current_task()
        if task is not None:
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        share = RunStats(planned=len(todo), skipped=0)
        token = FSYNC_RESULTS.set(False)
        index = GameIndex.open(out)
        try:
            await _play_share(config, out, index, todo, share, spec_by_id, factory,
                              concurrency=concurrency, durable=durable,
                              retry_aborted=retry_aborted, progress=False,
                              planned=planned, report=report)
        finally:
            report.send()
            FSYNC_RESULTS.reset(token)
            index.close()
            await close_idle()  # the providers the games gave back (providers/pool.py)
        return share

    try:
        queue.put(("done", asyncio.run(main()), k))
    except UsageError as exc:
        queue.put(("error", "usage", str(exc), k))
    except asyncio.CancelledError:  # stopped by the parent, which is not listening
        pass
    except BaseException as exc:  # reported to the parent, which raises it
        queue.put(("error", "other", f"{type(exc).__name__}: {exc}", k))


def validate(config: TournamentConfig, llm_factory: LLMFactory | None) -> None:
    """Prepare (not play) one game per distinct seat spec before anything is written, so
    an unknown bot or a bad option is one usage error, not N aborted games."""
    game = get_game(config.game)
    everyone = set(config.pool or ())
    seen: set[str] = set()
    for i, spec in enumerate(config.seated_plan()):
        seats = set(spec.players or ())
        if i > 0 and seats <= seen:
            if seen >= everyone:
                break  # every spec has been prepared once
            continue
        seen |= seats
        prepare(game, seed=spec.seed, rng=make_rng(spec.seed),
                players=list(spec.players) if spec.players else None,
                options=dict(config.options), roles=dict(config.roles),
                preset=config.preset, llm_factory=llm_factory)


@dataclass
class _Played:
    run: GameRun
    path: Path  # the complete transcript, still `.part`: placed by its group's commit


async def _play_one(config: TournamentConfig, out: Path, spec: GameSpec,
                    factory: LLMFactory | None) -> _Played:
    final = transcript_path(out, spec.id)
    part = final.with_name(final.name + ".part")
    run = await play_game(config.game, seed=spec.seed, out=part,
                          players=list(spec.players) if spec.players else None,
                          options=dict(config.options), roles=dict(config.roles),
                          preset=config.preset, llm_factory=factory)
    return _Played(run, part)


def _aborted_row(out: Path, spec: GameSpec, exc: BaseException, game: str) -> IndexRow:
    """Index a game that could not be played or written as aborted, with its reason, and
    leave a small transcript saying so (when the disk lets us) so the report counts it."""
    # An I/O failure (a full disk) is not the game's fault: its distinct reason makes a
    # resume replay it (results.verify_for_resume) without --retry-aborted.
    what = IO_FAILURE if isinstance(exc, OSError) else "the game failed"
    reason = clean_text(redact(f"{what}: {type(exc).__name__}: {exc}"))[:500]
    final = transcript_path(out, spec.id)
    part = final.with_name(final.name + ".part")
    try:
        with TranscriptWriter(part) as writer:
            writer.header(game=game, config={}, seed=spec.seed, seats={})
            writer.result(status="aborted", reason=reason)
        os.replace(part, final)
    except Exception:  # the row below still records the game
        part.unlink(missing_ok=True)
    return IndexRow(id=spec.id, idx=spec.index, seed=spec.seed, status="aborted",
                    reason=reason, transcript=f"{GAMES_DIR}/{final.name}",
                    players={str(i + 1): redact(p)
                             for i, p in enumerate(spec.players or ())},
                    placements={}, summary={})


def _index_row(out: Path, spec: GameSpec, run: GameRun) -> IndexRow:
    labels = {seat: str(info.get("player", "")) for seat, info in run.seats.items()}
    usage = {str(s): u for s, u in run.outcome.usage.items()}
    dollars = sum(recorded_cost_usd(labels.get(str(s), ""), r) for s, r in run.usage.items())
    return IndexRow(
        id=spec.id, idx=spec.index, seed=spec.seed, status=run.outcome.status,
        reason=run.outcome.reason,
        transcript=f"{GAMES_DIR}/{transcript_path(out, spec.id).name}",
        players=labels,
        placements={str(k): v for k, v in run.outcome.placements.items()},
        summary=run.outcome.summary.to_json(),
        input_tokens=sum(u.input_tokens for u in usage.values()),
        output_tokens=sum(u.output_tokens for u in usage.values()),
        dollars=dollars,
    )


__all__ = ["GameIndex", "RunInterrupted", "RunStats", "resume_command_for", "run_tournament"]
