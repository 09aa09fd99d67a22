"""Benchmarks: `python -m benchmarks [NAME ...]` (or `nox -s bench`) runs every
`benchmarks/bench_*.py` module's `main()`. They print figures and ratios; nothing is
asserted on time."""
