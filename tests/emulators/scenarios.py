"""The recorded scenarios, shared by the recording tool and the replay tests.

A replayed request must be byte-identical to the recorded one (the cassettes match on the
body), so both sides build their requests here, from the game's real prompts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stille_post.games.stille_post import prompts as P
from stille_post.games.stille_post.observation import StillePostObservation
from stille_post.games.stille_post.roster import load_roster
from stille_post.providers.base import ChatRequest, Message

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes" / "providers"
KINDS = ("openai", "anthropic", "google", "openai-compatible")

# The local server used for the real openai-compatible recordings (PROVENANCE.md).
LOCAL_URL = "http://127.0.0.1:8765/v1"
LOCAL_MODELS = ("smollm2-135m-a", "smollm2-135m-b")


@dataclass(frozen=True)
class GameSetup:
    seed: int
    players: list[str]
    options: dict[str, Any] = field(default_factory=dict)


# One model per kind for the single-turn scenarios.
TURN_MODEL = {
    "openai": "gpt-5-mini",
    "anthropic": "claude-haiku-4-5-20251001",
    "google": "gemini-3-flash-preview",
    "openai-compatible": LOCAL_MODELS[0],
}

GAMES = {
    "openai": GameSetup(11, ["openai:gpt-5", "openai:gpt-5-mini", "openai:gpt-4.1",
                             "openai:gpt-4.1-mini"], {"max_rounds": 1}),
    "anthropic": GameSetup(12, ["anthropic:claude-opus-4-6",
                                "anthropic:claude-sonnet-4-5-20250929",
                                "anthropic:claude-haiku-4-5-20241022", "detective"],
                           {"max_rounds": 2}),
    "google": GameSetup(13, ["google:gemini-3-pro-preview", "google:gemini-3-flash-preview",
                             "google:gemini-2.5-flash", "cautious"], {"max_rounds": 2}),
    # A real 135M model at ~15 tokens/s on 2 cores: two LLM seats, one round.
    "openai-compatible": GameSetup(
        14, [f"openai-compatible:{LOCAL_MODELS[0]}@{LOCAL_URL}", "detective",
             f"openai-compatible:{LOCAL_MODELS[1]}@{LOCAL_URL}", "random"],
        {"max_rounds": 1}),
}


def _system(seat: int) -> str:
    obs = StillePostObservation(
        seat=seat, num_players=4, guess_every=3, max_rounds=2, match="fuzzy",
        max_message_chars=2000, roster=load_roster(), active=(1, 2, 3, 4), round=1, turn=3,
        hints=(), events=())
    return P.system_prompt(obs)


def _gm(text: str) -> str:
    return f"{P.GM}: {text}"


def _intro_lines(upto: int, seat: int) -> list[str]:
    lines = [_gm(P.game_start_text(4))]
    for s in range(1, upto + 1):
        line = _gm(P.intro_prompt_text(s))
        if s == seat:
            line += " That is you: write your message now. No tools in this round."
        lines.append(line)
        if s < upto:
            lines.append(f"[Player {s}]: Hello, I am Player {s}. Nice to meet you all.")
    return lines


def text_request(seat: int = 2, max_output_tokens: int | None = None) -> ChatRequest:
    """Seat 2's introduction: text only, tools listed but `tool_choice` none."""
    return ChatRequest(_system(seat), [Message("user", "\n\n".join(_intro_lines(seat, seat)))],
                       list(P.TOOLS), max_output_tokens=max_output_tokens, tool_choice="none")


def _history(seat: int) -> list[Message]:
    lines = _intro_lines(4, seat=0)
    lines.append("[Player 4]: Hello, I am Player 4. Nice to meet you all.")
    own = "Hello from Player 2. I like short, careful answers."
    msgs = [Message("user", "\n\n".join(lines[:3])), Message("assistant", own),
            Message("user", "\n\n".join([*lines[4:], _gm(P.turn_start_text(1, 1, 1)),
                                         "[Player 1]: Player 3 writes like a flagship model.",
                                         _gm(P.turn_start_text(1, 2, 2))]))]
    return msgs


def tool_request(seat: int = 2, max_output_tokens: int | None = None,
                 tool_choice: str = "auto") -> ChatRequest:
    """Seat 2's turn 3 of round 1, tools allowed: the emulator answers with a tool call.
    The real local model gets `tool_choice` naming the tool (llama.cpp then constrains
    its output to the tool's JSON schema)."""
    msgs = _history(seat)
    last = msgs[-1]
    msgs[-1] = Message("user", last.content.replace(
        P.turn_start_text(1, 2, 2), P.turn_start_text(1, 3, 2)
        + " That is you: write your message now. You may call at most one tool."))
    return ChatRequest(_system(seat), msgs, list(P.TOOLS),
                       max_output_tokens=max_output_tokens, tool_choice=tool_choice)


def guess_request(seat: int = 2, max_output_tokens: int | None = None) -> ChatRequest:
    """The identity guess: every seat names the model it believes it is."""
    msgs = _history(seat)
    msgs.append(Message("assistant", "Player 2 here: I suspect Player 3 is a Claude model."))
    msgs.append(Message("user", "\n\n".join([_gm(P.turn_start_text(1, 3, 3)),
                                             "[Player 3]: I am certainly a flagship model.",
                                             _gm(P.identity_guess_start_text(1))])))
    return ChatRequest(_system(seat), msgs, list(P.TOOLS),
                       max_output_tokens=max_output_tokens, tool_choice="none")


def cassette_path(kind: str, name: str) -> Path:
    return CASSETTES / kind / f"{name}.yaml"


def transcript_path(kind: str) -> Path:
    return CASSETTES / kind / "game_4seat.transcript.jsonl"
