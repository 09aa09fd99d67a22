"""Calls in flight (issue 28): a 200-game, 64-wide Stille Post tournament through the
openai-compatible adapter to a loopback server answering at 100 ms, with the default
settings (no cap) and with the cap of 8 calls per endpoint that was hidden before.

    python -m benchmarks inflight [--json]

Sizes: BENCH_INFLIGHT_GAMES (200), BENCH_INFLIGHT_CONCURRENCY (64),
BENCH_INFLIGHT_LATENCY_MS (100), BENCH_INFLIGHT_KIND (openai-compatible);
BENCH_INFLIGHT_TLS=1 serves HTTPS. Target: efficiency (wall / ideal) <= 1.2 with the
defaults.
"""

from __future__ import annotations

import json
import os
import sys

from benchmarks.realpath import real_tournament


def measure() -> dict[str, object]:
    games = int(os.environ.get("BENCH_INFLIGHT_GAMES", 200))
    conc = int(os.environ.get("BENCH_INFLIGHT_CONCURRENCY", 64))
    latency = int(os.environ.get("BENCH_INFLIGHT_LATENCY_MS", 100)) / 1000
    kind = os.environ.get("BENCH_INFLIGHT_KIND", "openai-compatible")
    load0 = os.getloadavg()[0]
    tls = os.environ.get("BENCH_INFLIGHT_TLS", "") not in ("", "0")
    default = real_tournament(kind, games, conc, latency, tls=tls)
    capped = real_tournament(kind, games, conc, latency, max_in_flight={kind: 8}, tls=tls)
    return {"default": default, "cap_8": capped, "load_before": load0,
            "load_after": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    r = measure()
    if "--json" in (argv or []):
        print(json.dumps(r))
        return 0
    for name in ("default", "cap_8"):
        row = r[name]
        assert isinstance(row, dict)
        print(f"   {name:8s} {row['kind']} {row['games']} games x {row['concurrency']} wide at "
              f"{row['latency_ms']} ms: wall {row['wall_s']:.2f} s, ideal {row['ideal_s']:.2f} s "
              f"-> {row['efficiency']:.2f}x; CPU {row['cpu_s']:.1f} s "
              f"({row['cpu_ms_per_step']:.2f} ms per step); peak in flight "
              f"{row['peak_in_flight']}")
    print(f"   (load average {r['load_before']:.1f} -> {r['load_after']:.1f}; transcripts on "
          "the real disk, fsync on)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
