"""Every word of the Elimination Game that a model reads: the system prompt, the Game
Master's lines, the two tools, and the rendering of a seat's view into a ChatRequest.

Framing (docs/rules.md §1 "Conversation framing", held for every game):
- other players and the Game Master are user turns: "[Player X]: ", "[Player X]
  (private): " for the partner in a private chat, "[GAME MASTER]: ", and
  "[GAME MASTER → you]: " for lines meant for this seat alone;
- the seat's own statements and private messages are its assistant turns; its own
  rankings and votes are shown as short assistant notes ("(my vote: Player 3)") and never
  with its reason: vote reasons reach no prompt at all (docs/rules.md §2 "Visibility");
- the system prompt holds only what never changes during a game (the rules, the seat,
  the limits); the round, the subround and who is still in go into the newest user turn,
  so a seat's requests share a growing, cacheable prefix;
- every request carries the same two tools, in the same order (a changing tool list would
  break the prefix); `tool_choice` says which one, if any, a decision wants.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from stille_post.core.errors import ParseError
from stille_post.core.events import Event
from stille_post.games.elimination.observation import Facts, Observation
from stille_post.games.elimination.rules import TieStep, keyed
from stille_post.games.kit.framing import GM, GM_TO_YOU, Conversation
from stille_post.games.kit.incremental import IncrementalRenderer
from stille_post.games.kit.votes import parse_seat
from stille_post.players.base import Action, Decision
from stille_post.providers.base import ChatRequest, LegalMoves, Tool

# Decision kinds.
PUBLIC, RANKING, PRIVATE, VOTE = "public", "ranking", "private", "vote"
TIE_BREAK, REVOTE, FINAL, JURY = "tie_break", "revote", "final", "jury"
KINDS = (PUBLIC, RANKING, PRIVATE, VOTE, TIE_BREAK, REVOTE, FINAL, JURY)
MESSAGE_KINDS = (PUBLIC, PRIVATE, TIE_BREAK, FINAL)

RANK_TOOL, VOTE_TOOL = "submit_ranking", "cast_vote"
# The longest vote reason a tool call may carry. Why a cap at all: a constrained decoder
# (llama.cpp turns the schema into a grammar) lets a small model fill a free-text field
# until the output cap cuts the JSON; with `maxLength` the call always closes. Nobody reads
# reasons but the log, so 300 characters lose nothing.
REASON_MAX_CHARS = 300


@lru_cache(maxsize=64)
def tools(num_players: int) -> tuple[Tool, ...]:
    """The two tools of a game of `num_players` (player numbers bounded to 1..n, so a
    constrained decoder cannot name player 52). Every seat of a game gets the same two, in
    the same order: the cacheable prefix stays one."""
    seat = {"type": "integer", "minimum": 1, "maximum": num_players}
    return (
        Tool(
            RANK_TOOL,
            "Rank the other remaining players by whom you most want as your private chat "
            "partner this round, most wanted first.",
            {
                "type": "object",
                "properties": {
                    "ranking": {"type": "array", "items": seat,
                                "description": "player numbers, most wanted first; every "
                                               "other remaining player once"},
                },
                "required": ["ranking"],
                "additionalProperties": False,
            },
        ),
        Tool(
            VOTE_TOOL,
            "Cast your secret vote to eliminate one player, with your private reason. Nobody "
            "ever sees the reason; only the number of votes each player received is "
            "announced.",
            {
                "type": "object",
                "properties": {
                    "target": {**seat, "description": "the player to eliminate"},
                    "reason": {"type": "string", "maxLength": REASON_MAX_CHARS,
                               "description": "why, in one sentence (never shown to anyone)"},
                },
                "required": ["target", "reason"],
                "additionalProperties": False,
            },
        ),
    )


TOOL_CHOICE = {RANKING: RANK_TOOL, VOTE: VOTE_TOOL, REVOTE: VOTE_TOOL, JURY: VOTE_TOOL}


# --- small wording helpers -----------------------------------------------------------------

def players(seats: Sequence[int]) -> str:
    """"Player 3", "Players 1 and 4", "Players 1, 2 and 5"; "nobody" for none."""
    s = [str(x) for x in seats]
    if not s:
        return "nobody"
    if len(s) == 1:
        return f"Player {s[0]}"
    return f"Players {', '.join(s[:-1])} and {s[-1]}"


def _counts(counts: Mapping[str, int] | Mapping[int, int]) -> str:
    if not counts:
        return "no vote counted"
    items = sorted(((int(k), int(v)) for k, v in counts.items()), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"Player {s}: {n}" for s, n in items)


def _votes(n: int) -> str:
    return f"{n} vote" if n == 1 else f"{n} votes"


# --- the system prompt ---------------------------------------------------------------------

@lru_cache(maxsize=256)
def system_prompt(seat: int, f: Facts) -> str:
    # Cached: a seat's system prompt never changes during a game, and bots' games ask often.
    n = f.num_players
    used = [str(w) for w in f.private_words[: f.private_subrounds]]
    limits = ", ".join(used[:-1]) + " and " + used[-1] if len(used) > 1 else "".join(used)
    if f.private_subrounds:
        middle = (
            "2. Ranking: each player privately ranks all the other remaining players by whom "
            f"they most want as a private chat partner (the {RANK_TOOL} tool). Nobody else "
            "sees your ranking.\n"
            "3. Private chats: the rankings pair players up (proposals go down each ranking; "
            "a player holds the best offer so far). Not everyone is always paired. Each "
            f"pair then talks privately: {f.private_subrounds} exchange"
            f"{'s' if f.private_subrounds > 1 else ''} of at most {limits} words; in each "
            "exchange the pair's first player writes and the partner replies. Only the two "
            "of you read your chat; everyone else only learns who chatted with whom.\n"
            "4.")
    else:
        middle = "There are no private chats in this game: everything is said in public.\n2."
    policy = ("Words beyond a limit are cut off." if f.limit_policy == "truncate" else
              "A message over its limit is sent back to you once to shorten; after that it "
              "is cut off.")
    jury_tie = ("If the jury is tied, the finalist who received more votes over the whole "
                "game is eliminated; if that is tied too, one is picked at random."
                if f.jury_tie == "cumulative" else
                "If the jury is tied, one finalist is eliminated at random.")
    return f"""You are Player {seat} in "The Elimination Game", a game of alliances, persuasion and votes among {n} players (Players 1 to {n}). Each round one player is voted out, until two remain. Then the players already voted out (the jury) decide which of the two finalists wins.

How a round runs
1. Public statement: in a random order, each remaining player makes one public statement of at most {f.public_words} words. Later speakers see the earlier statements.
{middle} Vote: at the same moment, every remaining player votes to eliminate another remaining player (the {VOTE_TOOL} tool, with a reason). Reasons are never shown to anyone, and votes are anonymous: only how many votes each player received is announced. A vote for yourself or for a player who is not in the game does not count. The player with the most votes is eliminated.
Tie: if several players share the most votes, each of them makes a short statement (at most {f.tie_break_words} words), then the other remaining players vote again, once, among the tied players only. If that is still tied, the tied player who received the most votes over the whole game is eliminated; if that is tied too, one of them is picked at random.

The final
The two finalists each make a final statement of at most {f.final_words} words. Then every eliminated player votes which finalist to ELIMINATE; the other finalist wins. {jury_tie}
Ranks: the winner is 1st, the other finalist 2nd, and everyone else ranks by how long they lasted.

Word limits are enforced. {policy}

Conversation format: public statements reach you as "[Player X]: ...", your private chat partner's messages as "[Player X] (private): ...", announcements as "{GM}: ..." or, when meant for you alone, "{GM_TO_YOU}: ...". A line that a player wrote to look like such a header is shown with "(quoted)" in front. Your own statements and messages appear as your own replies; your own rankings and votes appear as short notes such as "(my vote: Player 3)". Write statements and messages as plain text; use a tool only when asked to rank or to vote."""


# --- Game Master lines (stored as the events' `text`) ----------------------------------------

def game_start_text(n: int, subrounds: int) -> str:
    chats = (f"with {subrounds} private subround{'s' if subrounds != 1 else ''} per round"
             if subrounds else "with public statements only")
    return f"The Elimination Game begins with {players(range(1, n + 1))}, {chats}."


def round_start_text(rnd: int, active: Sequence[int], eliminated: Sequence[int]) -> str:
    out = f"Round {rnd} begins. Still in the game: {players(active)}."
    if eliminated:
        out += f" Eliminated so far: {players(eliminated)}."
    return out


_ORDER_WHAT = {"public": "Public statements", "tie_break": "Tie-break statements",
               "final": "Final statements"}


def order_text(phase: str, order: Sequence[int]) -> str:
    return f"{_ORDER_WHAT[phase]}, in this order: " + ", ".join(f"Player {s}" for s in order) + "."


_PHASE_TEXT = {
    "ranking": "Everyone now ranks the others for a private chat.",
    "private": "Private chats begin.",
    "vote": "Everyone now votes, in secret, to eliminate one player.",
    "final": "Two players remain: the final begins.",
    "jury": "The jury now votes which finalist to eliminate.",
}


def phase_text(phase: str) -> str:
    return _PHASE_TEXT[phase]


def pairing_text(pairs: Sequence[Sequence[int]], unpaired: Sequence[int]) -> str:
    if pairs:
        out = "Private chats this round: " + "; ".join(
            f"Player {a} chats with Player {b}" for a, b in pairs) + "."
    else:
        out = "No pairs formed this round: nobody chats in private."
    if unpaired:
        out += f" Not paired: {players(unpaired)}."
    return out


def ranking_text(ranking: Sequence[int]) -> str:
    return "Your ranking: " + ", ".join(f"Player {s}" for s in ranking) + "."


_STAGE_WORD = {"vote": "vote", "revote": "re-vote", "jury": "jury vote to eliminate"}


def vote_text(stage: str, target: int | None, valid: bool, invalid: str | None) -> str:
    if target is None:
        return f"You gave no usable {_STAGE_WORD[stage]}."
    note = "" if valid else f" It does not count ({invalid})."
    return f"Your {_STAGE_WORD[stage]}: Player {target}.{note}"


def vote_result_text(stage: str, counts: Mapping[str, int], invalid: int,
                     leaders: Sequence[int]) -> str:
    what = "Votes" if stage == "vote" else "Jury votes to eliminate"
    out = f"{what}: {_counts(counts)}."
    if invalid:
        out += f" {_votes(invalid).capitalize()} did not count."
    if len(leaders) == 1:
        out += f" Player {leaders[0]} has the most votes."
    else:
        out += f" Tied: {players(leaders)}."
    return out


def tie_text(stage: str, tied: Sequence[int], revoters: Sequence[int]) -> str:
    if stage == "jury":
        return f"The jury is tied between {players(tied)}."
    if revoters:
        return (f"The vote is tied between {players(tied)}. Each of them makes a short "
                f"statement, then {players(revoters)} vote again among the tied players.")
    return (f"The vote is tied between {players(tied)}, and nobody else is left to vote "
            "again.")


def tie_break_text(step: str, leaders: Sequence[int], *, counts: Mapping[str, int] | None = None,
                   invalid: int = 0, cumulative: Mapping[str, int] | None = None,
                   picked: int | None = None) -> str:
    if step == "revote":
        out = f"Re-vote: {_counts(counts or {})}."
        if invalid:
            out += f" {_votes(invalid).capitalize()} did not count."
    elif step == "cumulative":
        out = "Votes received over the whole game: " + ", ".join(
            f"Player {s}: {n}" for s, n in (cumulative or {}).items()) + "."
    else:
        return f"Still tied: Player {picked} is picked at random."
    if len(leaders) == 1:
        return out + f" Player {leaders[0]} has the most."
    return out + f" Still tied: {players(leaders)}."


def elimination_text(seat: int, stage: str, votes: int, decided_by: str) -> str:
    if stage == "jury":
        return f"The jury eliminates Player {seat} ({_votes(votes)})."
    how = {"votes": "", "revote": " after the re-vote",
           "cumulative": " on votes received over the game", "rng": " at random"}[decided_by]
    return f"Player {seat} is eliminated with {_votes(votes)}{how}."


def game_over_text(winner: int | None, status: str, reason: str | None) -> str:
    if winner is not None:
        return f"Game over: Player {winner} wins."
    why = f" ({reason})" if reason else ""
    return f"Game over: the game stopped before a winner was decided{why}."


def reveal_text(ranks: Mapping[str, int]) -> str:
    order = sorted(ranks.items(), key=lambda kv: (kv[1], int(kv[0])))
    return "Final ranks: " + ", ".join(f"{r}. Player {s}" for s, r in order) + "."


def repair_text(reason: str) -> str:
    return f"Your reply could not be used: {reason}. Please answer again."


# --- what each decision asks ----------------------------------------------------------------

def _state(obs: Observation) -> str:
    m = obs.moment
    out = f"Round {m.round}. Still in the game: {players(m.active)}."
    if m.eliminated:
        out += f" Eliminated: {players(m.eliminated)}."
    return out


def instruction(kind: str, obs: Observation) -> str:
    m = obs.moment
    # How every message is asked for: a model that sees the tools listed (they are on every
    # request, for the cacheable prefix) otherwise writes its message as a JSON call.
    as_text = f"as plain text (no tool call), at most {obs.limit_words} words"
    if kind == PUBLIC:
        return f"{_state(obs)} Public statement: it is your turn. Write it now {as_text}."
    if kind == RANKING:
        return (f"{_state(obs)} Ranking: call {RANK_TOOL} with every other remaining player "
                f"({players(obs.allowed)}), the one you most want to chat with first.")
    if kind == PRIVATE:
        return (f"{_state(obs)} Private subround {obs.subround} of "
                f"{obs.facts.private_subrounds} with Player {obs.partner}: write your private "
                f"message to Player {obs.partner} {as_text}. Only Player {obs.partner} will "
                "read it.")
    if kind == VOTE:
        return (f"{_state(obs)} Vote: call {VOTE_TOOL} with the number of the player you want "
                f"to eliminate ({players(obs.allowed)}) and your reason.")
    if kind == TIE_BREAK:
        return (f"{_state(obs)} You are tied with {players([s for s in m.tied if s != obs.seat])}. "
                f"Make your tie-break statement {as_text}: the others then vote again among "
                "the tied players.")
    if kind == REVOTE:
        return (f"{_state(obs)} Re-vote: call {VOTE_TOOL} with the number of one of the tied "
                f"players ({players(m.tied)}) to eliminate, and your reason.")
    if kind == FINAL:
        other = next((s for s in m.finalists if s != obs.seat), obs.seat)
        return (f"The final: you and Player {other} remain. The jury is "
                f"{players(sorted(m.eliminated))}. Make your final statement to the jury "
                f"{as_text}.")
    if kind == JURY:
        a, b = m.finalists
        return (f"You are on the jury. The finalists are Players {a} and {b}. Call {VOTE_TOOL} "
                "with the number of the finalist you want to ELIMINATE (the other one wins), "
                "and your reason.")
    raise ValueError(f"unknown decision kind {kind!r}")


# --- reading replies (a ParseError earns the corrective re-ask) --------------------------------

# A player number in prose: not part of a longer number or a decimal ("3.5").
_INT = re.compile(r"(?<![\d.])(\d{1,3})(?!\d|\.\d)")


def _call(action: Action, name: str) -> dict[str, Any] | None:
    """The arguments of the wanted tool call; ParseError for a malformed or foreign call."""
    for c in action.tool_calls:
        if c.malformed:
            raise ParseError(f"your {name} call could not be read ({c.malformed})")
        if c.name == name:
            return dict(c.arguments)
    if action.tool_calls:
        raise ParseError(f"call {name}, not {action.tool_calls[0].name}")
    return None


def read_ranking(action: Action) -> list[Any]:
    """The list a seat submitted. Lenient with text: a reply without the call is read as
    the player numbers it names, in order (small models often answer in text)."""
    args = _call(action, RANK_TOOL)
    if args is not None:
        ranking = args.get("ranking")
        if isinstance(ranking, str):  # "3, 5, 1" or "[3, 5, 1]" inside a string
            try:
                ranking = json.loads(ranking)
            except ValueError:
                ranking = _INT.findall(ranking)
        if not isinstance(ranking, list) or not ranking:
            raise ParseError(f"{RANK_TOOL} needs `ranking`: a list of player numbers")
        return list(ranking)
    found = _INT.findall(action.text)
    if not found:
        raise ParseError(f"no ranking: call {RANK_TOOL} with a list of player numbers")
    return [int(x) for x in found]


def read_vote(action: Action) -> tuple[int, str]:
    """(target, reason). A target that is a number but not an allowed seat is a vote that
    does not count (the engine judges it), not a malformed reply."""
    args = _call(action, VOTE_TOOL)
    if args is not None:
        target = parse_seat(args.get("target"))
        if target is None:
            raise ParseError(f"{VOTE_TOOL} needs `target`: one player number")
        reason = args.get("reason")
        return target, reason if isinstance(reason, str) else ""
    found = _INT.search(action.text)
    if not found:
        raise ParseError(f"no vote: call {VOTE_TOOL} with a player number and your reason")
    return int(found.group(1)), action.text


# --- rendering a seat's view ----------------------------------------------------------------

_OWN_NOTE = {"vote": "my vote", "revote": "my re-vote", "jury": "my jury vote to eliminate"}


def _speech(e: Event) -> str:
    text = str(e.data.get("text", ""))
    return text if text.strip() else "(said nothing)"


def render_into(conv: Conversation, e: Event, seat: int) -> None:
    t = e.type
    if t in ("public_message", "tie_break_message", "final_message", "private_message"):
        if e.actor == seat:
            conv.assistant(_speech(e))
        elif t == "private_message":
            conv.user(f"[Player {e.actor}] (private): {_speech(e)}")
        else:
            conv.user(f"[Player {e.actor}]: {_speech(e)}")
        return
    if t == "ranking" and e.actor == seat:
        conv.assistant("(my ranking: " + ", ".join(f"Player {s}" for s in e.data["ranking"])
                       + ")")
        return
    if t == "vote" and e.actor == seat:
        target = e.data.get("target")
        shown = f"Player {target}" if target is not None else "none"
        conv.assistant(f"({_OWN_NOTE[str(e.data.get('stage'))]}: {shown})")
        return
    if t in ("vote_reason", "pairing_trace") or e.visibility.seats == frozenset():
        return  # log only: never in a prompt (defence in depth; views exclude them anyway)
    text = str(e.data.get("text", ""))
    if text:
        conv.user(f"{GM}: {text}" if e.visibility.is_public else f"{GM_TO_YOU}: {text}")


RENDERER = IncrementalRenderer(render_into)


# --- the legal moves, for a structured seat's constrained decoding ------------------------

def legal_moves(decision: Decision[Any], *, narrow: bool = False) -> LegalMoves | None:
    """A vote names one of the players it may (`obs.allowed`: no self-vote, the tied on a
    re-vote, a finalist on the jury); a ranking is every other remaining player once,
    as far as JSON Schema can say it (their numbers, as many as there are, no repeats).
    Messages stay free text. Every decision of a round carries both tools' schemas for
    the round's players (the others still in), so a seat's requests list the same tools
    until someone is eliminated (a re-vote's and the jury's ballot excepted)."""
    obs: Observation = decision.observation
    others = list(obs.others)
    ballot = list(obs.allowed) if decision.kind in (VOTE, REVOTE, JURY) else others
    if not ballot or not others:
        return None
    return LegalMoves(tools={RANK_TOOL: _ranking(others), VOTE_TOOL: _vote(ballot)},
                      free=decision.kind not in (RANKING, VOTE, REVOTE, JURY))


def _ranking(seats: list[int]) -> dict[str, Any]:
    ranking = {"type": "array", "items": {"type": "integer", "enum": seats},
               "minItems": len(seats), "maxItems": len(seats), "uniqueItems": True,
               "description": "player numbers, most wanted first; every other remaining "
                              "player once"}
    return _arguments({"ranking": ranking})


def _vote(seats: list[int]) -> dict[str, Any]:
    return _arguments({"target": {"type": "integer", "enum": seats,
                                  "description": "the player to eliminate"},
                       "reason": {"type": "string", "maxLength": REASON_MAX_CHARS,
                                  "description": "why, in one sentence (never shown to "
                                                 "anyone)"}})


def _arguments(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


class EliminationPrompts:
    """The PromptBook of LLM seats."""

    def legal_moves(self, decision: Decision[Any], *, narrow: bool = False
                    ) -> LegalMoves | None:
        return legal_moves(decision, narrow=narrow)

    def render(self, decision: Decision[Any]) -> ChatRequest:
        obs: Observation = decision.observation
        # The seat's conversation is kept between its decisions and only extended: the
        # same messages as rendering every event again, at O(new events) per decision.
        messages = RENDERER.messages(obs.events, obs.seat,
                                     f"{GM_TO_YOU}: {instruction(decision.kind, obs)}")
        return ChatRequest(system=system_prompt(obs.seat, obs.facts), messages=messages,
                           tools=list(tools(obs.facts.num_players)),
                           tool_choice=TOOL_CHOICE.get(decision.kind, "none"))


PROMPTS = EliminationPrompts()


def tie_step_event(stage: str, s: TieStep) -> dict[str, Any]:
    """The data of a `tie_break` event for one step of the tie chain, its text included:
    the engine and the log importer emit the same event for the same step."""
    data: dict[str, Any] = {"stage": stage, "step": s.step, "tied": list(s.tied),
                            "leaders": list(s.leaders), "decided": s.decided}
    if s.step == "revote":
        data.update(counts=keyed(s.counts), invalid=s.invalid)
    elif s.step == "cumulative":
        data.update(cumulative=keyed(s.cumulative))
    else:
        data.update(picked=s.picked)
    data["text"] = tie_break_text(s.step, s.leaders, counts=keyed(s.counts),
                                  invalid=s.invalid, cumulative=keyed(s.cumulative),
                                  picked=s.picked)
    return data
