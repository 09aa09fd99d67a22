"""Structured seats' request layouts, measured: the share of the input a provider's
prompt cache serves, per provider kind, when a free-text turn (`tool_choice` "none")
lists the tools with the round's legal schemas, lists them as the game defines them, or
leaves them out (providers/structured.py FREE_TEXT_TOOLS).

    python -m benchmarks structured            # a table
    python -m benchmarks structured --json     # JSON alone on stdout
    python -m benchmarks structured --games 4  # games per game (default 3)

Stille Post and the Elimination Game (the games with free-text turns) are played by LLM
seats on the in-process policies of bench_providers and bench_elimination, free and with
`structured = "schema"` (so every request carries the legal moves LLMPlayer attaches).
Each request is then shaped as each adapter sends it (the legal schemas in place of the
tools' parameters; a free-text turn's tools kept or left out; Anthropic's and Gemini's
forced `answer` tool for a text answer) and billed under one model's cache rule per
kind (benchmarks/prefix.py: OpenAI and Gemini implicit, Anthropic at our adapter's
breakpoints), all seats sharing one cache. The other half of the choice, how often a
model writes a call as text when it sees the tools, needs a real model: the local
proving ground measures it (`stille-post local-models --free-text-tools ...`,
docs/adherence.md).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.bench_efficiency import cache_rules
from benchmarks.prefix import bill, billed

KINDS = {"openai": "gpt-5-mini", "anthropic": "claude-sonnet-4-5-20250929",
         "google": "gemini-2.5-flash", "openai-compatible": "gpt-5-mini"}
LAYOUTS = ("free", "legal", "plain", "omitted")


def requests_of(game: str, games: int, structured: str | None) -> list[Any]:
    """Every request the LLM seats of `games` games send, in order."""
    from stille_post.players.generation import GenerationConfig
    from stille_post.players.llm import LLMPlayer
    from stille_post.session import play_game

    if game == "stille-post":
        from benchmarks.bench_providers import LINEUPS
        from benchmarks.bench_providers import PolicyProvider as Policy

        def lineup(g: int) -> list[str]:
            return list(LINEUPS[g % len(LINEUPS)])
        seed0 = 2026
    else:
        from benchmarks.bench_elimination import PolicyProvider as Policy  # type: ignore[assignment]

        def lineup(g: int) -> list[str]:
            return [f"openai:policy-{i}" for i in range(1, 9)]
        seed0 = 1
    sent: list[Any] = []
    gen = GenerationConfig(structured=structured)
    with tempfile.TemporaryDirectory() as tmp:
        for g in range(games):
            def factory(spec: str, prompts: Any) -> Any:
                return LLMPlayer(Policy(spec.split(":", 1)[1], sent), prompts, name=spec,
                                 generation=gen)

            asyncio.run(play_game(game, seed=seed0 + g, out=Path(tmp) / f"{g}.jsonl",
                                  players=lineup(g), options={}, llm_factory=factory))
    return sent


def shaped(request: Any, kind: str, layout: str) -> Any:
    """`request` with the tools and tool choice `kind`'s adapter sends."""
    from stille_post.providers import structured as S

    tools = S.request_tools(request, kind, layout)
    choice = request.tool_choice
    answer = S.text_schema(request)
    if answer is not None and (kind == "anthropic" or (kind == "google" and tools)):
        tools, choice = [*tools, S.answer_tool(answer)], S.ANSWER_TOOL
    return replace(request, tools=tools, tool_choice=choice)


def measure(games: int) -> dict[str, Any]:
    rules = {r.model: r for r in cache_rules()}
    out: dict[str, Any] = {"games": games, "rows": []}
    for game in ("stille-post", "elimination"):
        free = requests_of(game, games, None)
        held = requests_of(game, games, "schema")
        free_text = sum(1 for r in held if r.tool_choice == "none"
                        and (r.legal is None or r.legal.text is None))
        for kind, model in KINDS.items():
            rule = rules[model]
            for layout in LAYOUTS:
                reqs = free if layout == "free" else [
                    shaped(r, kind, layout) for r in held]
                b = bill([billed("all", r) for r in reqs], rule)
                out["rows"].append({
                    "game": game, "kind": kind, "layout": layout,
                    "requests_per_game": len(reqs) / games,
                    "free_text_turns_per_game": free_text / games,
                    "input_tokens_per_game": b.input_tokens / games,
                    "cached_share": b.cached_tokens / b.input_tokens if b.input_tokens else 0.0,
                    "billable_share": b.billable / b.input_tokens if b.input_tokens else 0.0})
    return out


def main(argv: list[str] | None = None) -> int:
    argv = list(argv or [])
    games = int(argv[argv.index("--games") + 1]) if "--games" in argv else 3
    data = measure(games)
    if "--json" in argv:
        print(json.dumps(data))
        return 0
    print(f"   cached share of the input, {games} games per game (free: no schema; "
          "legal / plain / omitted: structured, free-text turns with the tools' legal "
          "schemas, as defined, or none)")
    for row in data["rows"]:
        print(f"   {row['game']:12} {row['kind']:18} {row['layout']:8} "
              f"{row['input_tokens_per_game']:>9,.0f} tok/game  cached "
              f"{row['cached_share']:.0%}  billable {row['billable_share']:.0%}")
    return 0
