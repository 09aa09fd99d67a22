"""The injected randomness.

Every chance event of a game goes through one `random.Random`-compatible object handed
to the engine. Bots get their own generators, derived from the game seed and their seat,
so that swapping one bot for another never shifts the game's own draws.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Rng(Protocol):
    """The part of `random.Random` the engines use."""

    def random(self) -> float: ...
    def choice(self, seq: Sequence[T]) -> T: ...
    def sample(self, population: Sequence[T], k: int) -> list[T]: ...
    def shuffle(self, x: list[Any]) -> None: ...
    def randrange(self, start: int, stop: int | None = None) -> int: ...


def make_rng(seed: int | str) -> random.Random:
    return random.Random(seed)


def derive_rng(seed: int | str, *labels: object) -> random.Random:
    """A generator independent of the game's, stable across runs and Python versions.

    String seeds are hashed with SHA-512 by `random.Random`, so no PYTHONHASHSEED leaks in.
    """
    return random.Random(":".join(str(x) for x in (seed, *labels)))


class ForcedRng(random.Random):
    """A seeded generator whose next draws can be forced, for spec scenarios.

    `forced_random` values are returned by `random()` first; `forced_choices` are values
    that `choice()` must return (each must be a member of the sequence it is asked to pick
    from, or the scenario is wrong). When the queues run dry it behaves as `Random(seed)`.
    """

    def __init__(
        self,
        seed: int | str = 0,
        forced_random: Sequence[float] = (),
        forced_choices: Sequence[Any] = (),
    ) -> None:
        super().__init__(seed)
        self._forced_random = list(forced_random)
        self._forced_choices = list(forced_choices)

    def random(self) -> float:
        if self._forced_random:
            return self._forced_random.pop(0)
        return super().random()

    def choice(self, seq: Sequence[T]) -> T:  # type: ignore[override]
        if self._forced_choices:
            want = self._forced_choices.pop(0)
            if want not in seq:
                raise ValueError(f"forced choice {want!r} is not among {list(seq)!r}")
            return want
        return super().choice(seq)

    @property
    def unused(self) -> dict[str, list[Any]]:
        return {"random": list(self._forced_random), "choice": list(self._forced_choices)}
