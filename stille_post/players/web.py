"""The `web` seat: a person plays through one local page (`stille-post play GAME
--players web,... --port P`).

- Served by starlette on uvicorn, inside the game's own event loop, on 127.0.0.1 only.
  Each seat has its own random token and URL (`/t/TOKEN/`): the token is the seat, so
  one person's page can neither read nor answer another's. Anything else is a 404.
- A request must name this server in `Host` (127.0.0.1 or localhost with its port) and,
  when it has an `Origin`, come from it: a page of another site, even through a DNS name
  rebound to 127.0.0.1, gets a 403. An answer's body is capped (`MAX_BODY`, 413 above
  it); a body that is not a JSON object, or too deeply nested to read, is a 400. No
  request can print a traceback on the person's terminal (`_guarded`).
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
import json
import secrets
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from stille_post.core.events import Event
from stille_post.players.base import Action
from stille_post.players.forms import (
    EventStyle,
    Form,
    Invalid,
    action_of,
    check_message,
    event_line,
    read_argument,
)

# An answer is a short form (a message, a tool's arguments); this is far above any real
# one and far below what could hurt.
MAX_BODY = 256 * 1024

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
    token: str = field(default_factory=lambda: secrets.token_urlsafe(16))
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

    def leave(self, why: Exception) -> bool:
        """The person leaves (a signal in the terminal that runs the game): the pending
        question raises `why` (the host's `HumanLeft`). False when nothing is asked."""
        pending = self.pending
        if pending is None or pending.future.done():
            return False
        pending.future.set_exception(why)
        return True

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

    def state(self, over: bool, thinking: Iterable[int] = ()) -> dict[str, Any]:
        """What the page shows; `thinking` are the seats the game waits for now (this
        one left out: the page says "your turn" then)."""
        self.watched = True
        self.saw_end = self.saw_end or over
        return {"seat": self.seat, "rules": self.rules, "feed": self.feed,
                "form": self.pending.form.to_json() if self.pending else None,
                "answered": self.answered, "over": over,
                "thinking": [] if over else sorted(s for s in thinking if s != self.seat)}


class WebSeats:
    """The page server for every web seat of one game."""

    def __init__(self, port: int | None = None,
                 vocabulary: Mapping[str, EventStyle] | None = None) -> None:
        self.port = port or 0
        self.vocabulary = dict(vocabulary or {})
        self.seats: dict[int, WebSeat] = {}
        self.over = False
        # The seats that take time (models, agents, people) being asked now: each page
        # says whom it waits for (HumanHost.watched tells us).
        self.thinking: set[int] = set()
        self.base = ""  # http://127.0.0.1:PORT once serving
        # Told each seat's URL as soon as both the seat and the server exist (the CLI
        # prints it for the person of that seat).
        self.announce: Callable[[int, str], None] | None = None
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    def seat(self, seat: int) -> WebSeat:
        state = self.seats.get(seat)
        if state is None:
            state = self.seats[seat] = WebSeat(seat)
            if self.base and self.announce is not None:
                self.announce(seat, self.url_of(seat))
        return state

    def thinking_started(self, seat: int) -> None:
        self.thinking.add(seat)

    def thinking_ended(self, seat: int) -> None:
        self.thinking.discard(seat)

    def url_of(self, seat: int) -> str:
        return f"{self.base}/t/{self.seats[seat].token}/"

    def leave(self, why: Exception) -> bool:
        left = False
        for state in self.seats.values():
            left = state.leave(why) or left
        return left

    def observe(self, event: Event) -> None:
        kind = self.vocabulary.get(event.type)
        if kind is not None and kind.generic == "silent":
            return
        if event.type == "game_over" or (kind is not None and kind.generic == "game_over"):
            self.over = True
        for seat, state in self.seats.items():
            if event.visibility.allows(seat):
                line = event_line(event, kind, seat)
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
        # Errors only: a malformed request is answered (400), not narrated on the
        # person's terminal; the app itself never lets an exception reach uvicorn.
        config = uvicorn.Config(self.app(port), log_level="error", access_log=False,
                                lifespan="off")
        self._server = _QuietServer(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        for _ in range(200):  # until it accepts (a few ms)
            if self._server.started:
                break
            await asyncio.sleep(0.01)
        self.base = f"http://127.0.0.1:{port}"
        if self.announce is not None:
            for seat in sorted(self.seats):
                self.announce(seat, self.url_of(seat))
        return self.base

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
            with contextlib.suppress(Exception):  # not wait_for: it may swallow a cancel
                async with asyncio.timeout(5):
                    await self._task

    def seat_by_token(self, token: str) -> WebSeat | None:
        found = None
        for state in self.seats.values():  # every one compared: the time says nothing
            if secrets.compare_digest(token.encode(), state.token.encode()):
                found = state
        return found

    def app(self, port: int) -> Any:
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

        def seat_of(request: Request) -> WebSeat | None:
            return self.seat_by_token(str(request.path_params["token"]))

        async def index(request: Request) -> Response:
            if seat_of(request) is None:
                return Response("not found", 404)
            return Response(page, media_type="text/html", headers=headers)

        async def asset(request: Request) -> Response:
            if seat_of(request) is None:
                return Response("not found", 404)
            if request.path_params["name"] == "page.js":
                return Response(script, media_type="text/javascript", headers=headers)
            if request.path_params["name"] == "page.css":
                return Response(css, media_type="text/css", headers=headers)
            return Response("not found", 404)

        async def state(request: Request) -> Response:
            seat = seat_of(request)
            if seat is None:
                return Response("not found", 404)
            return JSONResponse(seat.state(self.over, self.thinking), headers=headers)

        async def answer(request: Request) -> Response:
            seat = seat_of(request)
            if seat is None:
                return Response("not found", 404)
            raw = await _read_capped(request)
            if raw is None:
                return JSONResponse({"error": f"the answer is over {MAX_BODY // 1024} KiB"},
                                    413, headers=headers)
            body = _json_object(raw)
            if body is None:
                return JSONResponse({"error": "send the form as a JSON object"}, 400,
                                    headers=headers)
            try:
                error = seat.submit(body)
            except (RecursionError, TypeError, ValueError):  # a shape no form has
                error = "the answer could not be read"
            if error is not None:
                return JSONResponse({"error": error}, 400, headers=headers)
            return JSONResponse({"ok": True}, headers=headers)

        app = Starlette(routes=[
            Route("/t/{token}/", index),
            Route("/t/{token}/{name}", asset),
            Route("/t/{token}/api/state", state),
            Route("/t/{token}/api/answer", answer, methods=["POST"]),
        ])
        return _guarded(app, port)


async def _read_capped(request: Any) -> bytes | None:
    """The request's body, or None when it is over MAX_BODY (read no further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(raw)
    except (RecursionError, ValueError):  # not JSON, not UTF-8, or nested past reading
        return None
    return body if isinstance(body, dict) else None


def _guarded(app: Any, port: int) -> Any:
    """The ASGI app behind two checks, and with no exception left for uvicorn to print.

    `Host` must be this server (a DNS-rebinding page names its own host); an `Origin`,
    which browsers send with a cross-site fetch and with every POST, must be this
    server too. A bug in a handler is a bare 500, not a traceback on the terminal of the
    person playing."""
    hosts = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}
    origins = {b"http://" + h for h in hosts}

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            return
        head = dict(scope.get("headers") or [])
        origin = head.get(b"origin")
        if head.get(b"host", b"").lower() not in hosts or (
                origin is not None and origin.lower() not in origins):
            await _plain(send, 403, b"forbidden")
            return
        started = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message.get("type") == "http.response.start"
            await send(message)

        try:
            await app(scope, receive, tracked)
        except Exception:
            if not started:
                await _plain(send, 500, b"internal error")

    return guarded


async def _plain(send: Any, status: int, text: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(text)).encode())]})
    await send({"type": "http.response.body", "body": text})




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
