"""The README's oracle sweep: measured connection rate per attempt against the paper's
closed form (1-p)(1-(1-p)^(n-1)), for n = 2..5, and where the measured maximum falls.

    python -m tests.connections.oracle_sweep [--games 100] [--step 0.025]

Oracle seats are a simulation device (bots.py): every agent decodes a clue with
probability p. Games: 30 attempts each on a synthetic branching dictionary
(harness.branching_dictionary), seeds 0..games-1, the same seeds for every p.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from tests.connections.harness import (
    branching_dictionary,
    closed_form,
    oracle_rate,
    p_star,
    wilson,
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--step", type=float, default=0.025)
    ap.add_argument("--span", type=float, default=0.175)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "words.txt"
        secret = branching_dictionary(path)
        print("| n | p | attempts | measured | 95% interval | closed form |")
        print("| --- | --- | --- | --- | --- | --- |")
        peaks = []
        for n in (2, 3, 4, 5):
            grid = np.round(p_star(n) + np.arange(-args.span, args.span + 1e-9, args.step), 3)
            rates = []
            for p in grid:
                conn, att = oracle_rate(float(p), n, args.games, max_attempts=30,
                                        word=secret, dictionary=path)
                lo, hi = wilson(conn, att, 1.96)
                rates.append(conn / att)
                print(f"| {n} | {p:.3f} | {att} | {conn / att:.4f} | {lo:.4f}-{hi:.4f} | "
                      f"{closed_form(float(p), n):.4f} |")
            r = np.array(rates)
            coef = np.polyfit(grid, r, 3)
            xs = np.linspace(grid.min(), grid.max(), 4001)
            peaks.append((n, p_star(n), float(grid[int(np.argmax(r))]),
                          float(xs[int(np.argmax(np.polyval(coef, xs)))])))
        print()
        print("| n | p* | raw argmax | cubic-fit maximum |")
        print("| --- | --- | --- | --- |")
        for n, ps, raw, fit in peaks:
            print(f"| {n} | {ps:.3f} | {raw:.3f} | {fit:.3f} |")


if __name__ == "__main__":
    main()
