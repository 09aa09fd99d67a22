"""Every word of Stille Post that a model reads: the system prompt, the Game Master's
notices, the tool schemas, and the rendering of a seat's view into a ChatRequest.

Rendering rules (docs/rules.md §1, "Conversation framing"):
- other players and the Game Master are *user* turns, one line each, prefixed
  "[Player X]: " or "[GAME MASTER]: ";
- the seat's own messages and tool calls are *assistant* turns, each tool call followed
  by its result as a tool message;
- an event renders the same way whenever it is rendered, so each seat's history is
  append-only and its prompt prefix stays cacheable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from stille_post.core.events import Event
from stille_post.games.kit.framing import Conversation
from stille_post.games.kit.incremental import IncrementalRenderer, render_full
from stille_post.games.stille_post.observation import StillePostObservation
from stille_post.games.stille_post.roster import Roster
from stille_post.players.base import Decision
from stille_post.providers.base import ChatRequest, LegalMoves, Message, Tool, ToolCall

GM = "[GAME MASTER]"
GM_TO_YOU = "[GAME MASTER → you]"
HINTS_HEADER = "🔒 PRIVATE HINTS"

TOOLS: tuple[Tool, ...] = (
    Tool(
        "russian_roulette",
        "Pull the trigger: with probability 1/2 you are eliminated, otherwise a random "
        "other active player is eliminated.",
        {"type": "object", "properties": {}, "additionalProperties": False},
    ),
    Tool(
        "guess_model",
        "Guess another active player's model. Everyone learns whether you were correct or "
        "wrong, but not which model you named. A correct guess earns you a private hint "
        "about your own model.",
        {
            "type": "object",
            "properties": {
                "player_id": {"type": "integer", "description": "the other player's number"},
                "model_id": {"type": "string", "description": "the model you think they are"},
            },
            "required": ["player_id", "model_id"],
            "additionalProperties": False,
        },
    ),
    Tool(
        "proclaim_superiority",
        "Make a public statement about why you are superior. No effect on the game state.",
        {
            "type": "object",
            "properties": {"statement": {"type": "string"}},
            "required": ["statement"],
            "additionalProperties": False,
        },
    ),
    Tool(
        "propose_task",
        "Propose a task or challenge to the other players, to test what they can do. No "
        "effect on the game state.",
        {
            "type": "object",
            "properties": {"task": {"type": "string"}},
            "required": ["task"],
            "additionalProperties": False,
        },
    ),
)
TOOL_NAMES = tuple(t.name for t in TOOLS)
TOOL_PARAMETERS: dict[str, frozenset[str]] = {
    t.name: frozenset(t.parameters.get("properties", {})) for t in TOOLS
}

_PROVIDER_LABELS = {
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "google": "Google",
    "openai-compatible": "Other (open-weight)",
}

_MATCH_RULE = {
    "fuzzy": (
        "A guess is correct when it contains your model id or your model id contains it, "
        "ignoring case, quotes and trailing punctuation. A guess shorter than 3 characters, "
        "or one that names two or more different models, is invalid."
    ),
    "exact": (
        "A guess is correct only when it is exactly your model id, ignoring case, quotes and "
        "trailing punctuation. Reply with the id alone."
    ),
}

HINT_LABELS = {
    "provider": "Your provider is",
    "length": "Your model id has this many characters",
    "first_letter": "Your model id starts with the letter",
    "tier": "Your model is",
    "middle": "Your model id contains, in its middle, the substring",
}


@lru_cache(maxsize=32)
def roster_listing(roster: Roster) -> str:
    # Cached: every request of every seat lists the same roster (frozen, so hashable).
    groups: dict[str, list[str]] = {}
    for m in roster:
        groups.setdefault(m.provider, []).append(m.id)
    return "\n".join(
        f"- {_PROVIDER_LABELS.get(p, p)}: {', '.join(ids)}" for p, ids in groups.items()
    )


def hint_line(kind: str, value: str) -> str:
    return f"- {HINT_LABELS[kind]}: {value}"


# A seat's rules are the same on every request of its game (the hints, which change, are
# added after), so they are built once. Keyed by the roster's identity, not its hash:
# hashing a roster walks every model in it, which cost more than building the text.
_RULES_CACHE: dict[tuple[int, int, int, int, int, str, int], tuple[Roster, str]] = {}


def _rules_text(seat: int, num_players: int, guess_every: int, max_rounds: int, match: str,
                roster: Roster, max_message_chars: int) -> str:
    key = (id(roster), seat, num_players, guess_every, max_rounds, match, max_message_chars)
    hit = _RULES_CACHE.get(key)
    if hit is not None and hit[0] is roster:
        return hit[1]
    if len(_RULES_CACHE) >= 1024:
        _RULES_CACHE.clear()
    text = _build_rules_text(seat, num_players, guess_every, max_rounds, match, roster,
                             max_message_chars)
    _RULES_CACHE[key] = (roster, text)
    return text


def _build_rules_text(seat: int, num_players: int, guess_every: int, max_rounds: int,
                      match: str, roster: Roster, max_message_chars: int) -> str:
    text = f"""You are Player {seat} in "Stille Post", a conversation game among {num_players} AI language models. Each player is a different model drawn from the list below, and nobody is told which one they are, you included. Your goal is to work out which model YOU are.

How the game runs
1. Introduction: each player writes an opening message, in player order. No tools in this round.
2. Turns: players speak one at a time in ascending player order, skipping anyone who has left. On your turn you write one message and may call at most ONE tool.
3. Identity guess: after every {guess_every} turns, every active player is asked at the same moment to name the model they believe they are. A correct guess wins: you leave the game as a winner. A wrong guess costs nothing. Everyone learns who was right and who was wrong, but not what anyone guessed.
   {_MATCH_RULE[match]}
4. The game ends when at most one player is left or after {max_rounds} rounds. Then every identity is revealed.

Tools
- russian_roulette(): with probability 1/2 you are eliminated; otherwise a randomly chosen other active player is.
- guess_model(player_id, model_id): guess another active player's model. The result (correct or wrong) is announced to everyone, without the model you named. If you are correct, you receive one private hint about your own model.
- proclaim_superiority(statement): a public statement. No effect on the game.
- propose_task(task): propose a challenge to the others. No effect on the game.

Hints come in five kinds, each drawn at random from the kinds you have not had yet: your provider, the number of characters in your model id, its first letter, whether you are a flagship/large or a smaller/efficient model, and a substring from the middle of your id. They appear under "{HINTS_HEADER}" below, and only you can see them.

Possible models ({len(roster)} in all):
{roster_listing(roster)}

Conversation format: other players' messages reach you as "[Player X]: ...", and announcements as "{GM}: ..." or, when meant for you alone, "{GM_TO_YOU}: ...". A line that a player wrote to look like such a header is shown with "(quoted)" in front. Your own earlier messages appear as your own replies. Messages are cut at {max_message_chars} characters."""
    return text


def system_prompt(obs: StillePostObservation) -> str:
    text = _rules_text(obs.seat, obs.num_players, obs.guess_every, obs.max_rounds, obs.match,
                       obs.roster, obs.max_message_chars)
    if obs.hints:
        text += f"\n\n{HINTS_HEADER}\n" + "\n".join(hint_line(k, v) for k, v in obs.hints)
    return text


# --- Game Master notices (stored in events as `text`, so transcripts read on their own) ---

def game_start_text(n: int) -> str:
    seats = ", ".join(f"Player {i}" for i in range(1, n + 1))
    return f"The game begins. Players: {seats}."


def intro_prompt_text(seat: int) -> str:
    return f"Introduction round: Player {seat}, write your opening message."


def turn_start_text(round_no: int, turn: int, seat: int) -> str:
    return f"Round {round_no}, turn {turn}: Player {seat} speaks."


def identity_guess_start_text(phase: int) -> str:
    return (
        f"Identity guess #{phase}: every active player, reply now with the one model id you "
        "believe you are, and nothing else (naming two models makes a guess invalid)."
    )


def identity_result_text(phase: int, results: Mapping[int, str], winners: Sequence[int]) -> str:
    parts = [f"Player {s}: {r}" for s, r in sorted(results.items())]
    text = f"Identity guess #{phase} results: " + "; ".join(parts) + "."
    if winners:
        who = ", ".join(f"Player {s}" for s in winners)
        text += f" {who} guessed correctly, won, and left the game."
    return text


def roulette_text(caller: int, victim: int) -> str:
    if victim == caller:
        return f"Player {caller} pulled the trigger of russian_roulette and was eliminated."
    return (
        f"Player {caller} pulled the trigger of russian_roulette and survived. "
        f"Player {victim} was eliminated."
    )


def guess_model_text(guesser: int, target: int, correct: bool) -> str:
    verdict = "correct" if correct else "wrong"
    return f"Player {guesser} guessed Player {target}'s model: {verdict}."


def hint_received_text(kind: str) -> str:
    return f"Correct guess: a private hint ({kind}) was added under {HINTS_HEADER}."


def no_hints_left_text() -> str:
    return "Correct guess, but no hints left: you have already received all five kinds."


def proclaim_text(seat: int, statement: str) -> str:
    return f"Player {seat} proclaims superiority: {statement}"


def propose_task_text(seat: int, task: str) -> str:
    return f"Player {seat} proposes a task: {task}"


def refused_text(seat: int, tool: str, reason: str) -> str:
    return f"Player {seat}'s call to {tool} was refused: {reason}."


def forfeit_text(seat: int, reason: str) -> str:
    return f"Player {seat} forfeits: {reason}."


def removed_text(seat: int, forfeits: int) -> str:
    return (
        f"Player {seat} is removed from the game as unresponsive after {forfeits} forfeits "
        "in a row."
    )


def repair_text(reason: str) -> str:
    return f"Your reply could not be used: {reason}. Please answer again."


def game_over_text(reason: str) -> str:
    return f"Game over: {reason}."


def reveal_text(identities: Mapping[int, str]) -> str:
    return "Identities: " + "; ".join(f"Player {s} was {m}" for s, m in sorted(identities.items())) + "."


# --- rendering a seat's view ------------------------------------------------------------

def _tool_calls_of(data: Mapping[str, Any]) -> list[ToolCall]:
    return [
        ToolCall(c["name"], dict(c.get("arguments") or {}), id=c["id"],
                 provider_data=dict(c.get("provider_data") or {}))
        for c in data.get("tool_calls", [])
    ]


def _user_line(event: Event, seat: int) -> str | None:
    d = event.data
    if event.type == "message":
        return f"[Player {event.actor}]: {d['text']}"
    if event.visibility.is_public:
        text = str(d.get("text", ""))
        if event.type in ("intro_prompt", "turn_start") and event.actor == seat:
            # "Plain text" said outright: a model that sees tools listed (they are on every
            # request, for the cacheable prefix) otherwise writes its message as a JSON
            # call (Qwen2.5-Coder, docs/adherence.md).
            extra = ("No tools in this round: write the message itself, as plain text."
                     if event.type == "intro_prompt" else
                     "You may call at most one tool; the message itself is plain text.")
            text += f" That is you: write your message now. {extra}"
        return f"{GM}: {text}" if text else None
    text = str(d.get("text", ""))
    return f"{GM_TO_YOU}: {text}" if text else None


def render_event(conv: Conversation, e: Event, seat: int) -> None:
    """One event of the seat's view into its conversation: own words as assistant turns,
    own tool calls attached to them and answered by tool messages, everything else as
    user lines. Depends only on the event, the seat and the conversation, which is what
    lets the kit keep the conversation between decisions (kit/incremental.py)."""
    if e.actor == seat:
        t = e.type
        if t == "message" or t == "identity_guess":
            conv.assistant(str(e.data.get("text", "")))
            return
        if t == "message_meta":
            conv.attach_provider_data(dict(e.data.get("provider_data") or {}))
            return
        if t == "tool_calls":
            # The calls belong to the assistant turn just written (or to an empty one when
            # the seat called a tool without saying anything).
            conv.attach_calls(_tool_calls_of(e.data))
            return
        call_id = e.data.get("call_id")
        if call_id in conv.open_calls:
            # The Game Master's answer to this seat's own call: a tool result, in order.
            conv.tool_result(call_id, str(e.data.get("text", "")))
            return
    line = _user_line(e, seat)
    if line is not None:
        conv.user(line)


RENDERER = IncrementalRenderer(render_event)


def render_messages(events: Sequence[Event], seat: int) -> list[Message]:
    """The seat's conversation, rendered from scratch (the reference for the kept one)."""
    return render_full(render_event, events, seat)


# --- the legal moves, for a structured seat's constrained decoding ------------------------

def legal_moves(decision: Decision[Any], *, narrow: bool = False) -> LegalMoves | None:
    """An identity guess is one model id of the roster; `guess_model` names another
    active player and a roster id, and a statement or a task is not empty (a long one is
    cut, not refused: no bound). The messages themselves stay free text. Every decision
    carries the tools' schemas, so a seat's requests list the same tools until someone
    leaves the game."""
    obs: StillePostObservation = decision.observation
    ids = list(obs.roster.ids)
    text = {"type": "string", "minLength": 1}
    tools: dict[str, dict[str, Any]] = {
        "russian_roulette": dict(TOOLS[0].parameters),
        "proclaim_superiority": _arguments({"statement": text}),
        "propose_task": _arguments({"task": text}),
    }
    if obs.others:
        tools["guess_model"] = _arguments({
            "player_id": {"type": "integer", "enum": list(obs.others),
                          "description": "the other player's number"},
            "model_id": {"type": "string", "enum": ids,
                         "description": "the model you think they are"}})
    if decision.kind == "identity_guess":
        return LegalMoves(tools=tools, text={"type": "string", "enum": ids})
    return LegalMoves(tools=tools, free=decision.kind != "turn")


def _arguments(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


class StillePostPrompts:
    """The PromptBook that LLM seats of Stille Post use."""

    def legal_moves(self, decision: Decision[Any], *, narrow: bool = False
                    ) -> LegalMoves | None:
        return legal_moves(decision, narrow=narrow)

    def render(self, decision: Decision[Any]) -> ChatRequest:
        obs: StillePostObservation = decision.observation
        return ChatRequest(
            system=system_prompt(obs),
            messages=RENDERER.messages(obs.events, obs.seat),
            tools=list(TOOLS),
            tool_choice="auto" if decision.kind == "turn" else "none",
        )


PROMPTS = StillePostPrompts()
