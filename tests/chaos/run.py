"""Run the chaos and fuzz suite and print its figures.

    python -m tests.chaos                       # full size: 200 games at 20 % faults,
                                                # >= 10,000 fuzzed completions per adapter
    python -m tests.chaos --games 12 --fuzz 300 # a quick look

The games are all four (Stille Post, Chameleon, Connections, Elimination), their
OpenAI-compatible seats with a password and a query key in the URL; then the new surface
of issue 27 (tests/chaos/surface.py): damaged import logs, config files and scripts; then
the money (issue 36, tests/chaos/money.py): capped runs against a server that lies about
its usage (`--money N` runs); then signals (tests/chaos/signals.py): SIGHUP, SIGTERM and
SIGINT during `play` with a person seated and during tournaments, each run checked for
valid transcripts and lost games.

Exit code 0 only when every figure is as the issue demands: every game completed or
cleanly aborted, 0 crashes, 0 lost games, 0 leaked keys (log lines included), 0 hangs,
0 internal errors and 0 escaped exceptions in the fuzz; and for the money, 0 negative
ledgers, 0 unreadable folders, 0 overshoots past the bounds, 0 unwarned runs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from tests.chaos.fuzz import KINDS, FuzzFigures, fuzz_completions, fuzz_games
from tests.chaos.harness import GameFigures, play_chaos_games
from tests.chaos.money import report_money, run_money
from tests.chaos.signals import report_signals, run_signals
from tests.chaos.surface import report_surface, run_surface


def run_games(games: int, rate: float, seed: int, out: Path) -> GameFigures:
    return asyncio.run(play_chaos_games(games, rate=rate, seed=seed, out=out))


def run_fuzz(kind: str, completions: int, games: int, out: Path) -> FuzzFigures:
    """Fuzzed whole games first, then single completions until `completions` is reached."""
    figures = FuzzFigures()
    if games:
        fuzz_games(kind, games, figures, out)
    missing = completions - figures.completions
    if missing > 0:
        fuzz_completions(kind, missing, figures)
    return figures


def report_games(g: GameFigures, rate: float) -> list[str]:
    share = (g.completed + g.aborted_clean) / g.tried if g.tried else 0.0
    faults = ", ".join(f"{k} {v}" for k, v in sorted(g.faults.items()))
    return [
        f"chaos games: {g.tried} tried at a {rate:.0%} fault rate "
        f"({sum(g.faults.values())} faults injected in {g.requests} requests = "
        f"{g.fault_rate:.1%})",
        f"  completed {g.completed}, cleanly aborted {g.aborted_clean} "
        f"({share:.1%} completed or cleanly aborted)",
        f"  crashes {g.crashes}, lost {g.lost}, leaked keys {g.leaked}, "
        f"unsafe text {g.unsafe_text}, hangs {g.hangs}",
        "  games: " + ", ".join(f"{k} {v}" for k, v in sorted(g.by_game.items())),
        f"  faults: {faults}",
    ]


def report_fuzz(kind: str, f: FuzzFigures) -> str:
    # Actions, re-asks and forfeits are counted for the single completions, which run
    # only when the fuzzed games served fewer than --fuzz completions.
    singles = (f"{f.actions} actions, {f.reasks} re-asks, {f.forfeits} forfeits"
               if f.actions + f.reasks + f.forfeits
               else "no single completions (the games served --fuzz already)")
    return (f"fuzz {kind}: {f.completions} fuzzed completions ({f.games} games): "
            f"{singles}; "
            f"internal errors {f.internal}, escaped exceptions {f.escaped + f.game_crashes}, "
            f"leaked keys {f.leaked}, unsafe text {f.unsafe}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.chaos", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200, help="chaos games (default 200)")
    ap.add_argument("--rate", type=float, default=0.2, help="fault rate (default 0.2)")
    ap.add_argument("--fuzz", type=int, default=10_000,
                    help="fuzzed completions per adapter (default 10000)")
    ap.add_argument("--fuzz-games", type=int, default=100,
                    help="fuzzed whole games per adapter, part of --fuzz (default 100)")
    ap.add_argument("--imports", type=int, default=100,
                    help="damaged Elimination logs imported (default 100)")
    ap.add_argument("--configs", type=int, default=200,
                    help="damaged tournament.toml and models.toml pairs (default 200)")
    ap.add_argument("--scripts", type=int, default=200,
                    help="damaged script: files and YAML bombs (default 200)")
    ap.add_argument("--money", type=int, default=12,
                    help="capped runs against lying usage (issue 36; default 12)")
    ap.add_argument("--signals", type=int, default=1,
                    help="rounds of SIGHUP, SIGTERM and SIGINT against play (a person seated) "
                         "and against tournaments (default 1; 0: none)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="keep the transcripts here")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
        out = args.out or Path(tmp)
        games = run_games(args.games, args.rate, args.seed, out / "games")
        lines = report_games(games, args.rate)
        print("\n".join(lines), flush=True)
        ok = games.ok
        for kind in KINDS:
            f = run_fuzz(kind, args.fuzz, args.fuzz_games, out / "fuzz")
            print(report_fuzz(kind, f), flush=True)
            ok = ok and f.ok
            for example in f.examples[:5]:
                print(f"    {example}")
        for example in games.examples[:10]:
            print(f"    {example}")
        crashes, leaks = games.crashes, games.leaked
        lost, hangs = games.lost, games.hangs
        for name, s in run_surface(args.seed, imports=args.imports, configs=args.configs,
                                   scripts=args.scripts):
            print(report_surface(name, s), flush=True)
            for example in s.examples[:5]:
                print(f"    {example}")
            ok = ok and s.ok
            crashes, leaks, lost, hangs = (crashes + s.crashes, leaks + s.leaks,
                                           lost + s.lost, hangs + s.hangs)
    if args.money:
        money = run_money(args.seed, args.money)
        print(report_money(money), flush=True)
        for example in money.examples[:5]:
            print(f"    {example}")
        ok = ok and money.ok
        crashes += money.crashes
    if args.signals:
        sig = run_signals(args.signals, args.seed)
        print(report_signals(sig), flush=True)
        for example in sig.examples[:5]:
            print(f"    {example}")
        ok = ok and sig.ok
        lost, hangs = lost + sig.lost + sig.invalid, hangs + sig.hangs
        crashes += sig.tracebacks
    print(f"all: crashes {crashes}, leaks {leaks}, lost games {lost}, hangs {hangs}")
    print(f"{'PASS' if ok else 'FAIL'} in {time.monotonic() - t0:.0f} s "
          f"(seed {args.seed}; lost games {games.lost})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
