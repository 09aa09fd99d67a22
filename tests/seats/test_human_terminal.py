"""A person at the terminal (`--players human,...`), through a pseudo-terminal: a whole
game of each game, the person seeing only their own seat's view; invalid input explained
and asked again; Ctrl-C ends the game as aborted with a valid transcript."""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.seats.ptyplay import Session, last, run
from tests.slowparams import fast_only

pytestmark = pytest.mark.heavy  # a few seconds: handed out first (conftest.py)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _events(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    return lines[0], lines[1:-1], lines[-1]


def _allows(event: Mapping[str, Any], seat: int) -> bool:
    vis = event["visibility"]
    return vis == "public" or seat in vis


def assert_saw_only_its_own_view(path: Path, seat: int, output: str) -> int:
    """No text of an event the seat may not see (sentences, as the conformance suite
    checks for models) was printed, unless the seat also saw it. Returns how many
    private sentences were checked, so a test can insist there were some."""
    _, events, _ = _events(path)
    seen = {s for e in events if _allows(e, seat) for s in _strings(e["data"])}
    checked = 0
    for e in events:
        if _allows(e, seat):
            continue
        for sentence in {s for s in _strings(e["data"]) if len(s) >= 12 and " " in s.strip()}:
            if sentence in seen:
                continue
            checked += 1
            assert sentence not in output, (
                f"seat {seat} was shown {sentence!r} from a {e['type']} event for "
                f"{e['visibility']}")
    return checked


class Person:
    """Answers each prompt from what the seat was shown."""

    def __init__(self) -> None:
        self.rejected = 0
        self.tried: set[str] = set()

    def __call__(self, text: str, session: Session) -> str | None:
        tail = text[-2500:]
        prompt = tail.rsplit("\n", 1)[-1]
        if "not accepted" in tail.rsplit(">>>", 1)[-1]:
            self.rejected = tail.count("not accepted")
        if prompt.startswith("player number"):
            choices = last(r"Choose a player: (" + _SEAT_LIST + ")", text)
            assert choices, tail
            return re.findall(r"\d+", choices.group(1))[0]
        if prompt.startswith("choice number"):
            return "0" if "0. no tool" in tail else "1"
        if prompt.lstrip().startswith(("target", "player_id")):
            return _players(tail)[0]
        if prompt.lstrip().startswith("ranking"):
            return ", ".join(_players(tail))
        if prompt.lstrip().startswith("reason"):
            return "a feeling"
        if prompt.lstrip().startswith("model_id"):
            return "gpt-5"
        if prompt.lstrip().startswith("word"):
            return self._word(text)
        if prompt.lstrip().startswith("clue"):
            return "think about it"
        if "Guess the secret word" in tail:
            card = last(r"The card: ([a-z' ,-]+)\.", text)
            assert card, tail
            return card.group(1).split(",")[0].strip()
        if "say your word" in tail.lower() or "your word" in tail.lower():
            return "apple"
        return "hello everyone"

    def _word(self, text: str) -> str:
        """A dictionary word with the revealed prefix, not tried before (a refused one is
        explained, and the next is tried)."""
        prefix = last(r"starts with ([A-Za-z]+)", text)
        assert prefix, text[-2000:]
        start = prefix.group(1).lower()
        for word in _common_words():
            if word.startswith(start) and word not in self.tried:
                self.tried.add(word)
                return word
        raise AssertionError(f"no word left for {start!r}")


@functools.lru_cache(maxsize=1)
def _common_words() -> list[str]:
    import wordfreq

    return [w for w in wordfreq.top_n_list("en", 3000) if w.isalpha() and len(w) >= 4]


# A list of seats as the terminal prints it: "1, 2 (you), 3".
_SEAT_LIST = r"\d+(?: \(you\))?(?:, \d+(?: \(you\))?)*"


def _players(text: str) -> list[str]:
    found = last(r"players: (" + _SEAT_LIST + ")", text)
    assert found, text[-1500:]
    return re.findall(r"\d+", found.group(1))


# The Chameleon's whole game is played by test_invalid_input_is_explained_and_asked_again.
GAMES = {
    "stille-post": (["--players", "human,detective,random,cautious", "--max-rounds", "1"], 1),
    "elimination": (["--players", "human,bot,bot,bot", "--private-subrounds", "1"], 1),
    "connections": (["--players", "frequency,human,frequency", "--max-attempts", "4"], 2),
}


@pytest.mark.parametrize("game", fast_only(sorted(GAMES), {"stille-post"}))  # all: nox -s slow
def test_a_person_plays_a_whole_game_seeing_only_their_view(game: str, tmp_path: Path) -> None:
    args, seat = GAMES[game]
    if game == "connections":  # a small dictionary: the full one takes seconds to load
        words = tmp_path / "words.txt"
        words.write_text("\n".join(_common_words()) + "\n", encoding="utf-8")
        args = [*args, "--dictionary", str(words)]
    out = tmp_path / "game.jsonl"
    session = run(["play", game, *args, "--seed", "3", "--out", str(out)], Person())
    assert session.status == 0, session.output[-3000:]
    header, events, result = _events(out)
    assert result["status"] == "completed"
    assert header["seats"][str(seat)]["player"] == "human"
    assert session.typed, "the person was asked nothing"
    assert any(e["actor"] == seat for e in events), "the person's answers made no move"
    checked = assert_saw_only_its_own_view(out, seat, session.output)
    if game in ("elimination", "connections"):
        # The assertion has teeth: there were other seats' secrets (the other pair's
        # chat; the setter's word, clue words), and printing one fails it.
        assert checked > 0
        hidden = next(e for e in events if e["visibility"] != "public"
                      and not _allows(e, seat) and len(str(e["data"].get("text", ""))) >= 12)
        with pytest.raises(AssertionError):
            assert_saw_only_its_own_view(out, seat, session.output + hidden["data"]["text"])


def test_invalid_input_is_explained_and_asked_again(tmp_path: Path) -> None:
    answers = iter(["two words", "apple", "9", "x", "2"])

    def person(text: str, session: Session) -> str | None:
        if "Guess the secret word" in text[-600:]:
            card = last(r"The card: ([a-z' ,-]+)\.", text)
            return card.group(1).split(",")[0] if card else "x"
        return next(answers, "1")

    out = tmp_path / "game.jsonl"
    session = run(["play", "chameleon", "--players", "human,bot,bot,bot", "--seed", "3",
                   "--out", str(out)], person)
    assert session.status == 0, session.output[-2000:]
    assert "not accepted: the reply has 2 words" in session.output
    assert "not accepted: answer with one player number: 1, 2, 3, 4" in session.output
    header, events, result = _events(out)
    assert result["status"] == "completed"
    assert header["seats"]["1"]["player"] == "human"
    assert_saw_only_its_own_view(out, 1, session.output)
    # the engine saw only the valid answers: no re-ask, no void game
    assert not any(e["type"] in ("repair_request", "invalid") for e in events)
    words = [e for e in events if e["type"] == "word" and e["actor"] == 1]
    assert [e["data"]["word"] for e in words] == ["apple"]


def test_ctrl_c_ends_the_game_as_aborted_with_a_valid_transcript(tmp_path: Path) -> None:
    out = tmp_path / "game.jsonl"
    session = run(["play", "chameleon", "--players", "human,bot,bot,bot", "--seed", "3",
                   "--out", str(out)], lambda text, s: None)
    assert session.status == 1, session.output[-2000:]
    assert "Traceback" not in session.output
    assert re.search(r"game aborted: Player 1 \(human\) left the game: interrupted \(Ctrl-C\)",
                     session.output)
    header, events, result = _events(out)
    assert result["status"] == "aborted"
    assert result["reason"] == "Player 1 (human) left the game: interrupted (Ctrl-C)"
    assert header["seats"]["1"]["player"] == "human"
    assert events and all("seq" in e for e in events)


def _after_last_answer(output: str) -> str:
    """What the screen showed after the person's last answer."""
    return re.split(r"> [^\n]*\n", output)[-1]


def _visible_texts_from(path: Path, seat: int, first_seq: int) -> list[str]:
    _, events, _ = _events(path)
    return [str(e["data"]["text"]) for e in events
            if e["seq"] >= first_seq and _allows(e, seat) and e["data"].get("text")]


def test_the_terminal_seat_is_shown_how_the_chameleon_ended(tmp_path: Path) -> None:
    """After the person's vote, the screen shows every vote, the verdict, the game over
    line and the reveal with the secret word, in the order they happened (issue 40,
    item 8); the web seat showed them, the terminal jumped to the table."""
    answers = iter(["apple", "2"])
    out = tmp_path / "game.jsonl"
    session = run(["play", "chameleon", "--players", "human,bot,bot,bot", "--seed", "3",
                   "--out", str(out)], lambda text, s: next(answers, "1"))
    assert session.status == 0, session.output[-2000:]
    _, events, result = _events(out)
    votes = [e for e in events if e["type"] == "vote"]
    assert len(votes) == 4
    expected = _visible_texts_from(out, 1, votes[0]["seq"])
    tail = _after_last_answer(session.output)
    assert tail.index("--- the rest of the game, as Player 1 saw it ---") < tail.index(
        expected[0])
    where = [tail.index(text) for text in expected]
    assert where == sorted(where), expected
    secret = result["summary"]["details"]["secret"]
    for shown in ("Player 1 voted for Player 2.", "Player 1 is accused",
                  f"The secret word was {secret}."):
        assert shown in tail, tail
    assert tail.index(f"The secret word was {secret}.") < tail.index("result: completed")
    assert_saw_only_its_own_view(out, 1, session.output)


def test_the_terminal_seat_is_shown_the_identity_reveal(tmp_path: Path) -> None:
    out = tmp_path / "game.jsonl"
    args, seat = GAMES["stille-post"]
    session = run(["play", "stille-post", *args, "--seed", "3", "--out", str(out)], Person())
    assert session.status == 0, session.output[-3000:]
    _, events, _ = _events(out)
    reveal = next(e for e in events if e["type"] == "reveal")
    tail = _after_last_answer(session.output)
    assert reveal["data"]["text"] in tail
    for model in reveal["data"]["identities"].values():
        assert f"was {model}" in tail
    assert_saw_only_its_own_view(out, seat, session.output)


def test_while_another_seat_thinks_the_terminal_says_whom_it_waits_for(tmp_path: Path) -> None:
    """A seat that takes 1.5 s per answer (a slow model): the screen says so instead of
    staying blank; bots, which answer at once, are never announced."""
    answers = iter(["apple", "2"])

    def person(text: str, session: Session) -> str | None:
        if text.endswith("player number> "):
            time.sleep(1.3)  # thinks as long as the slow seat: no notice over the question
        return next(answers, "1")

    out = tmp_path / "game.jsonl"
    session = run(["play", "chameleon", "--players",
                   "human,python:tests.seats.bad_agents:Slow,bot,bot", "--seed", "3",
                   "--out", str(out)], person)
    assert session.status == 0, session.output[-2000:]
    assert "(waiting for Player 2…)" in session.output
    assert "waiting for Player 3" not in session.output
    assert "waiting for Player 4" not in session.output
    # never in the middle of a question: each notice is a line of its own
    for line in session.output.splitlines():
        if "waiting for" in line:
            assert line.strip() == "(waiting for Player 2…)", line


def test_only_seats_that_take_time_are_watched() -> None:
    """Bots answer at once: the host leaves them as they are (a bot tournament's fast
    path, `is_instant`, stays); a model or agent seat is wrapped, and still itself."""
    from stille_post.players.base import is_instant
    from stille_post.players.humans import HumanHost, TerminalSeat

    class Bot:
        name = "bot:x"
        instant = True

    class Model:
        name = "openai:m"
        provider = "the provider"

    host = HumanHost(terminal=TerminalSeat())
    host.terminal.seats = [1]  # type: ignore[union-attr]
    bot, model, me = Bot(), Model(), Model()
    seated = host.watched({1: me, 2: bot, 3: model})  # type: ignore[dict-item]
    assert seated[1] is me and seated[2] is bot and is_instant(seated[2])
    assert seated[3] is not model and seated[3].name == "openai:m"
    assert seated[3].provider == "the provider"  # type: ignore[attr-defined]
    assert HumanHost().watched({3: model}) == {3: model}  # type: ignore[dict-item]


def test_the_persons_own_seat_is_marked_in_every_list_of_players() -> None:
    """A vote for yourself is legal in some games: the list shows your seat, marked, so
    it is never chosen by mistake (as the web page marks it)."""
    import asyncio
    import io

    from stille_post.players.forms import Choice, Form
    from stille_post.players.humans import TerminalSeat

    vote = Form(seat=2, kind="vote", instruction="Vote.", message="required", choices=(),
                tool_required=False, seats=(1, 2, 3), seat_answer=True, word_limit=None)
    out = io.StringIO()
    seat = TerminalSeat(out=out, inp=io.StringIO("3\n"))
    assert asyncio.run(seat._message(vote)) == "3"
    assert "Choose a player: 1, 2 (you), 3\n" in out.getvalue()

    from stille_post.players.forms import Argument
    target = Argument(name="target", kind="seat", description="", required=True)
    form = Form(seat=1, kind="vote", instruction="Vote.", message="none",
                choices=(Choice(number=1, tool="vote", description="vote", arguments=(target,)),),
                tool_required=True, seats=(1, 2), seat_answer=False, word_limit=None)
    out = io.StringIO()
    seat = TerminalSeat(out=out, inp=io.StringIO("2\n"))
    choice, arguments = asyncio.run(seat._tool(form))
    assert choice is not None and choice.tool == "vote" and arguments == {"target": 2}
    assert "players: 1 (you), 2" in out.getvalue()


def test_input_that_ends_after_the_game_prints_no_traceback() -> None:
    """The terminal's reader thread outlives the game's loop (a person presses Ctrl-D, or
    the window closes, after the result table): its last line has nobody to go to, and
    the thread ends quietly instead of printing a RuntimeError traceback."""
    import asyncio
    import os
    import threading

    from stille_post.players.humans import TerminalSeat

    read_end, write_end = os.pipe()
    seat = TerminalSeat(inp=os.fdopen(read_end, "r"))

    async def game() -> None:
        seat._start()  # the reader thread waits for a line

    raised: list[BaseException | None] = []
    before = threading.excepthook
    threading.excepthook = lambda args: raised.append(args.exc_value)
    try:
        asyncio.run(game())  # the game ends, its loop is closed
        os.write(write_end, b"late line\n")
        os.close(write_end)
        assert seat._reader is not None
        seat._reader.join(timeout=5)
        assert not seat._reader.is_alive()
    finally:
        threading.excepthook = before
    assert raised == []
