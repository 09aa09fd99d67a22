"""Every word of The Chameleon that a model reads: the system prompt, the Game Master's
notices, and the rendering of a seat's view into a ChatRequest.

How an LLM seat learns its role: the system prompt of every request it is sent has a
"YOUR ROLE" section, built from the private `role` event in that seat's own view. A
non-chameleon's section names the secret word; the chameleon's says it was not told.
Nothing else in any request names the secret word before the final reveal.

Framing follows RULES.md §1 "Conversation framing": other players and the Game Master
are user turns ("[Player X]: ", "[GAME MASTER]: "), the seat's own answers are assistant
turns, and the question being asked closes the last user turn.
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
from stille_post.providers.base import ChatRequest, Message

GM = "[GAME MASTER]"
GM_TO_YOU = "[GAME MASTER → you]"

# Decision kinds the engine asks for.
WORD, VOTE, TIE_BREAK, GUESS = "word", "vote", "tie_break", "guess"

_TIE_RULES = {
    "random": "If several players share the most votes, one of them is picked at random.",
    "dealer": "If several players share the most votes, the dealer (a player drawn at the "
              "start and announced) picks which of them is accused.",
    "chameleon_wins": "If several players share the most votes, nobody is accused and the "
                      "chameleon wins.",
}


def _players(n: int) -> str:
    return f"Players 1 to {n}"


def role_section(obs: ChameleonObservation) -> str:
    return _role_section(obs.is_chameleon, obs.secret)


def _role_section(is_chameleon: bool, secret: str | None) -> str:
    if is_chameleon:
        return (
            "YOUR ROLE (private: only you were told this)\n"
            "You ARE the chameleon. You were not told the secret word. Blend in: say a word "
            "that could belong to whatever the others seem to be describing, vote for "
            "someone else, and if you are caught, work out the secret word from the words "
            "you heard."
        )
    return (
        "YOUR ROLE (private: only you were told this)\n"
        f'You are NOT the chameleon. The secret word is "{secret}". You do not know '
        "which of the others is the chameleon. Show that you know the secret word without "
        "giving it away: a word that is too obvious lets a caught chameleon name the secret "
        "word, and a word that is too vague makes the others suspect you."
    )


def system_prompt(obs: ChameleonObservation) -> str:
    return _system_prompt(obs.seat, obs.num_players, obs.category, obs.words, obs.tie_rule,
                          obs.role, obs.secret)


@lru_cache(maxsize=4096)
def _system_prompt(seat: int, n: int, category: str, words: tuple[str, ...], tie_rule: str,
                   role: str, secret: str | None) -> str:
    """The rules, then this game's card, then who the seat is and its role (built once
    per seat and game: every request of the seat sends the same text).

    The order is for prompt caching (providers cache the longest prefix any earlier
    request shared): the rules are the same in every game of a tournament, the card is
    the same for every seat of a game, and only the last paragraph differs per seat."""
    paragraphs = [
        f'"The Chameleon" is a word game for {n} players ({_players(n)}). One player is '
        "secretly the chameleon. Everyone else shares a secret word that the chameleon does "
        "not know.",
        "How the game runs\n"
        "1. Words: in a random speaking order, each player says ONE word connected to the "
        "secret word. The chameleon has to say a word too.\n"
        "2. Vote: then everyone, at the same moment, names the player they believe is the "
        "chameleon. You may name any player. The player named most often is accused. "
        f"{_TIE_RULES.get(tie_rule, '')}\n"
        "3. Second chance: if the accused player is the chameleon, it gets one guess at the "
        "secret word, which must be one of the possible secret words of the card.\n"
        "Who wins: the other players win only if they accuse the chameleon AND its guess is "
        "wrong. The chameleon wins if anyone else is accused, or if it names the secret word.",
        "How to answer: a word is one word (letters, digits, hyphens and apostrophes; no "
        "spaces). A vote is one player number. Give no explanation. An unusable answer is "
        "sent back to you with the reason; if it is still unusable the game is void.",
        f'Conversation format: announcements arrive as "{GM}: ...", or "{GM_TO_YOU}: ..." '
        'when meant for you alone; other players\' words as "[Player X]: word". Your own '
        "earlier answers appear as your own replies.",
        "This game's card\n"
        f"- Category: {category}\n"
        f"- The {len(words)} possible secret words: {', '.join(words)}",
        f"You are Player {seat}.\n\n{_role_section(role == 'chameleon', secret)}",
    ]
    return "\n\n".join(paragraphs)


def instruction(decision: Decision[Any]) -> str:
    obs: ChameleonObservation = decision.observation
    if decision.kind == WORD:
        return f"It is your turn, Player {obs.seat}. Reply with your one word."
    if decision.kind == VOTE:
        hint = " You are the chameleon: name someone else." if obs.is_chameleon else ""
        return ("Vote now: reply with the number of the player you believe is the chameleon "
                f"(1 to {obs.num_players}), and nothing else.{hint}")
    if decision.kind == TIE_BREAK:
        tied = ", ".join(f"Player {s}" for s in obs.tied)
        return (f"You are the dealer. The vote is tied between {tied}. Reply with the number "
                "of the one who is accused, and nothing else.")
    if decision.kind == GUESS:
        return ("You have been caught. This is your second chance: reply with the secret word, "
                f"exactly one of the {len(obs.words)} possible secret words, and nothing else.")
    raise ValueError(f"unknown decision kind {decision.kind!r}")


# --- Game Master notices (stored in events as `text`, so transcripts read on their own) ---

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


def _line(event: Event) -> str | None:
    if event.type == "role":
        return None  # the role lives in the system prompt, on every request
    if event.type == "word":
        return f"[Player {event.actor}]: {event.data['word']}"
    text = str(event.data.get("text", ""))
    if not text:
        return None
    return f"{GM}: {text}" if event.visibility.is_public else f"{GM_TO_YOU}: {text}"


def render_event(conv: Conversation, e: Event, seat: int) -> None:
    """One event of the seat's view: its own answers as assistant turns, the rest as user
    lines. A pure function of the event and the seat, so the kit keeps each seat's
    conversation between decisions (kit/incremental.py)."""
    field = _OWN_ANSWER.get(e.type)
    if field is not None and e.actor == seat:
        conv.assistant(str(e.data.get(field, "")))
        return
    line = _line(e)
    if line is not None:
        conv.user(line)


RENDERER = IncrementalRenderer(render_event)


def render_messages(events: Sequence[Event], seat: int, closing: str) -> list[Message]:
    """The seat's conversation, ending with a user turn that asks `closing`, rendered from
    scratch (the reference for the kept one)."""
    return render_full(render_event, events, seat, f"{GM_TO_YOU}: {closing}")


class ChameleonPrompts:
    """The PromptBook that LLM seats of The Chameleon use."""

    def render(self, decision: Decision[Any]) -> ChatRequest:
        obs: ChameleonObservation = decision.observation
        return ChatRequest(
            system=system_prompt(obs),
            messages=RENDERER.messages(obs.events, obs.seat,
                                       f"{GM_TO_YOU}: {instruction(decision)}"),
            tools=[],
        )


PROMPTS = ChameleonPrompts()

__all__ = ["GUESS", "PROMPTS", "TIE_BREAK", "VOTE", "WORD", "ChameleonPrompts"]
