"""A dead server is found before the run, not after a game of forfeits.

Before live play, the CLI probes each distinct endpoint its LLM seats will call, once and
all at the same time: one cheap request, the API's models list (`GET .../models`). The
question is only whether something answers there, so any HTTP answer counts as alive, a
401 or a 404 included (a server without a models list answers 404; a key problem is one
line at the first real call). No key is sent, so none can leak. What fails a probe is the
connection itself: refused, no such host, no TCP or TLS handshake within the timeout.

A seat whose every replica (providers/replicas.py) fails stops the run: one line naming
the first URL, exit 2 (`UsageError`). A replica that fails while another answers is one
warning line, and the run starts with that replica taken out (probed again later).

URLs are shown without user info and query (`display_url`): a base URL may hold a
password or a key.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

PROBE_TIMEOUT_S = 1.5

# Where each API lists its models, below the base URL an adapter is given.
_MODELS_PATH = {"openai": "/models", "openai-compatible": "/models",
                "anthropic": "/v1/models", "google": "/v1beta/models"}


def display_url(url: str) -> str:
    """`url` without user info, query or fragment: safe to print."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an unreadable URL)"
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))


@dataclass(frozen=True)
class Probe:
    url: str  # the base URL probed
    problem: str | None = None  # None: something answered; else why not
    server: str | None = None  # what the server says it is (its Server header), if it answered

    @property
    def alive(self) -> bool:
        return self.problem is None


def _why(exc: BaseException) -> str:
    """The connection failure in a few words (never the URL: the caller names it)."""
    name = type(exc).__name__
    text = str(exc).lower()
    if "Timeout" in name:
        return "no answer in time"
    if "refused" in text:
        return "connection refused"
    if "name or service not known" in text or "nodename nor servname" in text \
            or "temporary failure in name resolution" in text or "getaddrinfo" in text:
        return "no such host"
    if "ssl" in text or "certificate" in text:
        return "the TLS handshake failed"
    return f"cannot connect ({name})"


def probe(kind: str, base_url: str, timeout_s: float = PROBE_TIMEOUT_S) -> Probe:
    """One GET of the models list at `base_url`; `Probe.problem` says why nothing
    answered. Any HTTP status is an answer."""
    import httpx2

    from stille_post.providers._common import ACCEPT_ENCODING, tls_context

    url = base_url.rstrip("/") + _MODELS_PATH.get(kind, "/models")
    try:
        # A plain-http URL (a local server) never opens TLS, and the probe follows no
        # redirect: it needs no CA store, whose loading was most of a dead local server's
        # 3 s budget (0.6 s of the probe's 0.8 s on the shared cores).
        verify = tls_context() if url.lower().startswith("https:") else False
        with httpx2.Client(transport=httpx2.HTTPTransport(verify=verify),
                           timeout=timeout_s, headers=ACCEPT_ENCODING) as client:
            answer = client.get(url)
    except httpx2.ReadTimeout:
        # Connected, and the server is busy (a local model mid-answer): it is there.
        return Probe(base_url)
    except Exception as exc:  # every other failure is the connection's
        return Probe(base_url, _why(exc))
    return Probe(base_url, None, answer.headers.get("server"))


def probe_all(targets: Iterable[tuple[str, str]], timeout_s: float = PROBE_TIMEOUT_S
              ) -> dict[tuple[str, str], Probe]:
    """Every distinct (kind, base URL) probed at the same time: the whole check takes
    about one timeout, however many endpoints there are."""
    distinct = list(dict.fromkeys(targets))
    if not distinct:
        return {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(16, len(distinct))) as pool:
        found = pool.map(lambda t: probe(t[0], t[1], timeout_s), distinct)
        return dict(zip(distinct, found, strict=True))


@dataclass(frozen=True)
class SeatEndpoints:
    """The URLs one seat may call (its replicas), for the messages."""

    seat: str  # the seat spec, as the user wrote it
    kind: str
    urls: Sequence[str]


def check(seats: Iterable[SeatEndpoints], timeout_s: float = PROBE_TIMEOUT_S
          ) -> tuple[str | None, list[str], Mapping[tuple[str, str], Probe]]:
    """(the one line that stops the run, or None; warning lines for dead replicas of
    seats that still have a live one; every probe)."""
    seats = list(seats)
    probes = probe_all(((s.kind, u) for s in seats for u in s.urls), timeout_s)
    warned: set[str] = set()
    warnings: list[str] = []
    for s in seats:
        found = [probes[(s.kind, u)] for u in s.urls]
        dead = [p for p in found if not p.alive]
        if dead and len(dead) == len(found):
            first = dead[0]
            n = len(dead) - 1
            also = f" (and {n} other replica{'s' if n > 1 else ''})" if n else ""
            return (f"nothing answers at {display_url(first.url)}{also} for "
                    f"{s.seat}: {first.problem}; start the server or fix the URL "
                    "(--no-preflight skips this check)"), warnings, probes
        for p in dead:
            if p.url not in warned:
                warned.add(p.url)
                warnings.append(f"replica {display_url(p.url)} of {s.seat} does not "
                                f"answer ({p.problem}); its calls go to the others")
    return None, warnings, probes


__all__ = ["PROBE_TIMEOUT_S", "Probe", "SeatEndpoints", "check", "display_url", "probe",
           "probe_all"]
