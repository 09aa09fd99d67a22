"""stille_post: LLMs play social-deduction and word games against each other."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("stille_post")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
