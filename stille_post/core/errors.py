"""The typed error tree.

Two families, kept apart on purpose:
- `UsageError` and its children are the user's mistakes (CLI arguments, config files,
  rosters, scenarios). The CLI prints them as one line and exits 2.
- `ResponseError` and its children are a *player's* mistakes (bad model output). The engine
  never lets them escape: they become repair re-asks, refused calls or forfeits.
`ProviderError` is a provider that is still failing after its retries; it forfeits a turn.
"""

from __future__ import annotations


class StillePostError(Exception):
    """Base of every error this package raises on purpose."""


class UsageError(StillePostError):
    """Bad input from the command line or a file: print one line, exit 2."""


class ConfigError(UsageError):
    """A game or tournament configuration that cannot be played."""


class ScenarioError(UsageError):
    """A spec scenario or scripted-player file that is malformed."""


class UnknownPlayerError(UsageError):
    """A --players entry that names no bot and no provider spec."""


class ResponseError(StillePostError):
    """A player's output that the rules cannot accept."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ParseError(ResponseError):
    """Output that has the wrong shape: empty, malformed tool call, not one word, ..."""


class RuleViolationError(ResponseError):
    """Well-formed output that breaks a rule: a dead target, a second tool call, ..."""


class ProviderError(StillePostError):
    """A provider call that failed for good (after the provider layer's own retries).

    `status` is the HTTP status when there was one. The message never contains a key.
    """

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False):
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class MissingKeyError(UsageError):
    """An LLM seat whose API key is not in the environment."""


class GameAborted(StillePostError):
    """Raised inside the engine when a game cannot go on; the transcript says why."""
