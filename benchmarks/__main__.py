"""`python -m benchmarks [NAME ...]` runs benchmarks by name (all of them without a name);
`python -m benchmarks NAME --json ...` runs one and passes it the options: with `--json`
its JSON is all that goes to stdout."""

from __future__ import annotations

import importlib
import inspect
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    names = sorted(p.stem for p in here.glob("bench_*.py"))
    options = [a for a in argv if a.startswith("-")]
    # `chameleon-theory` names bench_chameleon_theory.py (a module name has no hyphen).
    wanted = [(n if n.startswith("bench_") else f"bench_{n}").replace("-", "_")
              for n in argv if not n.startswith("-")] or names
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        print(f"unknown benchmarks: {', '.join(unknown)}; have: {', '.join(names)}",
              file=sys.stderr)
        return 2
    if options and len(wanted) != 1:
        print("options (such as --json) go with exactly one benchmark name", file=sys.stderr)
        return 2
    quiet = "--json" in options
    status = 0
    for name in wanted:
        if not quiet:
            print(f"== {name}")
        t0 = time.perf_counter()
        bench_main = importlib.import_module(f"benchmarks.{name}").main
        takes_args = bool(inspect.signature(bench_main).parameters)
        code = bench_main(options) if takes_args else bench_main()
        status = status or (code if isinstance(code, int) else 0)
        if not quiet:
            print(f"   ({time.perf_counter() - t0:.1f} s)\n")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
