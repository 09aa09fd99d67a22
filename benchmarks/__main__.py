from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    names = sorted(p.stem for p in here.glob("bench_*.py"))
    wanted = [n if n.startswith("bench_") else f"bench_{n}" for n in argv] or names
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        print(f"unknown benchmarks: {', '.join(unknown)}; have: {', '.join(names)}")
        return 2
    for name in wanted:
        print(f"== {name}")
        t0 = time.perf_counter()
        importlib.import_module(f"benchmarks.{name}").main()
        print(f"   ({time.perf_counter() - t0:.1f} s)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
