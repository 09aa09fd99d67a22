"""`python -m benchmarks [NAME ...]` runs benchmarks by name (all of them without a name);
`python -m benchmarks NAME --json ...` runs one and passes it everything from the first
option on (`--games 50` included): with `--json` its JSON is all that goes to stdout.
`python -m benchmarks NAME --help` prints that benchmark's options and runs nothing."""

from __future__ import annotations

import importlib
import inspect
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    names = sorted(p.stem for p in here.glob("bench_*.py"))
    # Names come first; from the first option on, everything (values included, as in
    # `--games 50`) is the benchmark's own arguments.
    first = next((i for i, a in enumerate(argv) if a.startswith("-")), len(argv))
    options = argv[first:]
    # `chameleon-theory` names bench_chameleon_theory.py (a module name has no hyphen).
    wanted = [(n if n.startswith("bench_") else f"bench_{n}").replace("-", "_")
              for n in argv[:first]] or names
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        print(f"unknown benchmarks: {', '.join(unknown)}; have: {', '.join(names)}",
              file=sys.stderr)
        return 2
    if options and len(wanted) != 1:
        print("options (such as --json) go with exactly one benchmark name", file=sys.stderr)
        return 2
    if "-h" in options or "--help" in options:
        # A benchmark's options are in its docstring; `--help` must never start a run
        # that may take an hour.
        for name in wanted:
            print(inspect.getdoc(importlib.import_module(f"benchmarks.{name}")) or name)
        return 0
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
