"""Every word of Connections that a model reads, and how a reply becomes a move.

Three decisions, each answered through a native tool call (a re-ask follows a reply
without one, or with a bad one, stating the reason as the paper's appendix B does):

- `secret_word` (the setter, when no --word was given): `choose_word(word)`;
- `clue` (the clue-giver): `give_clue(word, clue)`, the word private, the clue public;
- `guess` (the setter and the other guessers, at the same moment): `guess(word)`.

Framing (docs/rules.md §1): the system prompt holds only what never changes during the game
(rules, seat, role, personas, the setter's word once chosen); the history is user turns
("[GAME MASTER]: ...", "[Player X]: ...") and the seat's own tool calls as assistant
turns, each followed by its tool result; the volatile facts (attempt, prefix, lists,
the clue) close the newest user turn, so the prefix of every request is cacheable.

Models without tool calling are met half-way: a bare one-word reply is taken as a guess
or a secret word, and "WORD: clue" as a clue (documented lenience; the prompt still asks
for the tool).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from stille_post.core.errors import ParseError
from stille_post.core.events import Event
from stille_post.games.connections import rules
from stille_post.games.connections.observation import ConnectionsObservation
from stille_post.games.kit.framing import GM, GM_TO_YOU, Conversation
from stille_post.games.kit.incremental import IncrementalRenderer
from stille_post.players.base import Action, Decision
from stille_post.providers.base import ChatRequest, LegalMoves, Tool, ToolCall

SECRET_WORD, CLUE, GUESS = "secret_word", "clue", "guess"

# `pattern` (and the clue's `maxLength`): a constrained decoder (llama.cpp turns the schema
# into a grammar) then cannot write a sentence where one word is asked, which is what a
# small model does otherwise (docs/adherence.md). The rules still judge the word.
_WORD_PARAM = {"type": "string", "pattern": "^[A-Za-z]+$",
               "description": "one English word, letters only"}
CHOOSE_WORD = Tool("choose_word", "Choose your secret word (one English word).",
                   {"type": "object", "properties": {"word": _WORD_PARAM},
                    "required": ["word"], "additionalProperties": False})
GIVE_CLUE = Tool("give_clue", "Give your clue. The word stays private until the attempt is "
                 "scored; the clue is shown to everyone.",
                 {"type": "object",
                  "properties": {"word": _WORD_PARAM,
                                 "clue": {"type": "string", "maxLength": 200,
                                          "description": "a short clue that does not contain "
                                                         "the word"}},
                  "required": ["word", "clue"], "additionalProperties": False})
GUESS_TOOL = Tool("guess", "Say your guess for the word behind the clue.",
                  {"type": "object", "properties": {"word": _WORD_PARAM},
                   "required": ["word"], "additionalProperties": False})
TOOL_OF = {SECRET_WORD: CHOOSE_WORD, CLUE: GIVE_CLUE, GUESS: GUESS_TOOL}


# --- reading a reply ----------------------------------------------------------------------

def _call(action: Action, tool: Tool) -> ToolCall | None:
    for c in action.tool_calls:
        if c.malformed:
            raise ParseError(f"your `{c.name}` call could not be read ({c.malformed})")
    calls = [c for c in action.tool_calls if c.name == tool.name]
    if not calls and action.tool_calls:
        names = ", ".join(sorted({c.name for c in action.tool_calls}))
        raise ParseError(f"you called {names}; call `{tool.name}` instead")
    return calls[0] if calls else None


def _string(call: ToolCall, key: str) -> str:
    value = call.arguments.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ParseError(f"`{call.name}` needs a non-empty `{key}`")
    return value


def call_data(action: Action, call: ToolCall | None) -> dict[str, Any]:
    """What an event keeps of the seat's own reply so its next request can show the same
    tool call again: the call id, and the providers' opaque data (Gemini's thought
    signatures) on the call and on the message."""
    out: dict[str, Any] = {}
    if call is not None and call.id:
        out["call_id"] = call.id
    if call is not None and call.provider_data:
        out["call_data"] = dict(call.provider_data)
    if action.provider_data:
        out["message_data"] = dict(action.provider_data)
    return out


def read_word(action: Action, tool: Tool) -> tuple[str, dict[str, Any]]:
    """(the word as written, its call data; empty for a bare-text reply)."""
    call = _call(action, tool)
    if call is not None:
        return _string(call, "word"), call_data(action, call)
    text = action.text.strip()
    if not text:
        raise ParseError(f"no answer: call `{tool.name}` with your word")
    if len(text.split()) != 1:
        raise ParseError(f"call `{tool.name}` with one word (no explanation)")
    return text, call_data(action, None)


def read_clue(action: Action) -> tuple[str, str, dict[str, Any]]:
    """(word, clue, call data)."""
    call = _call(action, GIVE_CLUE)
    if call is not None:
        return _string(call, "word"), _string(call, "clue"), call_data(action, call)
    text = action.text.strip()
    word, sep, clue = text.partition(":")
    if not sep or len(word.split()) != 1 or not clue.strip():
        raise ParseError("call `give_clue` with your word and your clue")
    return word.strip(), clue.strip(), call_data(action, None)


# --- the system prompt ----------------------------------------------------------------

def _seats(obs: ConnectionsObservation) -> str:
    g = ", ".join(f"Player {s}" for s in obs.guessers)
    return f"Player {obs.setter} is the setter; the guessers are {g}."


def system_prompt(obs: ConnectionsObservation) -> str:
    n = len(obs.guessers)
    you = (f"You are Player {obs.seat}, the SETTER." if obs.is_setter
           else f"You are Player {obs.seat}, one of the {n} GUESSERS.")
    parts = [
        f'You are playing "Connections", a word game for one setter and {n} guessers. '
        + _seats(obs) + " " + you,
        "How the game runs\n"
        "- The setter holds a secret English word. The Game Master reveals its first letter "
        "(the prefix), and nothing else: not how long the word is.\n"
        "- Each attempt, one guesser (the clue-giver; the role passes from guesser to "
        "guesser) privately picks a word that starts with the prefix and gives a short clue "
        "for it. The clue must not contain the word. The word may be any word with the "
        "prefix, not only the secret word.\n"
        "- Then the setter and the other guessers each guess the clue's word, all at once.\n"
        "- Setter Blocked: the setter guessed the clue word and it is not the secret word. "
        "That word is blocked for the rest of the game.\n"
        "- Connection: otherwise, if another guesser guessed the clue word, the next letter "
        "of the secret word is revealed. If the clue word is the secret word itself, the "
        "guessers win. Only then: revealing the last letter with another word does not end "
        "the game, and once every letter is revealed a clue word must start with the whole "
        "secret word.\n"
        "- Guesser Wrong: anything else.\n"
        f"- The guessers have {obs.max_attempts} attempts; then the setter wins.\n"
        "- Every word (clue word or guess) must be one English word from the game's "
        f"dictionary, at least {obs.min_length} letters, starting with the prefix, and not "
        "blocked or used before. A word that breaks this is sent back with the reason.",
        "How to answer: always through the tool you are offered: `give_clue` (word and "
        "clue) when you are the clue-giver, `guess` (one word) when you guess"
        + (", `choose_word` (one word) to choose the secret word." if obs.is_setter else ".")
        + " No explanations.",
        _role_section(obs),
    ]
    if obs.persona:
        parts.append(f"Who you are (stay in character when you pick words and clues): "
                     f"{obs.persona}")
    if obs.others_personas:
        lines = "\n".join(f"- Player {s}: {p}" for s, p in sorted(obs.others_personas.items()))
        parts.append("Who the other players are (they were told the same about you):\n" + lines)
    parts.append(f'Conversation format: announcements arrive as "{GM}: ...", or '
                 f'"{GM_TO_YOU}: ..." when meant for you alone; other players as '
                 '"[Player X]: (clue) ..." or "[Player X]: (guess) ...". Your own moves appear '
                 "as your own tool calls.")
    return "\n\n".join(parts)


def _role_section(obs: ConnectionsObservation) -> str:
    if obs.is_setter:
        secret = f' Your secret word is "{obs.secret}".' if obs.secret else ""
        return ("YOUR ROLE (private)\nYou are the setter." + secret + " Block every clue "
                "you can: guess the word each clue points to. You cannot block your own "
                "secret word, so once a clue points to it, the guessers are close.")
    return ("YOUR ROLE (private)\nYou are a guesser. You do not know the secret word. "
            "As the clue-giver, pick a word and a clue that a fellow guesser will get but the "
            "setter will not: easy enough for them, too hard or too personal for the setter. "
            "As a guesser, name the word you think the clue-giver means.")


# --- the closing instruction (the volatile facts) --------------------------------------------

def _lists(obs: ConnectionsObservation) -> str:
    words = sorted(set(obs.blocked) | set(obs.used))
    if not words:
        return "No word is blocked or used yet."
    return "Make sure your word is NOT one of these words: " + ", ".join(words) + "."


def instruction(decision: Decision[Any]) -> str:
    obs: ConnectionsObservation = decision.observation
    left = obs.max_attempts - obs.attempt
    if decision.kind == SECRET_WORD:
        return (f"Choose your secret word now: one real English word of at least "
                f"{obs.min_length} letters that the guessers will find hard to reach. Call "
                "`choose_word`.")
    head = f"Attempt {obs.attempt} of {obs.max_attempts} ({left} left after this one). " \
           f"The word starts with {obs.prefix.upper()}."
    if obs.nothing_left:
        head += f" Every letter is revealed: the secret word is {obs.prefix.upper()}."
    if decision.kind == CLUE:
        return (f"{head} You are the clue-giver. Come up with a word that starts with "
                f"{obs.prefix.upper()} and a clue for it that does not contain the word. "
                f"{_lists(obs)} Call `give_clue`.")
    if decision.kind == GUESS:
        return (f"{head} Player {obs.clue_giver} gave the clue: \"{obs.clue}\". Guess a "
                f"single word that answers this clue, starting with {obs.prefix.upper()}. "
                f"{_lists(obs)} Call `guess`.")
    raise ValueError(f"unknown decision kind {decision.kind!r}")


# --- Game Master notices (also the transcript's narration) --------------------------------

def game_start_text(setter: int, guessers: Sequence[int], max_attempts: int) -> str:
    g = ", ".join(f"Player {s}" for s in guessers)
    return (f"Connections begins. Player {setter} is the setter; the guessers are {g}. "
            f"The guessers have {max_attempts} attempts to find the setter's word.")


def persona_text(persona: str) -> str:
    return f"Your persona: {persona}"


def personas_text(personas: Mapping[int, str]) -> str:
    return "Personas: " + "; ".join(f"Player {s}: {p}" for s, p in sorted(personas.items()))


def secret_text(word: str) -> str:
    return f"Your secret word is {word}."


def prefix_text(prefix: str, *, first: bool) -> str:
    # Letters only: the secret's length is never told (docs/rules.md §4; the paper's setter
    # "will initially tell you just the first letter of the word").
    if first:
        return f"The first letter is {prefix.upper()}."
    return f"The next letter is {prefix[-1].upper()}: the word starts with {prefix.upper()}."


def nothing_left_text(prefix: str) -> str:
    return (f"No letter is left to reveal: every letter of the secret word is revealed, "
            f"{prefix.upper()}. The guessers win when a clue word is the secret word itself.")


def attempt_text(attempt: int, giver: int, prefix: str) -> str:
    return f"Attempt {attempt}: Player {giver} gives a clue for a word starting with " \
           f"{prefix.upper()}."


def clue_word_text(word: str) -> str:
    return f"Your word is {word} (private until the attempt is scored)."


_OUTCOME_TEXT = {"connection": "Connection!", "setter_blocked": "Setter Blocked!",
                 "guesser_wrong": "Guesser Wrong!"}


def scored_text(attempt: int, giver: int, word: str | None, outcome: str,
                connectors: Sequence[int], setter_matched: bool, blocked: Sequence[str],
                win: bool) -> str:
    if word is None:
        return f"Attempt {attempt}: Player {giver} gave no usable clue. " \
               f"{_OUTCOME_TEXT[outcome]}"
    text = f"Attempt {attempt}: the word was {word}. {_OUTCOME_TEXT[outcome]}"
    if outcome == "setter_blocked":
        text += f" {word} is blocked. Blocked: {', '.join(blocked)}."
    elif outcome == "connection":
        who = ", ".join(f"Player {s}" for s in connectors)
        text += f" {who} got it."
        if win:
            text += " It is the secret word: the guessers win."
    elif setter_matched:
        text += " The setter named it too, but it is the setter's own word."
    return text


def invalid_text(seat: int, reason: str) -> str:
    return f"Player {seat} gave no usable answer ({reason})."


def repair_text(reason: str) -> str:
    # The appendix B corrections: say what was wrong, then ask again.
    return f"Your earlier answer cannot be used: {reason}. Try again."


def game_over_text(result: str, reason: str | None = None) -> str:
    if result == "guessers_win":
        return "Game over: the guessers found the secret word."
    if result == "setter_wins":
        return "Game over: the attempts ran out. The setter wins."
    why = f" ({reason})" if reason else ""
    return f"Game over: the game did not finish{why}."


def reveal_text(secret: str | None) -> str:
    return f"The secret word was {secret}." if secret else "No secret word was set."


# --- rendering a seat's view ------------------------------------------------------------

_OWN_RESULT = {
    "secret": "Your secret word is set.",
    "clue_word": "Your clue is shown to the others; your word stays private until scoring.",
    "guess": "Your guess is recorded.",
}


def _own_call(conv: Conversation, e: Event, tool: Tool, args: dict[str, Any]) -> None:
    call_id = e.data.get("call_id")
    if not call_id:  # a bare-text reply: it stays text
        conv.assistant(str(args.get("word", "")) if tool is not GIVE_CLUE
                       else f"{args['word']}: {args['clue']}")
        return
    conv.assistant("")
    if e.data.get("message_data"):
        conv.attach_provider_data(dict(e.data["message_data"]))
    conv.attach_calls([ToolCall(tool.name, args, id=str(call_id),
                                provider_data=dict(e.data.get("call_data") or {}))])
    conv.tool_result(str(call_id), _OWN_RESULT[e.type])


def render_event(conv: Conversation, e: Event, seat: int) -> None:
    """One event of a seat's view into its conversation (the same way every time)."""
    d = e.data
    own = e.actor == seat
    if e.type in ("persona", "personas"):
        return  # in the system prompt
    if e.type == "secret" and d.get("seat") == seat and d.get("chosen_by") == "setter":
        _own_call(conv, e, CHOOSE_WORD, {"word": d["word"]})
        return
    if e.type == "clue_word" and own:
        _own_call(conv, e, GIVE_CLUE, {"word": d["word"], "clue": d["clue"]})
        return
    if e.type == "clue":
        if not own:
            conv.user(f"[Player {e.actor}]: (clue) {d['clue']}")
        return
    if e.type == "guess":
        if own:
            _own_call(conv, e, GUESS_TOOL, {"word": d["word"]})
        else:
            conv.user(f"[Player {e.actor}]: (guess) {d['word']}")
        return
    text = str(d.get("text", ""))
    if text:
        conv.user(f"{GM}: {text}" if e.visibility.is_public else f"{GM_TO_YOU}: {text}")


# A seat's conversation is kept between its decisions and only extended (kit/incremental).
RENDERER = IncrementalRenderer(render_event)


def render_messages(events: Sequence[Event], seat: int, closing: str) -> list[Any]:
    return RENDERER.messages(events, seat, f"{GM_TO_YOU}: {closing}")


# --- the legal moves, for a structured seat's constrained decoding ------------------------

# "legal" narrows a clue word or a guess to this many dictionary words, the most common
# first (a decoder's grammar of thousands of alternatives costs more than it saves).
LEGAL_WORDS = 300


def prefix_pattern(prefix: str, lengths: tuple[int, int] | None = None) -> str:
    """A word of letters that starts with `prefix`, in either case (the game casefolds),
    and, given `lengths` (shortest, longest), of a length a legal word can have.

    The lengths go in the pattern, not in `minLength`/`maxLength`: llama.cpp's grammar
    reads only the pattern of a string that has one. Without them small models answered
    the prefix alone ("B", in no dictionary) or a word of a hundred letters, which ran
    past the output cap and left the call unreadable."""
    head = "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() and c.lower() != c.upper()
                   else re.escape(c) for c in prefix)
    if lengths is None:
        return f"^{head}[A-Za-z]*$"
    low = max(0, lengths[0] - len(prefix))
    high = max(low, lengths[1] - len(prefix))
    return f"^{head}[A-Za-z]{{{low},{high}}}$"


def word_lengths(obs: ConnectionsObservation) -> tuple[int, int] | None:
    """The shortest and the longest dictionary word with the revealed prefix (None: no
    dictionary, or no such word)."""
    if obs.dictionary is None or not obs.prefix:
        return None
    words = obs.dictionary.with_prefix(obs.prefix)
    if not words:
        return None
    sizes = [len(w) for w in words]
    return min(sizes), max(sizes)


def legal_words(obs: ConnectionsObservation, cap: int = LEGAL_WORDS) -> list[str]:
    """The `cap` most common dictionary words the rules accept now as a clue word or a
    guess, judged by the rules' own `word_error` with what this seat knows: a guesser
    does not know the secret word, so every used word is left out (the rules let the
    secret word be named again, which a list could otherwise give away)."""
    if obs.dictionary is None or not obs.prefix:
        return []
    out: list[str] = []
    for word in obs.dictionary.by_frequency(obs.prefix):
        if rules.word_error(word, prefix=obs.prefix, dictionary=obs.dictionary,
                            blocked=obs.blocked, used=obs.used, secret=obs.secret) is None:
            out.append(word)
            if len(out) == cap:
                break
    return out


def _word_schema(obs: ConnectionsObservation, narrow: bool) -> dict[str, Any]:
    about = f"one English word, letters only, starting with {obs.prefix.upper()}"
    if narrow and (words := legal_words(obs)):
        return {"type": "string", "enum": words, "description": about}
    return {"type": "string", "pattern": prefix_pattern(obs.prefix, word_lengths(obs)),
            "description": about}


def legal_moves(decision: Decision[Any], *, narrow: bool = False) -> LegalMoves | None:
    obs: ConnectionsObservation = decision.observation
    if decision.kind == SECRET_WORD:
        # Any dictionary word of the minimum length: too many to list.
        word = {"type": "string", "pattern": f"^[A-Za-z]{{{obs.min_length},}}$",
                "description": _WORD_PARAM["description"]}
        return LegalMoves(tools={CHOOSE_WORD.name: _arguments({"word": word})})
    word = _word_schema(obs, narrow)
    if decision.kind == CLUE:
        # That the clue must not contain its word is a rule no schema states.
        clue = {"type": "string", "minLength": 1, "maxLength": 200,
                "description": "a short clue that does not contain the word"}
        return LegalMoves(tools={GIVE_CLUE.name: _arguments({"word": word, "clue": clue})})
    return LegalMoves(tools={GUESS_TOOL.name: _arguments({"word": word})})


def _arguments(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


class ConnectionsPrompts:
    """The PromptBook that LLM seats of Connections use."""

    def render(self, decision: Decision[Any]) -> ChatRequest:
        obs: ConnectionsObservation = decision.observation
        tool = TOOL_OF[decision.kind]
        return ChatRequest(system=system_prompt(obs),
                           messages=render_messages(obs.events, obs.seat,
                                                    instruction(decision)),
                           tools=[tool], tool_choice=tool.name)

    def legal_moves(self, decision: Decision[Any], *, narrow: bool = False
                    ) -> LegalMoves | None:
        return legal_moves(decision, narrow=narrow)


PROMPTS = ConnectionsPrompts()

__all__ = ["CLUE", "GUESS", "PROMPTS", "SECRET_WORD", "ConnectionsPrompts", "read_clue",
           "read_word"]
