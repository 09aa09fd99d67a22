"""People at the table: the `human` seat (this terminal) and the `web` seat (a local page).

A person's seat is a `Player` like any other: the engine hands it a `Decision` with the
seat's own observation and cannot tell who answers. What the person is shown is the
request an LLM in that seat would be sent (players/forms.py), so the isolation the
conformance suite checks for models holds for people too.

People play only inside `stille-post play`, which makes a `HumanHost` current for the
game (`hosting`). A seat spec `human`/`web` anywhere else (a tournament, a script) is
refused in one line before any game starts.

Ctrl-C, SIGTERM or SIGHUP (caught by `play`, cli/play.py) while a person is asked, or
closing the input, ends the game as `aborted` with its reason (`HumanHost.interrupt`); the
engine then writes the closing events and the result line as for any abort, so the
transcript stays valid.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from stille_post.core.errors import GameAborted, UsageError
from stille_post.players.base import Action, Decision, Player, PromptBook, is_instant
from stille_post.players.forms import (
    Choice,
    EventStyle,
    Form,
    Invalid,
    View,
    action_of,
    build_form,
    check_message,
    engine_check,
    event_line,
    message_line,
    read_argument,
    word_count,
)
from stille_post.players.specs import SeatSpec

if TYPE_CHECKING:
    from stille_post.core.events import Event
    from stille_post.players.web import WebSeats

# A person thinks for as long as they like: games with a person get this answer deadline
# unless the user sets one (`--set decision_timeout_s=...`).
HUMAN_DECISION_TIMEOUT_S = 7 * 24 * 3600.0
# After this long, a person waiting for another seat is told whom they wait for.
WAITING_NOTICE_S = 1.0


class HumanLeft(Exception):
    """The person stopped the game (Ctrl-C, closed input, closed page)."""


class SeatInterface(Protocol):
    async def answer(self, seat: int, rules: str, fresh: list[str], form: Form,
                     check: Callable[[Action], None]) -> Action: ...


class HumanPlayer:
    """A seat played by a person through `interface`."""

    def __init__(self, prompts: PromptBook, seat: int, num_players: int,
                 interface: SeatInterface, *, name: str) -> None:
        self.prompts = prompts
        self.seat = seat
        self.num_players = num_players
        self.interface = interface
        self.name = name
        self.view = View()

    async def decide(self, decision: Decision[Any]) -> Action:
        request = self.prompts.render(decision)
        rules, fresh = self.view.update(request)
        form = build_form(decision, request, self.num_players)
        try:
            return await self.interface.answer(
                self.seat, rules, [message_line(m) for m in fresh], form,
                lambda action: engine_check(decision, action))
        except HumanLeft as exc:
            raise GameAborted(f"Player {self.seat} ({self.name}) left the game: {exc}") from None


# --- the terminal -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Left:
    reason: str  # why the person left: "interrupted (Ctrl-C)", the terminal closed, ...


_CLOSED = object()


class TerminalSeat:
    """Questions and answers on this terminal, one line at a time.

    Lines are read by a daemon thread (so that simultaneous decisions of other seats
    keep running while a person types, and an unanswered read never holds the process
    at exit); a signal while the person is asked reaches the seat through `leave`."""

    def __init__(self, out: TextIO | None = None, inp: TextIO | None = None,
                 vocabulary: Mapping[str, EventStyle] | None = None) -> None:
        self.out = out or sys.stdout
        self.inp = inp or sys.stdin
        self.lines: asyncio.Queue[Any] | None = None
        self.waiting = False  # a prompt is on the screen, waiting for a line
        self._reader: threading.Thread | None = None
        self.vocabulary = dict(vocabulary or {})
        self.seats: list[int] = []  # the seats this terminal answers for
        # What the seats may see of the game since the person was last asked: a question
        # shows it in its own words (the request), the end of the game shows it here.
        self.unseen: list[str] = []
        self.asking = False
        self.thinking: dict[int, float] = {}  # other seats being asked -> since when
        self.announced: set[int] = set()

    # --- what the seat sees when it is not asked ------------------------------------------

    def observe(self, event: Event) -> None:
        """An event of the game: kept, as the seat would read it, if the seat may see it
        (the same rule as the engine's; the web page uses it too)."""
        kind = self.vocabulary.get(event.type)
        if kind is not None and kind.generic == "silent":
            return
        seat = next((s for s in self.seats if event.visibility.allows(s)), None)
        if seat is None:
            return
        line = event_line(event, kind, seat, several=len(self.seats) > 1)
        if line:
            self.unseen.append(line)

    def show_the_end(self) -> None:
        """Everything the seat may see that came after its last question: the last
        moves, the votes, the verdict and the reveal."""
        if not self.unseen:
            return
        who = " and ".join(f"Player {s}" for s in self.seats)
        self.say(f"\n--- the rest of the game, as {who} saw it ---")
        for line in self.unseen:
            self.say(line)
        self.unseen.clear()

    def thinking_started(self, seat: int) -> None:
        self.thinking[seat] = time.monotonic()
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().call_later(WAITING_NOTICE_S, self.announce_waiting)

    def thinking_ended(self, seat: int) -> None:
        self.thinking.pop(seat, None)
        self.announced.discard(seat)

    def announce_waiting(self) -> None:
        """"waiting for Player N" for each other seat asked this long ago and still
        answering, once per question; never over a question of our own."""
        if self.asking:
            return
        now = time.monotonic()
        due = sorted(s for s, since in self.thinking.items()
                     if now - since >= WAITING_NOTICE_S * 0.99 and s not in self.announced)
        if due:
            self.announced.update(due)
            names = " and ".join(f"Player {s}" for s in due)
            with contextlib.suppress(HumanLeft):  # the terminal is gone: nobody to tell
                self.say(f"(waiting for {names}…)")

    def say(self, text: str = "") -> None:
        self._write(text + "\n")

    def _write(self, text: str) -> None:
        """A write to a terminal that is gone (its window closed: EIO) is the person
        leaving, not a bug of the game."""
        try:
            self.out.write(text)
            self.out.flush()
        except OSError:
            raise HumanLeft("the terminal was closed") from None

    def _start(self) -> asyncio.Queue[Any]:
        if self.lines is not None:
            return self.lines
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[Any] = asyncio.Queue()
        self.lines = lines

        def read() -> None:
            while True:
                try:
                    line = self.inp.readline()
                except (OSError, ValueError):
                    line = ""
                item = line.rstrip("\r\n") if line else _CLOSED
                try:
                    loop.call_soon_threadsafe(lines.put_nowait, item)
                except RuntimeError:  # the game is over and its loop closed: nobody reads
                    return
                if not line:
                    return

        self._reader = threading.Thread(target=read, name="stille-post-human", daemon=True)
        self._reader.start()
        return lines

    def leave(self, reason: str) -> bool:
        """The person leaves (a signal): the question on the screen ends the game with
        `reason`. False when nobody is being asked here."""
        if not self.waiting or self.lines is None:
            return False
        self.lines.put_nowait(_Left(reason))
        return True

    async def line(self, prompt: str) -> str:
        lines = self._start()
        self._write(prompt)
        self.waiting = True
        try:
            got = await lines.get()
        finally:
            self.waiting = False
        if isinstance(got, _Left):
            with contextlib.suppress(HumanLeft):  # a closed terminal
                self.say()
            raise HumanLeft(got.reason)
        if got is _CLOSED:
            raise HumanLeft("the input was closed")
        return str(got)

    async def answer(self, seat: int, rules: str, fresh: list[str], form: Form,
                     check: Callable[[Action], None]) -> Action:
        self.asking = True
        self.unseen.clear()  # the question's own lines tell what happened since
        try:
            return await self._answer(seat, rules, fresh, form, check)
        finally:
            self.asking = False
            self.announce_waiting()

    async def _answer(self, seat: int, rules: str, fresh: list[str], form: Form,
                      check: Callable[[Action], None]) -> Action:
        if rules:
            self.say(f"\n=== The rules and your private information (Player {seat}) ===")
            self.say(rules)
        if fresh:
            self.say("\n--- what you have seen since your last answer ---")
            for line in fresh:
                self.say(line)
        self.say(f"\n>>> Your decision ({form.kind}), Player {seat}")
        if form.repair:
            self.say(f"(the game asks again: {form.repair})")
        while True:
            try:
                text = await self._message(form)
                choice, arguments = await self._tool(form)
                action = action_of(form, text, choice, arguments)
                check(action)
                return action
            except Invalid as exc:
                self.say(f"not accepted: {exc}. Please answer again.")

    async def _message(self, form: Form) -> str:
        if form.message == "none":
            return ""
        if form.seat_answer:
            self.say("Choose a player: " + _seat_list(form))
            prompt = "player number> "
        else:
            notes = [f"at most {form.word_limit} words"] if form.word_limit else []
            if form.message == "optional":
                notes.append("Enter for none")
            prompt = f"your answer ({', '.join(notes)})> " if notes else "your answer> "
        while True:
            raw = await self.line(prompt)
            try:
                text = check_message(raw, form)
            except Invalid as exc:
                self.say(f"not accepted: {exc}. Please answer again.")
                continue
            if not form.seat_answer and text:
                limit = f" of {form.word_limit}" if form.word_limit else ""
                self.say(f"({word_count(text)} words{limit})")
            return text

    async def _tool(self, form: Form) -> tuple[Choice | None, dict[str, Any]]:
        if not form.choices:
            return None, {}
        self.say("Tools:" if not form.tool_required else "Choose one:")
        if not form.tool_required:
            self.say("  0. no tool")
        for c in form.choices:
            args = ", ".join(f"{a.name}: {a.kind}" for a in c.arguments)
            self.say(f"  {c.number}. {c.tool}({args}) - {c.description}")
        numbers = {c.number: c for c in form.choices}
        while True:
            only = len(form.choices) == 1 and form.tool_required
            raw = "1" if only else await self.line("choice number> ")
            try:
                n = int(raw.strip())
            except ValueError:
                self.say(f"not accepted: give a number from the list, got {raw!r}")
                continue
            if n == 0 and not form.tool_required:
                return None, {}
            if n in numbers:
                break
            self.say("not accepted: that number is not in the list")
        choice = numbers[n]
        arguments: dict[str, Any] = {}
        for arg in choice.arguments:
            hint = arg.description
            if arg.kind in ("seat", "seats"):
                players = _seat_list(form)
                hint = f"{hint}; players: {players}" if hint else f"players: {players}"
            if arg.kind == "seats":
                hint += "; separated by commas"
            while True:
                raw = await self.line(f"  {arg.name} ({hint})> ")
                try:
                    arguments[arg.name] = read_argument(arg, raw, form)
                    break
                except Invalid as exc:
                    self.say(f"not accepted: {exc}. Please answer again.")
        return choice, arguments


def _seat_list(form: Form) -> str:
    """The seats a person may name, their own marked: a vote for yourself is legal in
    some games, so it is shown, but never by mistake."""
    return ", ".join(f"{s} (you)" if s == form.seat else str(s) for s in form.seats)


# --- the host ---------------------------------------------------------------------------


@dataclass
class HumanHost:
    """The people of one `stille-post play`: this terminal, and the web page if any."""

    port: int | None = None
    vocabulary: Mapping[str, EventStyle] = field(default_factory=dict)
    terminal: TerminalSeat | None = None
    web: WebSeats | None = None
    seats: dict[int, str] = field(default_factory=dict)  # seat -> "terminal" | "web"

    def interface(self, seat: int, spec: SeatSpec) -> SeatInterface:
        self.seats[seat] = str(spec.human)
        if spec.human == "terminal":
            if self.terminal is None:
                self.terminal = TerminalSeat(vocabulary=self.vocabulary)
            self.terminal.seats = sorted({*self.terminal.seats, seat})
            return self.terminal
        if self.web is None:
            from stille_post.players.web import WebSeats

            self.web = WebSeats(port=self.port, vocabulary=self.vocabulary)
        return self.web.seat(seat)

    async def start_web(self, announce: Callable[[int, str], None] | None = None) -> str:
        """Serve the web seats' pages now (before the game); `announce(seat, url)` is told
        each seat's own URL as the seat is made. Returns the server's address."""
        if self.web is None:
            from stille_post.players.web import WebSeats

            self.web = WebSeats(port=self.port, vocabulary=self.vocabulary)
        self.web.announce = announce
        return await self.web.start()

    def interrupt(self, reason: str) -> bool:
        """A signal (cli/play.py): every person being asked leaves with `reason`, so the
        game ends through the engine (closing events, placements). False when nobody is
        being asked: the caller stops the game itself."""
        left = self.terminal.leave(reason) if self.terminal is not None else False
        if self.web is not None:
            left = self.web.leave(HumanLeft(reason)) or left
        return left

    def observe(self, event: Event) -> None:
        """Every event of the game, as it happens: the web page shows each seat the ones
        it may see, and the terminal keeps them for the end of the game."""
        if self.web is not None:
            self.web.observe(event)
        if self.terminal is not None:
            self.terminal.observe(event)

    def watched(self, players: Mapping[int, Player]) -> dict[int, Player]:
        """The game's players, those that take time (models, agents, other people) told
        to the terminal and the web pages while they think, so that each can say whom it
        waits for."""
        seated: dict[int, Player] = {}
        for seat, player in players.items():
            # the person at this terminal is not told about their own turn
            told: list[TurnWatcher] = [
                w for w in (self.terminal, self.web)
                if w is not None and not (w is self.terminal and seat in w.seats)]
            seated[seat] = player if is_instant(player) or not told \
                else _Announced(player, seat, told)
        return seated

    async def aclose(self) -> None:
        if self.terminal is not None:
            with contextlib.suppress(HumanLeft):  # the terminal is gone: nobody to show
                self.terminal.show_the_end()
        if self.web is not None:
            await self.web.aclose()


_HOST: contextvars.ContextVar[HumanHost | None] = contextvars.ContextVar(
    "stille_post_human_host", default=None)


@contextmanager
def hosting(host: HumanHost) -> Iterator[HumanHost]:
    token = _HOST.set(host)
    try:
        yield host
    finally:
        _HOST.reset(token)


def human_player(prompts: PromptBook, seat: int, num_players: int,
                 spec: SeatSpec) -> HumanPlayer:
    """The player of a `human`/`web` seat, answered through the current host."""
    host = _HOST.get()
    if host is None:
        raise UsageError(f"seat {seat} is a {spec.raw!r} seat: people play only in "
                         "`stille-post play` (tournaments take bots, models and agents)")
    return HumanPlayer(prompts, seat, num_players, host.interface(seat, spec),
                       name=spec.label)


def announce_turns(players: Mapping[int, Player]) -> Mapping[int, Player]:
    """The players as the game kit seats them: unchanged, unless a person plays at this
    terminal (`HumanHost.watched`)."""
    host = _HOST.get()
    return players if host is None else host.watched(players)


class TurnWatcher(Protocol):
    """A screen that says whom the game waits for (the terminal, the web pages)."""

    def thinking_started(self, seat: int) -> None: ...

    def thinking_ended(self, seat: int) -> None: ...


class _Announced:
    """A player that tells the people's screens when it starts and stops thinking;
    otherwise the player itself."""

    def __init__(self, inner: Player, seat: int, watchers: list[TurnWatcher]) -> None:
        self.inner = inner
        self.name = inner.name
        self.seat = seat
        self.watchers = watchers

    async def decide(self, decision: Decision[Any]) -> Action:
        for watcher in self.watchers:
            watcher.thinking_started(self.seat)
        try:
            return await self.inner.decide(decision)
        finally:
            for watcher in self.watchers:
                watcher.thinking_ended(self.seat)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)




def has_people(specs: list[str]) -> set[str]:
    """Which kinds of person the raw seat specs name ("human", "web")."""
    return {s.strip() for s in specs if s.strip() in ("human", "web")}


__all__ = ["HUMAN_DECISION_TIMEOUT_S", "HumanHost", "HumanLeft", "HumanPlayer",
           "TerminalSeat", "announce_turns", "event_line", "has_people", "hosting",
           "human_player"]
