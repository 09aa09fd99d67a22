"""stille_post: LLMs play social-deduction and word games against each other."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("stille_post")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"

# Every log record, ours or a dependency's, is scrubbed of keys when it is created
# (providers/logsafety.py): a library user's own handlers never see one either.
from stille_post.providers.logsafety import install as _scrub_log_records

_scrub_log_records()

__all__ = ["__version__"]
