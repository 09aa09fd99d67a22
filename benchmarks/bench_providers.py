"""Provider layer: overhead per call under replay, and tokens per game with and without a
stable prompt prefix.

1. Overhead: each kind's `text_turn` cassette is replayed N times through the real SDK and
   vcrpy (no network). The figure is the whole client-side cost of one call: our request
   conversion and normalisation, the SDK, and vcrpy's matching. Our own conversion is also
   timed alone.
2. Making an LLM seat's provider (one per seat per game): CPU and resident memory per
   provider kept, against the SDK's own default client (which loads the CA store into a
   TLS context of its own) made in the same run.
3. CPU per call against the history's length (a local HTTP stand-in answers at once):
   each adapter at 10, 100 and 400 messages, and OpenAI's `chat.completions.create`
   beside ours (we post the same body without its per-message transform).
4. Tokens per game: the standard configuration (4 seats, N=3, 4 rounds) with four LLM
   seats answered in-process by the emulators' deterministic policy. Every request is
   serialised in the order the APIs cache it (tools, system, messages) and counted at ~4
   characters per token. A request's "stable prefix" is what it shares with the same
   seat's previous request: what OpenAI's/Gemini's implicit caching and Anthropic's
   breakpoints can serve from cache. "Without a stable prefix" is the common harness
   design that puts the volatile state (round, turn, active seats) at the top of the
   system prompt.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.prefix import common_prefix, serialise_request, tokens

ROOT = Path(__file__).resolve().parents[1]
N_CALLS = 30
SEATS = ["openai:gpt-5", "anthropic:claude-opus-4-6", "google:gemini-2.5-flash",
         "openai:gpt-4.1-mini"]


# --- 1. overhead per call ---------------------------------------------------------------

def overhead() -> None:
    import vcr

    from stille_post.providers import create_provider
    from stille_post.providers.recording import json_body, vcr_config
    from stille_post.providers.retry import RetryPolicy
    from tests.emulators import scenarios as S

    print(f"provider-layer overhead per call under replay ({N_CALLS} calls each):")
    for kind in S.KINDS:
        path = S.cassette_path(kind, "text_turn")
        if not path.exists():
            print(f"  {kind:18s} (no cassette)")
            continue
        options: dict[str, Any] = {"api_key": "bench", "retry_policy": RetryPolicy(max_retries=0)}
        if kind == "openai-compatible":
            options["base_url"] = S.LOCAL_URL
        from stille_post.cli.llm_seats import DEFAULT_MAX_OUTPUT_TOKENS

        request = S.text_request(max_output_tokens=DEFAULT_MAX_OUTPUT_TOKENS.get(kind))
        provider = create_provider(kind, S.TURN_MODEL[kind], **options)
        recorder = vcr.VCR(record_mode="none", **vcr_config())
        recorder.register_matcher("body", json_body)

        async def calls(n: int, provider: Any = provider, request: Any = request
                        ) -> list[float]:
            out = []
            for _ in range(n):
                t0 = time.perf_counter()
                await provider.complete(request)
                out.append(time.perf_counter() - t0)
            return out

        with recorder.use_cassette(str(path), allow_playback_repeats=True):
            asyncio.run(calls(3))  # warm-up: imports, pydantic model building
            provider = create_provider(kind, S.TURN_MODEL[kind], **options)
            times = asyncio.run(calls(N_CALLS, provider))
        convert = _time_conversion(provider, request)
        print(f"  {kind:18s} {statistics.median(times) * 1e6:9.0f} µs/call (median; SDK + "
              f"vcrpy + ours), of which request conversion {convert:6.0f} µs")


# Run in a fresh interpreter per figure: freed memory of an earlier figure would be
# reused by a later one, and resident memory only shows growth.
_SEAT_CHILD = """
import gc, json, os, sys, time, warnings
warnings.simplefilter("ignore")
kind, which, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
if which == "ours":
    from stille_post.providers import create_provider
    model = {"openai": "gpt-5-mini", "anthropic": "claude-haiku-4-5",
             "google": "gemini-2.5-flash"}[kind]
    make = lambda: create_provider(kind, model, api_key="bench")
elif kind == "openai":
    from openai import AsyncOpenAI
    make = lambda: AsyncOpenAI(api_key="bench", max_retries=0)
elif kind == "anthropic":
    from anthropic import AsyncAnthropic
    make = lambda: AsyncAnthropic(api_key="bench", max_retries=0)
else:
    from google import genai
    make = lambda: genai.Client(api_key="bench")
make()
gc.collect()
rss, t0 = resident(), time.process_time()
kept = [make() for _ in range(n)]
cpu = (time.process_time() - t0) / n * 1e6
print(json.dumps({"cpu_us": cpu, "kib": (resident() - rss) / n / 1024}))
"""


def seat_construction(n: int = 40) -> None:
    """Each figure in a fresh process (Linux: resident memory from /proc)."""
    import subprocess
    import sys

    if not Path("/proc/self/statm").exists():
        print("making an LLM seat's provider: needs /proc (Linux); skipped")
        return
    print(f"making an LLM seat's provider ({n} kept alive; ours vs the SDK's default "
          "client, each in a fresh process):")
    for kind in ("openai", "anthropic", "google"):
        figures = {}
        for which in ("ours", "sdk"):
            done = subprocess.run([sys.executable, "-c", _SEAT_CHILD, kind, which, str(n)],
                                  capture_output=True, text=True, cwd=ROOT, check=True)
            figures[which] = json.loads(done.stdout)
        ours, sdk = figures["ours"], figures["sdk"]
        print(f"  {kind:10s} ours {ours['cpu_us']:7.0f} µs, {ours['kib']:6.0f} KiB; SDK "
              f"default {sdk['cpu_us']:7.0f} µs, {sdk['kib']:6.0f} KiB; CPU ratio "
              f"{ours['cpu_us'] / sdk['cpu_us']:.3f}")


_OPENAI_REPLY = {"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": "ok"}}],
                 "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}
_ANTHROPIC_REPLY = {"id": "x", "type": "message", "role": "assistant", "model": "m",
                    "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                    "usage": {"input_tokens": 10, "output_tokens": 1}}
_GOOGLE_REPLY = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]},
                                 "finishReason": "STOP"}],
                 "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1,
                                   "totalTokenCount": 11}}


def cpu_per_call(lengths: tuple[int, ...] = (10, 100, 400), calls: int = 20) -> None:
    import httpx2

    from stille_post.providers import create_provider
    from stille_post.providers.base import ChatRequest, Message

    def answering(reply: dict[str, Any]) -> Any:
        return httpx2.MockTransport(lambda request: httpx2.Response(200, json=reply))

    def request(n: int) -> ChatRequest:
        return ChatRequest("rules " * 200, [
            Message("user" if i % 2 == 0 else "assistant", f"message {i} " * 20)
            for i in range(n)])

    providers: dict[str, Any] = {}
    for kind, reply in (("openai", _OPENAI_REPLY), ("anthropic", _ANTHROPIC_REPLY),
                        ("google", _GOOGLE_REPLY)):
        provider: Any = create_provider(kind, "m", api_key="bench")
        http = provider._http if kind == "google" else provider.client._client
        http._transport = answering(reply)
        providers[kind] = provider

    async def cpu(call: Any) -> float:
        await call()  # warm-up
        t0 = time.process_time()
        for _ in range(calls):
            await call()
        return (time.process_time() - t0) / calls * 1e3

    async def run() -> None:
        print("CPU per call by history length (ms; an in-process stand-in answers at once):")
        openai = providers["openai"]
        for n in lengths:
            req = request(n)
            row = {kind: await cpu(lambda p=p, r=req: p.complete(r))
                   for kind, p in providers.items()}
            body = openai.body(req)
            sdk = await cpu(lambda b=body: openai.client.chat.completions.create(**b))
            print(f"  {n:4d} messages: openai {row['openai']:6.2f} (SDK create() {sdk:6.2f}, "
                  f"ratio {row['openai'] / sdk:.3f}), anthropic {row['anthropic']:6.2f}, "
                  f"google {row['google']:6.2f}")

    asyncio.run(run())


def _time_conversion(provider: Any, request: Any) -> float:
    build = getattr(provider, "_params", None)
    if build is None:  # google: contents + config
        from stille_post.providers.google_api import to_google_contents

        def build(r: Any) -> Any:
            return (to_google_contents(r), provider._config(r))
    t0 = time.perf_counter()
    for _ in range(200):
        build(request)
    return (time.perf_counter() - t0) / 200 * 1e6


# --- 2. tokens per game -------------------------------------------------------------------

class PolicyProvider:
    """Answers with the emulators' policy and keeps every request it was sent."""

    def __init__(self, model: str, log: list[Any]) -> None:
        self.model = model
        self.log = log

    async def complete(self, request: Any) -> Any:
        from stille_post.providers import Completion, ToolCall, Usage
        from tests.emulators.policy import decide

        self.log.append(request)
        last_user = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        reply = decide(self.model, request.system, last_user, request.tool_choice or "auto",
                       [t.name for t in request.tools])
        calls = [ToolCall(n, a, f"call_{len(self.log)}_{i}")
                 for i, (n, a) in enumerate(reply.tool_calls)]
        out = tokens(reply.text) + sum(tokens(json.dumps(a)) for _, a in reply.tool_calls)
        return Completion(reply.text, calls, Usage(0, out, 0), self.model,
                          "tool_calls" if calls else "stop")


def _volatile(request: Any, seat: int, index: int) -> Any:
    # The counterfactual: per-call state first in the system prompt.
    return replace(request, system=f"[state] call {index} of seat {seat}; round and turn "
                                   f"as of now.\n{request.system}")


LINEUPS = [
    SEATS,
    ["anthropic:claude-sonnet-4-5-20250929", "openai:gpt-5-mini", "google:gemini-3-pro-preview",
     "openai:gpt-4.1"],
    ["google:gemini-3-flash-preview", "openai:gpt-5-nano", "anthropic:claude-haiku-4-5-20241022",
     "openai:gpt-4.1-nano"],
]


def play_logged(seats: list[str], seed: int) -> tuple[dict[int, list[Any]], int, str]:
    from stille_post.players.llm import LLMPlayer
    from stille_post.session import play_game

    logs: dict[int, list[Any]] = defaultdict(list)
    outputs: list[int] = []

    def factory(spec: str, prompts: Any) -> Any:
        seat = seats.index(spec) + 1
        provider = PolicyProvider(spec.split(":", 1)[1], logs[seat])
        player = LLMPlayer(provider, prompts, name=spec)
        original = player.decide

        async def decide(decision: Any) -> Any:
            action = await original(decision)
            outputs.append(action.usage.output_tokens if action.usage else 0)
            return action

        player.decide = decide  # type: ignore[method-assign]
        return player

    with tempfile.TemporaryDirectory() as tmp:
        run = asyncio.run(play_game("stille-post", seed=seed, out=Path(tmp) / "g.jsonl",
                                    players=seats, options={}, llm_factory=factory))
    return logs, sum(outputs), run.outcome.status


def tokens_per_game(seed: int = 2026) -> None:
    print("tokens per game (standard config: 4 seats, N=3, 4 rounds, all four seats LLMs "
          "answered by the emulators' policy; ~4 chars/token):")
    games = []
    for seats in LINEUPS:
        logs, out, status = play_logged(seats, seed)
        totals = {"stable": [0, 0], "volatile": [0, 0]}  # [input tokens, prefix tokens]
        calls = system_changes = 0
        for seat, requests in logs.items():
            prev = {"stable": "", "volatile": ""}
            prev_system = None
            for i, req in enumerate(requests):
                calls += 1
                if prev_system is not None and req.system != prev_system:
                    system_changes += 1  # a hint was appended to the system prompt
                prev_system = req.system
                for mode, r in (("stable", req), ("volatile", _volatile(req, seat, i))):
                    text = serialise_request(r)
                    totals[mode][0] += tokens(text)
                    totals[mode][1] += tokens(text[:common_prefix(prev[mode], text)])
                    prev[mode] = text
        games.append((totals, out, calls))
        print(f"  {status:9s} {calls:3d} calls  input {totals['stable'][0]:6d}  output {out:4d}"
              f"  stable-prefix share {totals['stable'][1] / totals['stable'][0]:6.1%}"
              f"  (volatile-first {totals['volatile'][1] / totals['volatile'][0]:6.1%});"
              f" system prompt changed (hint) on {system_changes} calls")
    inp = sum(g[0]["stable"][0] for g in games) / len(games)
    pre = sum(g[0]["stable"][1] for g in games) / len(games)
    inp_v = sum(g[0]["volatile"][0] for g in games) / len(games)
    pre_v = sum(g[0]["volatile"][1] for g in games) / len(games)
    mean_out = sum(g[1] for g in games) / len(games)
    print(f"  mean: input {inp:.0f} tokens, output {mean_out:.0f} tokens per game; input tokens in "
          f"a stable prefix {pre / inp:.1%} (append-only) vs {pre_v / inp_v:.1%} "
          "(volatile state first)")
    # What the prefix saves at cache-read prices (cached = 10% of input on all three APIs).
    eff, eff_v = inp - 0.9 * pre, inp_v - 0.9 * pre_v
    print(f"  billable-equivalent input tokens at a 90% cache discount: {eff:.0f} vs "
          f"{eff_v:.0f} ({1 - eff / eff_v:.0%} less)")


def main() -> None:
    import sys

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    overhead()
    seat_construction()
    cpu_per_call()
    tokens_per_game()


if __name__ == "__main__":
    main()
