"""The cyclic collector tuned for a long run of games played or re-played in one process
(a tournament's worker, a data export).

With CPython's default thresholds the collector took a sizeable share of a CPU-bound
run's CPU, traversing the long-lived heap (modules, the config) and every live game's
state, and a full pass stopped the event loop for longer than a fast model's reply (the
figures: docs/performance.md). Games are freed by reference counting, so the heap as it
is when the run starts is frozen (never traversed again, and forked workers do not copy
its pages for the collector's sake), and the young generation is collected every
50,000 allocations instead of 700. Cycles a user's code creates are still collected. A
process that froze objects itself keeps managing that: then only the threshold changes.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Young objects a run allocates before the cyclic collector looks at them (CPython's
# default is 700).
GC_YOUNG_THRESHOLD = 50_000


@contextmanager
def quiet_gc() -> Iterator[None]:
    """The collector tuned for the block (see the module's docstring), as it was after."""
    thresholds = gc.get_threshold()
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    gc.set_threshold(max(thresholds[0], GC_YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if freeze:
            gc.unfreeze()


__all__ = ["GC_YOUNG_THRESHOLD", "quiet_gc"]
