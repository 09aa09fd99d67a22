"""The `web` seat: a person plays through one local page (`stille-post play GAME
--players web,... --port P`).

- Served by starlette on uvicorn, inside the game's own event loop, on 127.0.0.1 only.
  Every URL carries a random per-game token (`/t/TOKEN/`); anything else is a 404.
- The page polls `state` (twice a second): the seat's rules and private information (the
  system prompt an LLM in the seat would get), the events the seat may see as they
  happen (public moves of the others, its own private lines), and the pending decision
  as a form (players/forms.py). `answer` takes the form; the same checks as the
  terminal's run first, then the engine's own, and a refusal comes back as a message on
  the page, never as a forfeit.
- The page's script is a separate file under a strict Content-Security-Policy, and model
  text goes in only through `textContent`.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Protocol

from stille_post.core.events import Event
from stille_post.players.base import Action
from stille_post.players.forms import (
    Form,
    Invalid,
    action_of,
    check_message,
    read_argument,
)


class EventStyle(Protocol):
    """How a game's event type reads (a game's `EventKind`, games/kit/definition.py):
    named here as a protocol because players sit below games."""

    @property
    def generic(self) -> str: ...

    @property
    def text_key(self) -> str: ...


CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'")


@dataclass
class _Pending:
    form: Form
    check: Callable[[Action], None]
    future: asyncio.Future[Action]


@dataclass
class WebSeat:
    """One seat's page state."""

    seat: int
    rules: str = ""
    feed: list[str] = field(default_factory=list)
    pending: _Pending | None = None
    answered: int = 0
    watched: bool = False  # a page has asked for this seat's state
    saw_end: bool = False  # ...and was told the game is over

    async def answer(self, seat: int, rules: str, fresh: list[str], form: Form,
                     check: Callable[[Action], None]) -> Action:
        if rules:
            self.rules = f"{self.rules}\n\n{rules}" if self.rules else rules
        future: asyncio.Future[Action] = asyncio.get_running_loop().create_future()
        self.pending = _Pending(form, check, future)
        try:
            return await future
        finally:
            self.pending = None

    def submit(self, body: Mapping[str, Any]) -> str | None:
        """Apply a submitted form; the refusal's reason, or None when accepted."""
        pending = self.pending
        if pending is None or pending.future.done():
            return "there is no decision waiting for you"
        form = pending.form
        try:
            text = check_message(str(body.get("text") or ""), form) \
                if form.message != "none" else ""
            choice = None
            arguments: dict[str, Any] = {}
            if form.choices:
                raw_choice = str(body.get("choice") or "0")
                try:
                    number = int(raw_choice)
                except ValueError:
                    raise Invalid(f"choose a tool from the list, got {raw_choice!r}") from None
                if number == 0 and not form.tool_required:
                    choice = None
                else:
                    choice = next((c for c in form.choices if c.number == number), None)
                    if choice is None:
                        raise Invalid("choose a tool from the list")
                given = body.get("arguments") or {}
                if choice is not None:
                    for arg in choice.arguments:
                        raw = given.get(arg.name, "") if isinstance(given, Mapping) else ""
                        arguments[arg.name] = read_argument(arg, str(raw), form)
            action = action_of(form, text, choice, arguments)
            pending.check(action)
        except Invalid as exc:
            return str(exc)
        self.answered += 1
        pending.future.set_result(action)
        return None

    def state(self, over: bool) -> dict[str, Any]:
        self.watched = True
        self.saw_end = self.saw_end or over
        return {"seat": self.seat, "rules": self.rules, "feed": self.feed,
                "form": self.pending.form.to_json() if self.pending else None,
                "answered": self.answered, "over": over}


class WebSeats:
    """The page server for every web seat of one game."""

    def __init__(self, port: int | None = None,
                 vocabulary: Mapping[str, EventStyle] | None = None) -> None:
        self.port = port or 0
        self.vocabulary = dict(vocabulary or {})
        self.token = secrets.token_urlsafe(16)
        self.seats: dict[int, WebSeat] = {}
        self.over = False
        self.url = ""
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    def seat(self, seat: int) -> WebSeat:
        return self.seats.setdefault(seat, WebSeat(seat))

    def observe(self, event: Event) -> None:
        kind = self.vocabulary.get(event.type)
        if kind is not None and kind.generic == "silent":
            return
        if event.type == "game_over" or (kind is not None and kind.generic == "game_over"):
            self.over = True
        for seat, state in self.seats.items():
            if event.visibility.allows(seat):
                line = _line(event, kind, seat)
                if line:
                    state.feed.append(line)

    async def start(self) -> str:
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", self.port))
        except OSError as exc:
            sock.close()
            from stille_post.core.errors import UsageError

            raise UsageError(f"--port {self.port}: cannot serve on 127.0.0.1 ({exc.strerror})"
                             ) from None
        sock.listen(16)
        port = sock.getsockname()[1]
        config = uvicorn.Config(self.app(), log_level="warning", access_log=False,
                                lifespan="off")
        self._server = _QuietServer(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        for _ in range(200):  # until it accepts (a few ms)
            if self._server.started:
                break
            await asyncio.sleep(0.01)
        self.url = f"http://127.0.0.1:{port}/t/{self.token}/"
        return self.url

    async def aclose(self) -> None:
        self.over = True
        if self._server is not None and self._task is not None:
            # Let each open page see the end before the server goes: it polls every
            # half second, so at most 1.2 s (a page never opened is not waited for).
            deadline = time.monotonic() + 1.2
            while time.monotonic() < deadline and any(
                    s.watched and not s.saw_end for s in self.seats.values()):
                await asyncio.sleep(0.02)
            self._server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 5)

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        page = resources.files("stille_post.players").joinpath("web_page.html").read_text(
            encoding="utf-8")
        script = resources.files("stille_post.players").joinpath("web_page.js").read_text(
            encoding="utf-8")
        css = resources.files("stille_post.players").joinpath("web_page.css").read_text(
            encoding="utf-8")
        headers = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                   "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}

        def allowed(request: Request) -> bool:
            return secrets.compare_digest(str(request.path_params["token"]), self.token)

        def seat_of(request: Request) -> WebSeat | None:
            raw = request.query_params.get("seat")
            if raw is None:
                return self.seats[min(self.seats)] if self.seats else None
            try:
                return self.seats.get(int(raw))
            except ValueError:
                return None

        async def index(request: Request) -> Response:
            if not allowed(request):
                return Response("not found", 404)
            return Response(page, media_type="text/html", headers=headers)

        async def asset(request: Request) -> Response:
            if not allowed(request):
                return Response("not found", 404)
            if request.path_params["name"] == "page.js":
                return Response(script, media_type="text/javascript", headers=headers)
            if request.path_params["name"] == "page.css":
                return Response(css, media_type="text/css", headers=headers)
            return Response("not found", 404)

        async def state(request: Request) -> Response:
            seat = seat_of(request) if allowed(request) else None
            if seat is None:
                return Response("not found", 404)
            return JSONResponse(seat.state(self.over), headers=headers)

        async def answer(request: Request) -> Response:
            seat = seat_of(request) if allowed(request) else None
            if seat is None:
                return Response("not found", 404)
            try:
                body = await request.json()
            except ValueError:
                body = None
            if not isinstance(body, dict):
                return JSONResponse({"error": "send the form as a JSON object"}, 400,
                                    headers=headers)
            error = seat.submit(body)
            if error is not None:
                return JSONResponse({"error": error}, 400, headers=headers)
            return JSONResponse({"ok": True}, headers=headers)

        return Starlette(routes=[
            Route("/t/{token}/", index),
            Route("/t/{token}/{name}", asset),
            Route("/t/{token}/api/state", state),
            Route("/t/{token}/api/answer", answer, methods=["POST"]),
        ])


def _line(event: Event, kind: EventStyle | None, seat: int) -> str:
    text = str(event.data.get("text", "") or "")
    if kind is not None and kind.generic == "speech" and event.actor is not None:
        spoken = str(event.data.get(kind.text_key, text))
        who = "you" if event.actor == seat else f"Player {event.actor}"
        private = "" if event.visibility.is_public else " (private)"
        return f"[{who}]{private}: {spoken}"
    if not text:
        return ""
    return f"[GAME MASTER]: {text}" if event.visibility.is_public \
        else f"[GAME MASTER → you]: {text}"


class _QuietServer:
    """uvicorn's server without its signal handling: Ctrl-C belongs to the game."""

    def __new__(cls, config: Any) -> Any:
        import uvicorn

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

        return Server(config)


__all__ = ["WebSeat", "WebSeats"]
