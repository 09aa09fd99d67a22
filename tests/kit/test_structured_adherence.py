"""The kit's part in constrained decoding (games/kit/table.py, adherence.py): a refused
call keeps its arguments in the transcript, a structured decision is counted, a refused
reply that met its schema is counted apart (the rules no schema states), and two more
shapes of a call written as text are read."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stille_post.core.errors import ParseError
from stille_post.core.rng import make_rng
from stille_post.games.kit import Table
from stille_post.games.kit.adherence import AdherenceLog, SeatAdherence, call_in_text
from stille_post.players.base import Action
from stille_post.providers.base import LegalMoves, Tool, ToolCall
from tests.kit.test_adherence import Replies

GUESS = Tool("guess", "guess", {"type": "object"})
ROULETTE = Tool("russian_roulette", "spin", {"type": "object", "properties": {}})
PREFIX = LegalMoves(tools={"guess": {"type": "object", "properties": {
    "word": {"type": "string", "pattern": "^[bB][A-Za-z]*$"}}, "required": ["word"],
    "additionalProperties": False}})
DICTIONARY = {"bread", "bottle"}


def _guess(action: Action) -> str:
    calls = [c for c in action.tool_calls if c.name == "guess"]
    word = calls[0].arguments.get("word") if calls else None
    if not isinstance(word, str) or not word.startswith("b"):
        raise ParseError("your word does not start with B")
    if word not in DICTIONARY:
        raise ParseError(f"{word!r} is not in the game's dictionary")
    return word


def _ask(*actions: Action, repairs: int = 2) -> Table:
    table = Table("t", {1: Replies(*actions)}, make_rng(0), repair_attempts=repairs)

    async def run() -> None:
        table.start(None)
        await table.ask(1, "guess", observe=lambda s, e: None, validate=_guess,
                        tools=(GUESS,))

    asyncio.run(run())
    return table


def _call(word: str, legal: LegalMoves | None = PREFIX) -> Action:
    return Action(tool_calls=(ToolCall("guess", {"word": word}),), legal=legal)


def test_a_refused_call_keeps_its_arguments_in_the_repair_request() -> None:
    table = _ask(Action(tool_calls=(ToolCall("guess", {"word": "novel" * 100}),)),
                 _call("bread", None))
    repair = next(e.data for e in table.log.events if e.type == "repair_request")
    assert repair["rejected_text"] == ""  # the reply had no text
    [call] = repair["rejected_calls"]
    assert call["name"] == "guess" and call["arguments"].startswith('{"word": "novelnovel')
    assert len(call["arguments"]) == 300  # cut: a model may send an essay
    malformed = _ask(Action(tool_calls=(ToolCall("guess", {}, malformed="not JSON: '{wo'"),)),
                     _call("bread", None))
    repair = next(e.data for e in malformed.log.events if e.type == "repair_request")
    assert repair["rejected_calls"] == [{"name": "guess", "arguments": "{}",
                                         "malformed": "not JSON: '{wo'"}]


def test_a_text_refusal_keeps_its_repair_request_as_it_was() -> None:
    table = _ask(Action(text="I think it is bread"), _call("bread", None))
    repair = next(e.data for e in table.log.events if e.type == "repair_request")
    assert "rejected_calls" not in repair and repair["rejected_text"] == "I think it is bread"


def test_refusals_that_met_their_schema_are_counted_apart() -> None:
    # "novel": off the prefix, so outside the schema; "bxq": on it, not in the dictionary
    table = _ask(_call("novel"), _call("bxq"), _call("bread"))
    row = table.adherence.seats[1]
    assert row.structured == 1 and row.beyond_schema == 1
    assert dict(row.errors) == {"bad_arguments": 2}
    tally = table.adherence.to_json([])[1]
    assert tally["structured"] == 1 and tally["beyond_schema"] == 1


def test_a_free_seat_has_no_structured_counts_in_its_tally() -> None:
    table = _ask(_call("bxq", None), _call("bread", None))
    tally = table.adherence.to_json([])[1]
    assert "structured" not in tally and "beyond_schema" not in tally
    assert tally["errors"] == {"bad_arguments": 1}


def test_structured_counts_add_up_and_read_back() -> None:
    log = AdherenceLog([1])
    log.record(1, [], None, structured=True)
    log.record(1, ["bad_arguments"], None, structured=True, beyond_schema=1)
    log.record(1, [], None)
    row = SeatAdherence.from_json(log.to_json([])[1])
    assert row is not None and (row.decisions, row.structured, row.beyond_schema) == (3, 2, 1)
    total = SeatAdherence()
    total.add(row)
    total.add(row)
    assert (total.structured, total.beyond_schema) == (4, 2)
    assert SeatAdherence.from_json({"structured": "x", "beyond_schema": -2}) == SeatAdherence()


@pytest.mark.parametrize(("text", "name", "arguments"), [
    # Qwen's roulette without "arguments", which was kept as a public message
    ('```json\n{"name": "russian_roulette"}\n```', "russian_roulette", {}),
    ('{"name": "russian_roulette" }', "russian_roulette", {}),
    # a call wrapped in <tools> instead of <tool_call>
    ('<tools>\n{"name": "guess", "arguments": {"word": "bread"}}\n</tools>', "guess",
     {"word": "bread"}),
    ('<tool_call>{"name": "guess", "arguments": {"word": "bread"}}</tool_call>', "guess",
     {"word": "bread"}),
])
def test_calls_written_as_text_in_more_shapes(text: str, name: str,
                                              arguments: dict[str, Any]) -> None:
    found = call_in_text(text)
    assert found is not None and found.name == name and found.arguments == arguments
    assert found.malformed is None


def test_text_that_only_mentions_a_name_is_no_call() -> None:
    for text in ('{"name": "russian_roulette", "why": 1}', 'I say {"name": "x"}',
                 '<tools>guess</tools>', '{"named": "x"}'):
        assert call_in_text(text) is None, text


def test_a_written_call_without_arguments_is_taken_as_that_call() -> None:
    taken: list[Action] = []

    def turn(action: Action) -> Action:
        if not action.tool_calls and not action.text:
            raise ParseError("empty")
        taken.append(action)
        return action

    table = Table("t", {1: Replies(Action(text='```json\n{"name": "russian_roulette"}\n```'))},
                  make_rng(0))

    async def run() -> None:
        table.start(None)
        await table.ask(1, "turn", observe=lambda s, e: None, validate=turn,
                        tools=(ROULETTE,))

    asyncio.run(run())
    assert taken[0].text == "" and taken[0].tool_calls[0].name == "russian_roulette"
