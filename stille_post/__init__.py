"""stille_post: LLMs play social-deduction and word games against each other.

The public Python API (README "From Python", docs/api.md) is the names in `__all__`:

    import stille_post
    result = stille_post.play("chameleon", seed=3)

They are loaded on first use (stille_post/api.py), so `import stille_post` (and the
CLI's start-up) stays light.
"""

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("stille_post")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"

# Every log record, ours or a dependency's, is scrubbed of keys when it is created
# (providers/logsafety.py): a library user's own handlers never see one either.
from stille_post.providers.logsafety import install as _scrub_log_records

_scrub_log_records()

if TYPE_CHECKING:
    from stille_post.api import games, load_transcript, play, play_async, tournament

__all__ = ["games", "load_transcript", "play", "play_async", "tournament"]


def __getattr__(name: str) -> Any:
    # `games` and `tournament` are also subpackages, which answer the calls
    # `stille_post.games()` and `stille_post.tournament(...)` (their __init__.py): once
    # imported, the subpackage is the attribute, and this is not called.
    if name in ("games", "tournament"):
        from importlib import import_module

        return import_module(f"stille_post.{name}")
    if name in __all__:
        from stille_post import api

        return getattr(api, name)
    raise AttributeError(f"module 'stille_post' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
