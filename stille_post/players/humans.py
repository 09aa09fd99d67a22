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
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from stille_post.core.errors import GameAborted, UsageError
from stille_post.players.base import Action, Decision, PromptBook
from stille_post.players.forms import (
    Choice,
    Form,
    Invalid,
    View,
    action_of,
    build_form,
    check_message,
    engine_check,
    message_line,
    read_argument,
    word_count,
)
from stille_post.players.specs import SeatSpec

if TYPE_CHECKING:
    from stille_post.core.events import Event
    from stille_post.players.web import EventStyle, WebSeats

# A person thinks for as long as they like: games with a person get this answer deadline
# unless the user sets one (`--set decision_timeout_s=...`).
HUMAN_DECISION_TIMEOUT_S = 7 * 24 * 3600.0


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

    def __init__(self, out: TextIO | None = None, inp: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.inp = inp or sys.stdin
        self.lines: asyncio.Queue[Any] | None = None
        self.waiting = False  # a prompt is on the screen, waiting for a line
        self._reader: threading.Thread | None = None

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
                if not line:
                    loop.call_soon_threadsafe(lines.put_nowait, _CLOSED)
                    return
                loop.call_soon_threadsafe(lines.put_nowait, line.rstrip("\r\n"))

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
            self.say("Choose a player: " + ", ".join(f"{s}" for s in form.seats))
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
                players = ", ".join(str(s) for s in form.seats)
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
                self.terminal = TerminalSeat()
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
        it may see."""
        if self.web is not None:
            self.web.observe(event)

    async def aclose(self) -> None:
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


def has_people(specs: list[str]) -> set[str]:
    """Which kinds of person the raw seat specs name ("human", "web")."""
    return {s.strip() for s in specs if s.strip() in ("human", "web")}


__all__ = ["HUMAN_DECISION_TIMEOUT_S", "HumanHost", "HumanLeft", "HumanPlayer",
           "TerminalSeat", "has_people", "hosting", "human_player"]
