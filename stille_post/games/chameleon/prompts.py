"""Every word of The Chameleon that a model reads: the system prompt, the Game Master's
notices, and the rendering of a seat's view into a ChatRequest.

What a request holds, in this order (providers cache the longest prefix an earlier
request shared, so what is shared comes first):
1. the rules: one text for every game with the same tie rule;
2. the card (players, category, the K words): the same for every seat of a game;
3. the seat's conversation: the public lines (speaking order, the words said), then,
   right before the seat's first question, its role, then the rest of the game.
Each question is the line its opening event renders for the seat asked, so it stays in
the history and a seat's next request extends its previous one byte for byte.

How an LLM seat learns its role: from a "[GAME MASTER → you]" line rendered from the
private `role` event in that seat's own view, placed just before the seat's first
question and so present in every request that seat is sent. A non-chameleon's line
names the secret word; the chameleon's says it was not told. Nothing else in any request
names the secret word before the final reveal.

Framing follows docs/rules.md §1 "Conversation framing": other players and the Game Master
are user turns ("[Player X]: ", "[GAME MASTER]: "), the seat's own answers are assistant
turns, and the question being asked closes the last user turn. The model reads lines
built from the events' data; the events' `text` is narration for transcript readers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from stille_post.core.events import Event
from stille_post.games.chameleon.observation import ChameleonObservation
from stille_post.games.kit.framing import Conversation
from stille_post.games.kit.incremental import IncrementalRenderer, render_full
from stille_post.players.base import Decision
from stille_post.providers.base import ChatRequest, LegalMoves, Message

GM = "[GAME MASTER]"
GM_TO_YOU = "[GAME MASTER → you]"

# Decision kinds the engine asks for.
WORD, VOTE, TIE_BREAK, GUESS = "word", "vote", "tie_break", "guess"

# ("tie" is a card word, so the rules never use it: a chameleon's request holds no card
# word outside the card, which the isolation tests check word for word.)
_TIE_RULES = {
    "random": "If the most votes are shared, one of those players is picked at random.",
    "dealer": "If the most votes are shared, the dealer (named at the start) picks one of "
              "those players.",
    "chameleon_wins": "If the most votes are shared, nobody is accused and the chameleon "
                      "wins.",
}

_RULES = (
    '"The Chameleon", a word game. One player is secretly the chameleon; the others share '
    "a secret word from the card, which the chameleon does not know.\n"
    "1. Words: in the speaking order, each player says one word linked to the secret word. "
    "Too obvious, and a caught chameleon can name the secret; too vague, and you look like "
    "the chameleon.\n"
    "2. Vote: all at once, everyone names the player they think is the chameleon (any "
    "player). The most named is accused. {tie}\n"
    "3. An accused chameleon gets one guess at the secret word, a card word: right, it "
    "wins; wrong, the others win. If anyone else is accused, the chameleon wins.\n"
    "Reply with only what is asked: one word (letters, digits, hyphens, apostrophes; no "
    "spaces) or one player number. An unusable reply is sent back with the reason; if it "
    "stays unusable, the game is void.\n"
    f'"{GM}: ..." is public, "{GM_TO_YOU}: ..." is for you alone, "[Player X]: ..." '
    "is what that player said."
)


def system_prompt(obs: ChameleonObservation) -> str:
    return _system_prompt(obs.num_players, obs.category, obs.words, obs.tie_rule)


@lru_cache(maxsize=1024)
def _system_prompt(n: int, category: str, words: tuple[str, ...], tie_rule: str) -> str:
    """The rules, then this game's card: the same text for every seat of a game."""
    return (f"{_RULES.format(tie=_TIE_RULES.get(tie_rule, ''))}\n\n"
            f"Players 1 to {n}. Category: {category}. The card: {', '.join(words)}.")


def role_line(seat: int, role: str, secret: str | None) -> str:
    """What the seat is told about itself (from its private `role` event)."""
    if role == "chameleon":
        return (f"You are Player {seat}. You ARE the chameleon: you were not told the secret "
                "word. Blend in, and vote for someone else.")
    return f'You are Player {seat}, not the chameleon. The secret word is "{secret}".'


# The question each decision asks. `instruction` closes the request only when the view
# does not end with the decision's opening event (a request built by hand).
_ASK_WORD = "Your turn: say your one word linked to the secret word (a word, not a player number)."
_ASK_VOTE = "Vote now: reply with a player number."
_ASK_GUESS = "You were caught. Guess the secret word: reply with one card word."


def _ask_tie_break(tied: Sequence[int]) -> str:
    return ("You are the dealer. The vote is tied: reply with the number of the accused, "
            "one of " + ", ".join(str(s) for s in tied) + ".")


def instruction(decision: Decision[Any]) -> str:
    obs: ChameleonObservation = decision.observation
    if decision.kind == WORD:
        return _ASK_WORD
    if decision.kind == VOTE:
        return _ASK_VOTE
    if decision.kind == TIE_BREAK:
        return _ask_tie_break(obs.tied)
    if decision.kind == GUESS:
        return _ASK_GUESS
    raise ValueError(f"unknown decision kind {decision.kind!r}")


# --- Game Master notices (stored in events as `text`, so transcripts read on their own) ---

def _players(n: int) -> str:
    return f"Players 1 to {n}"


def game_start_text(n: int, category: str, words: Sequence[str]) -> str:
    return (f"The game begins with {_players(n)}. Category: {category}. "
            f"Possible secret words: {', '.join(words)}.")


def role_text(role: str, secret: str | None) -> str:
    if role == "chameleon":
        return "You are the chameleon. You do not know the secret word."
    return f"You are not the chameleon. The secret word is {secret}."


def dealer_text(seat: int) -> str:
    return f"Player {seat} is the dealer and will settle a tied vote."


def order_text(order: Sequence[int]) -> str:
    return "Speaking order: " + ", ".join(f"Player {s}" for s in order) + "."


def turn_text(seat: int) -> str:
    return f"Player {seat}, say your word."


def word_text(seat: int, word: str) -> str:
    # Narration for transcript readers; a seat's prompt shows the word as "[Player X]: word".
    return f"Player {seat} says: {word}"


def vote_start_text() -> str:
    return "Everyone has spoken. Vote now for the player you believe is the chameleon."


def vote_text(voter: int, target: int) -> str:
    return f"Player {voter} voted for Player {target}."


def vote_result_text(counts: Mapping[int, int], top: Sequence[int]) -> str:
    parts = "; ".join(f"Player {s}: {n}" for s, n in counts.items())
    if len(top) == 1:
        return f"Votes: {parts}. Player {top[0]} has the most votes."
    tied = ", ".join(f"Player {s}" for s in top)
    return f"Votes: {parts}. The vote is tied between {tied}."


def tie_break_request_text(dealer: int, tied: Sequence[int]) -> str:
    return f"Player {dealer}, as the dealer, choose who is accused among Players " + \
        ", ".join(str(s) for s in tied) + "."


def tie_break_text(rule: str, picked: int | None, dealer: int | None) -> str:
    if picked is None:
        return "The vote is tied: nobody is accused."
    if rule == "dealer":
        return f"The dealer, Player {dealer}, picked Player {picked}."
    return f"The tie was broken at random: Player {picked}."


def accusation_text(seat: int | None, caught: bool) -> str:
    if seat is None:
        return "Nobody is accused. The chameleon escapes."
    if caught:
        return f"Player {seat} is accused, and Player {seat} IS the chameleon."
    return f"Player {seat} is accused, but Player {seat} is not the chameleon."


def second_chance_text(seat: int) -> str:
    return f"Player {seat}, you have one guess at the secret word."


def guess_text(seat: int, word: str, correct: bool) -> str:
    verdict = "correct" if correct else "wrong"
    return f"Player {seat} guessed {word}: {verdict}."


def invalid_text(seat: int, reason: str) -> str:
    return f"Player {seat} gave no usable answer ({reason}). The game is void."


def repair_text(reason: str) -> str:
    return f"Your reply could not be used: {reason}. Please answer again."


_OUTCOME_TEXT = {
    "IdentifiedWin": "the chameleon was caught and guessed wrong: the other players win",
    "IdentifiedLoss": "the chameleon was caught but named the secret word: the chameleon wins",
    "MisidentifiedLoss": "the chameleon was not caught: the chameleon wins",
    "Fail": "the game is void",
}


def game_over_text(outcome: str, reason: str | None = None) -> str:
    why = f" ({reason})" if reason and outcome == "Fail" else ""
    return f"Game over: {_OUTCOME_TEXT.get(outcome, outcome)}{why}."


def reveal_text(chameleon: int, secret: str) -> str:
    return f"Player {chameleon} was the chameleon. The secret word was {secret}."


# --- rendering a seat's view ------------------------------------------------------------

# Own answers that are rendered as the seat's assistant turns, and the field holding them.
_OWN_ANSWER = {"word": "word", "vote": "target", "tie_break": "picked", "guess": "guess"}


def _gm(text: str) -> str:
    return f"{GM}: {text}"


def _to_you(text: str) -> str:
    return f"{GM_TO_YOU}: {text}"


def _opens_for(event: Event, seat: int) -> bool:
    """True when `event` opens a decision of `seat` (asks it something)."""
    return event.type == "vote_start" or (
        event.type in ("turn_start", "tie_break_request", "second_chance")
        and event.actor == seat)


def _line(event: Event, seat: int | None = None) -> str | None:
    """The user line `event` renders as in `seat`'s conversation (None: no line). An event
    that opens a decision renders as its question for the seat it asks."""
    d = event.data
    kind = event.type
    if kind == "game_start":
        return None  # the card is in the system prompt
    if kind == "role":
        if seat is None or d.get("seat") != seat:
            return None
        return _to_you(role_line(seat, str(d.get("role")), d.get("secret")))
    if kind == "word":
        return f"[Player {event.actor}]: {d.get('word', '')}"
    if kind == "turn_start":
        return _to_you(_ASK_WORD) if seat is not None and event.actor == seat else None
    if kind == "vote_start":
        return _gm(_ASK_VOTE)
    if kind == "tie_break_request":
        if seat is not None and event.actor == seat:
            return _to_you(_ask_tie_break(d.get("tied", ())))
        return None
    if kind == "second_chance":
        return _to_you(_ASK_GUESS) if seat is not None and event.actor == seat else None
    if kind == "repair_request":
        return _to_you(f"Unusable reply: {d.get('reason', '')}. Answer again.")
    if kind == "speaking_order":
        return _gm("Speaking order: Players " + ", ".join(str(s) for s in d.get("order", ()))
                   + ".")
    if kind == "dealer":
        return _gm(f"The dealer is Player {d.get('seat')}.")
    if kind == "vote":
        return _gm(f"Player {event.actor} voted for Player {d.get('target')}.")
    if kind == "vote_result":
        top = list(d.get("top", ()))
        if len(top) == 1:
            return _gm(f"Most votes: Player {top[0]}.")
        return _gm("Tied: " + ", ".join(f"Player {s}" for s in top) + ".")
    if kind == "tie_break":
        picked = d.get("picked")
        if picked is None:
            return _gm("Nobody is accused.")
        if d.get("rule") == "dealer":
            return _gm(f"The dealer picked Player {picked}.")
        return _gm(f"Picked at random: Player {picked}.")
    if kind == "accusation":
        accused = d.get("seat")
        if accused is None:
            return None  # the tie_break line said so
        verdict = "IS" if d.get("chameleon_caught") else "is NOT"
        return _gm(f"Player {accused} is accused and {verdict} the chameleon.")
    text = str(d.get("text", ""))
    if not text:
        return None
    return _gm(text) if event.visibility.is_public else _to_you(text)


def render_event(conv: Conversation, e: Event, seat: int) -> None:
    """One event of the seat's view: its own answers as assistant turns, the rest as user
    lines. A pure function of the event and the seat, so the kit keeps each seat's
    conversation between decisions (kit/incremental.py)."""
    field = _OWN_ANSWER.get(e.type)
    if field is not None and e.actor == seat:
        conv.assistant(str(e.data.get(field, "")))
        return
    line = _line(e, seat)
    if line is not None:
        conv.user(line)


RENDERER = IncrementalRenderer(render_event)


def arranged(events: Sequence[Event], seat: int) -> Sequence[Event]:
    """The seat's view in the order its conversation shows it, which differs from the
    log's in two places:
    - its `role` event comes just before the first event that asks the seat something
      (at the end if none has yet): the public lines before it are the same for every
      seat of a game, so each seat's first request shares them with earlier requests;
    - its own `vote` comes before the other votes: the votes are cast at the same moment
      and published in seat order, and the seat's answer belongs right after the
      question it answered, where its previous request ended.
    Later events never change this order (a seat's first question, and the votes, stay
    where they are), so every request of the seat extends the previous one; a view
    where it is not so (a request built before the seat was ever asked) is rebuilt by
    the renderer, never misused."""
    role = next((e for e in events if e.type == "role"), None)
    own_vote = next((e for e in events if e.type == "vote" and e.actor == seat), None)
    if role is None and own_vote is None:
        return events
    out: list[Event] = []
    for e in events:
        if e is role or e is own_vote:
            continue
        if role is not None and _opens_for(e, seat):
            out.append(role)
            role = None
        if own_vote is not None and e.type == "vote":
            out.append(own_vote)
            own_vote = None
        out.append(e)
    out.extend(e for e in (role, own_vote) if e is not None)
    return out


# The event that opens each decision.
_OPENS = {WORD: "turn_start", VOTE: "vote_start", TIE_BREAK: "tie_break_request",
          GUESS: "second_chance"}


def _asked_in_view(decision: Decision[Any], events: Sequence[Event]) -> bool:
    """True when the view ends with the event that opens this decision for this seat
    (repair notices of this ask aside): its question is then already the last line."""
    for e in reversed(events):
        if e.type == "repair_request":
            continue
        return e.type == _OPENS.get(decision.kind) and _opens_for(e, decision.seat)
    return False


def _closing(decision: Decision[Any], events: Sequence[Event]) -> str | None:
    return None if _asked_in_view(decision, events) else _to_you(instruction(decision))


def render_messages(decision: Decision[Any]) -> list[Message]:
    """The decision's messages rendered from scratch (the reference for the kept ones)."""
    obs: ChameleonObservation = decision.observation
    return render_full(render_event, arranged(obs.events, obs.seat), obs.seat,
                       _closing(decision, obs.events))


# --- the legal moves, for a structured seat's constrained decoding ------------------------

# One word: runs of letters or digits joined by single hyphens or apostrophes (the rules'
# `_WORD`, in the ASCII letters a JSON Schema pattern and a grammar can both say).
WORD_PATTERN = "^[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*$"


def legal_moves(decision: Decision[Any], *, narrow: bool = False) -> LegalMoves | None:
    """Every answer is text: one word of at most `max_word_chars`; a vote for any player
    (1..N, as its number); the dealer's pick among the tied; a caught chameleon's guess,
    one of the card's words."""
    obs: ChameleonObservation = decision.observation
    if decision.kind == WORD:
        return LegalMoves(text={"type": "string", "pattern": WORD_PATTERN,
                                "maxLength": obs.max_word_chars})
    if decision.kind == VOTE:
        return LegalMoves(text=_one_of([str(s) for s in range(1, obs.num_players + 1)]))
    if decision.kind == TIE_BREAK and obs.tied:
        return LegalMoves(text=_one_of([str(s) for s in obs.tied]))
    if decision.kind == GUESS and obs.words:
        return LegalMoves(text=_one_of(list(obs.words)))
    return None


def _one_of(values: list[str]) -> dict[str, Any]:
    return {"type": "string", "enum": values}


class ChameleonPrompts:
    """The PromptBook that LLM seats of The Chameleon use."""

    def legal_moves(self, decision: Decision[Any], *, narrow: bool = False
                    ) -> LegalMoves | None:
        return legal_moves(decision, narrow=narrow)

    def render(self, decision: Decision[Any]) -> ChatRequest:
        obs: ChameleonObservation = decision.observation
        return ChatRequest(
            system=system_prompt(obs),
            messages=RENDERER.messages(arranged(obs.events, obs.seat), obs.seat,
                                       _closing(decision, obs.events)),
            tools=[],
        )


PROMPTS = ChameleonPrompts()

__all__ = ["GUESS", "PROMPTS", "TIE_BREAK", "VOTE", "WORD", "ChameleonPrompts"]
