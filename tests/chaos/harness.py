"""Chaos games: whole games against hostile loopback emulators, counted honestly.

Each game seats LLM players of every kind (OpenAI, Anthropic, Gemini, OpenAI-compatible)
against the emulators of tests/emulators, each with a seeded `FaultPolicy`, through the
real SDKs, the real adapters, the real retry loop and the real engines. A game counts as:

- completed: `status == "completed"`;
- cleanly aborted: `status == "aborted"` for a reason the package chose (`GameAborted`);
- crash: an exception escaped `play_game`, or the engine aborted on an internal error
  (any other exception inside the engine);
- lost: no complete, readable transcript on disk afterwards;
- leaked: the caller's key appears in the transcript, the outcome, or any request body
  the emulators received (the key is sent only in headers);
- unsafe text: a string in the transcript with a lone surrogate or a control character.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stille_post.core.text import is_clean
from stille_post.core.transcript import Transcript
from stille_post.players.base import Player, PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.providers import create_provider
from stille_post.providers.retry import RetryPolicy, no_sleep
from stille_post.session import play_game
from tests.emulators.faults import FaultPolicy
from tests.emulators.server import Emulator

# Not key-shaped on purpose: only the literal redaction of configured keys can catch it.
CHAOS_KEY = "chaos-gw-7Hq2Lx9Vt4Rb8Kp3"
# A password inside a seat URL (issue 27, M2), masked by its place in the URL, not by a
# registered value.
URL_PASSWORD = "chaos-pw-Rk5Tn1Wb7Yc3"
SECRETS = (CHAOS_KEY, URL_PASSWORD)
GAME_BOUND_S = 120.0  # a game past this is a hang

SEATS = {
    "openai": "openai:gpt-5-mini",
    "anthropic": "anthropic:claude-haiku-4-5-20251001",
    "google": "google:gemini-2.5-flash",
    "openai-compatible": "openai-compatible:chaos-small@{openai}",
}


def _with_credentials(base_url: str) -> str:
    """A password in the URL's user information. (A `?api_key=` would end the seat: the
    SDK appends its path after the query, and every call is a 404; the query key is
    covered by tests/security/test_url_credentials.py and the bad-input table.)"""
    scheme, _, rest = base_url.partition("://")
    return f"{scheme}://chaos:{URL_PASSWORD}@{rest}"


@dataclass
class GameFigures:
    tried: int = 0
    completed: int = 0
    aborted_clean: int = 0
    crashes: int = 0
    lost: int = 0
    leaked: int = 0
    unsafe_text: int = 0
    hangs: int = 0
    requests: int = 0
    by_game: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)  # what went wrong, for the report

    @property
    def fault_rate(self) -> float:
        return sum(self.faults.values()) / self.requests if self.requests else 0.0

    @property
    def ok(self) -> bool:
        return (self.completed + self.aborted_clean == self.tried and self.crashes == 0
                and self.lost == 0 and self.leaked == 0 and self.unsafe_text == 0
                and self.hangs == 0)


@contextmanager
def hostile_emulators(rate: float, seed: int, *, hang_s: float = 1.0
                      ) -> Iterator[dict[str, Emulator]]:
    with ExitStack() as stack:
        emus: dict[str, Emulator] = {}
        for i, api in enumerate(("openai", "anthropic", "google")):
            emu = Emulator(api, faults=FaultPolicy(rate, seed * 10 + i, hang_s=hang_s)).start()
            stack.callback(emu.stop)
            emus[api] = emu
        yield emus


class ChaosFactory:
    """The LLM factory of a chaos game: every kind points at its hostile emulator, with a
    short per-attempt deadline so hangs and trickled bodies cost well under a second."""

    def __init__(self, emus: dict[str, Emulator], *, attempt_timeout_s: float = 0.5,
                 api_key: str = CHAOS_KEY) -> None:
        self.emus = emus
        self.api_key = api_key
        self.attempt_timeout_s = attempt_timeout_s
        self.providers: list[Any] = []

    def __call__(self, spec_text: str, prompts: PromptBook) -> Player:
        kind, _, model = spec_text.partition(":")
        base_url = None
        if kind == "openai-compatible":
            model, _, base_url = model.partition("@")
        else:
            base_url = self.emus[kind].base_url
        policy = RetryPolicy(max_retries=2, sleep=no_sleep, jitter=lambda: 0.0,
                             attempt_timeout_s=self.attempt_timeout_s)
        provider = create_provider(kind, model, api_key=self.api_key, base_url=base_url,
                                   retry_policy=policy, timeout=self.attempt_timeout_s)
        self.providers.append(provider)
        return LLMPlayer(provider, prompts, name=spec_text)

    async def aclose(self) -> None:
        for p in self.providers:
            close = getattr(p, "aclose", None)
            if close is not None:
                with contextlib.suppress(Exception):  # a connection the chaos broke
                    await close()


def game_plan(i: int, seed: int, emus: dict[str, Emulator]) -> tuple[str, list[str],
                                                                      dict[str, Any]]:
    """Game `i`: the four games in turn (Stille Post twice as often), seats drawn from
    every kind; the OpenAI-compatible seat's URL carries a password."""
    rng = random.Random(f"{seed}:{i}")
    seats = {k: v.format(openai=_with_credentials(emus["openai"].base_url))
             for k, v in SEATS.items()}
    kinds = list(seats)
    rng.shuffle(kinds)
    game = ("stille-post", "chameleon", "stille-post", "connections", "elimination")[i % 5]
    if game == "chameleon":
        # Chameleon seats are the same model kinds; the emulator's answers are often not
        # one word, which exercises the re-asks and the Fail outcome too.
        players = [seats[k] for k in kinds[:3]] + ["bot"]
        options: dict[str, Any] = {}
    elif game == "connections":  # the setter and two guessers, a few attempts
        players = [seats[k] for k in kinds[:2]] + ["bot"]
        options = {"max_attempts": 3}
    elif game == "elimination":  # four seats: two LLMs, two bots
        players = [seats[k] for k in kinds[:2]] + ["bot", "bot"]
        options = {"num_players": 4}
    else:
        players = [seats[k] for k in kinds[:3]] + ["detective"]
        options = {"max_rounds": 1}
    rng.shuffle(players)
    return game, players, options


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def check_transcript(path: Path, figures: GameFigures, label: str) -> None:
    if not path.is_file():
        figures.lost += 1
        figures.examples.append(f"{label}: no transcript")
        return
    raw = path.read_bytes()
    try:
        t = Transcript.load(path)
    except Exception as exc:  # counted: an unreadable record is a lost game
        figures.lost += 1
        figures.examples.append(f"{label}: unreadable transcript ({exc})")
        return
    if not t.complete:
        figures.lost += 1
        figures.examples.append(f"{label}: incomplete transcript")
    if any(secret.encode() in raw for secret in SECRETS):
        figures.leaked += 1
        figures.examples.append(f"{label}: a key or URL password is in the transcript")
    for line in raw.decode("utf-8").splitlines():
        if not all(is_clean(s) for s in _strings(json.loads(line))):
            figures.unsafe_text += 1
            figures.examples.append(f"{label}: unsafe text in {line[:80]!r}")
            break


async def play_chaos_games(games: int, *, rate: float, seed: int, out: Path,
                           concurrency: int = 8, hang_s: float = 1.0) -> GameFigures:
    figures = GameFigures()
    out.mkdir(parents=True, exist_ok=True)
    with hostile_emulators(rate, seed, hang_s=hang_s) as emus, _logged() as logged:
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            game, players, options = game_plan(i, seed, emus)
            label = f"game {i} ({game}, seed {seed + i})"
            path = out / f"chaos-{i:05d}.jsonl"
            factory = ChaosFactory(emus)
            async with gate:
                figures.tried += 1
                figures.by_game[game] += 1
                try:
                    run = await asyncio.wait_for(
                        play_game(game, seed=seed + i, out=path, players=players,
                                  options=options, llm_factory=factory), GAME_BOUND_S)
                except TimeoutError:
                    figures.hangs += 1
                    figures.examples.append(f"{label}: ran past {GAME_BOUND_S:.0f} s")
                    return
                except Exception as exc:  # this is what we count
                    figures.crashes += 1
                    figures.examples.append(f"{label}: escaped {type(exc).__name__}: {exc}")
                    check_transcript(path, figures, label)
                    return
                finally:
                    await factory.aclose()
            reason = run.outcome.reason or ""
            if run.outcome.status == "completed":
                figures.completed += 1
            elif "internal error" in reason and "GameAborted" not in reason:
                figures.crashes += 1
                figures.examples.append(f"{label}: {reason[:200]}")
            else:
                figures.aborted_clean += 1
            summary = json.dumps(run.summary(), ensure_ascii=False)
            if any(secret in summary for secret in SECRETS):
                figures.leaked += 1
                figures.examples.append(f"{label}: a key or URL password is in the summary")
            check_transcript(path, figures, label)

        await asyncio.gather(*(one(i) for i in range(games)))
        for emu in emus.values():
            policy = emu.state.faults_policy
            assert policy is not None
            figures.requests += policy.requests
            figures.faults.update(policy.counts)
            if any(secret.encode() in body for body in emu.state.raw_bodies
                   for secret in SECRETS):
                figures.leaked += 1
                figures.examples.append(f"{emu.state.api}: the key is in a request body")
    leaked_lines = [line for line in logged if any(secret in line for secret in SECRETS)]
    if leaked_lines:  # issue 27, H1: what httpx and the SDKs log at INFO
        figures.leaked += len(leaked_lines)
        figures.examples.append(f"a log line holds a secret: {leaked_lines[0][:160]!r}")
    return figures


@contextmanager
def _logged() -> Iterator[list[str]]:
    """Every log record at INFO and above, as a dependency that calls basicConfig(INFO)
    would print it (with its traceback), collected instead of printed."""
    import logging

    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(logging.Formatter().format(record))

    root = logging.getLogger()
    handler, level = Collect(logging.INFO), root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
