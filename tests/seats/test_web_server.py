"""The web seat's server (players/web.py) under hostile requests (issue 36, items 10 and
11): a token per seat, Host and Origin checked, the body capped, nothing a request sends
prints a traceback. The real server (uvicorn on 127.0.0.1) in the test's event loop,
asked with httpx, which lets a test set any Host and Origin."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from stille_post.players.base import Action
from stille_post.players.forms import Form
from stille_post.players.humans import HumanLeft
from stille_post.players.web import MAX_BODY, WebSeats

pytestmark = pytest.mark.block_network(allowed_hosts=[r"127\.0\.0\.1$"])


def _form(seat: int) -> Form:
    return Form(seat=seat, kind="word", instruction="say a word", message="required",
                choices=(), tool_required=False, seats=(1, 2, 3, 4), seat_answer=False,
                word_limit=1)


Check = Callable[[WebSeats, httpx.AsyncClient, dict[int, asyncio.Task[Action]]],
                 Awaitable[None]]


def _serve(check: Check, caplog: pytest.LogCaptureFixture) -> None:
    """Two web seats, both asked a question; `check` talks to the server."""

    async def main() -> None:
        web = WebSeats(port=0)
        announced: dict[int, str] = {}
        web.seat(1)
        await web.start()
        web.announce = lambda seat, url: announced.__setitem__(seat, url)
        web.seat(2)  # made after the server started: announced at once
        assert list(announced) == [2] and announced[2] == web.url_of(2)
        asked = {s: asyncio.create_task(web.seats[s].answer(s, f"rules of seat {s}", [],
                                                            _form(s), lambda a: None))
                 for s in (1, 2)}
        await asyncio.sleep(0)
        try:
            async with httpx.AsyncClient(timeout=10) as client:
                await check(web, client, asked)
        finally:
            for task in asked.values():
                task.cancel()
            await asyncio.gather(*asked.values(), return_exceptions=True)
            await web.aclose()

    with caplog.at_level(logging.DEBUG):
        asyncio.run(main())
    # Nothing a request sent reached the log as an error (uvicorn prints those, with the
    # traceback, on the terminal of the person playing).
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


def test_each_web_seat_has_its_own_token_and_url(caplog: pytest.LogCaptureFixture) -> None:
    async def check(web: WebSeats, client: httpx.AsyncClient,
                    asked: dict[int, asyncio.Task[Action]]) -> None:
        one, two = web.url_of(1), web.url_of(2)
        assert one != two and web.seats[1].token != web.seats[2].token
        for seat, url in ((1, one), (2, two)):
            state = (await client.get(url + "api/state")).json()
            assert state["seat"] == seat and state["rules"] == f"rules of seat {seat}"
            # The old way to reach another seat (`?seat=`) reaches nothing else.
            other = 3 - seat
            state = (await client.get(url + f"api/state?seat={other}")).json()
            assert state["seat"] == seat and f"seat {other}" not in state["rules"]
        r = await client.post(one + "api/answer?seat=2", json={"text": "apple"})
        assert r.status_code == 200
        await asyncio.sleep(0)
        assert asked[1].done() and asked[1].result().text == "apple"
        assert not asked[2].done()  # seat 2's question is still its own
        for bad in ("not-a-token", web.seats[1].token[:-1]):
            base = one.replace(web.seats[1].token, bad)
            assert (await client.get(base + "api/state")).status_code == 404

    _serve(check, caplog)


def test_host_and_origin_are_checked(caplog: pytest.LogCaptureFixture) -> None:
    async def check(web: WebSeats, client: httpx.AsyncClient,
                    asked: dict[int, asyncio.Task[Action]]) -> None:
        url = web.url_of(1)
        port = url.split(":")[2].split("/")[0]
        # DNS rebinding: a name of the attacker's, resolved to 127.0.0.1.
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{int(port) + 1}"):
            r = await client.get(url + "api/state", headers={"Host": host})
            assert r.status_code == 403, host
        assert (await client.get(url + "api/state",
                                 headers={"Host": f"localhost:{port}"})).status_code == 200
        # Another site's page posting an answer (a browser sends its Origin).
        for origin in ("http://evil.example", f"http://evil.example:{port}", "null"):
            r = await client.post(url + "api/answer", json={"text": "pear"},
                                  headers={"Origin": origin})
            assert r.status_code == 403, origin
        assert not asked[1].done()
        r = await client.post(url + "api/answer", json={"text": "pear"},
                              headers={"Origin": f"http://127.0.0.1:{port}"})
        assert r.status_code == 200
        await asyncio.sleep(0)
        assert asked[1].result().text == "pear"

    _serve(check, caplog)


def test_hostile_bodies_are_4xx_never_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    async def check(web: WebSeats, client: httpx.AsyncClient,
                    asked: dict[int, asyncio.Task[Action]]) -> None:
        answer = web.url_of(1) + "api/answer"
        deep = b"[" * 100_000 + b"]" * 100_000
        assert len(deep) < MAX_BODY  # refused for its depth, not its size
        r = await client.post(answer, content=deep)
        assert r.status_code == 400 and "error" in r.json()
        deep_inside = b'{"text": "x", "arguments": ' + b"[" * 900 + b"]" * 900 + b"}"
        r = await client.post(answer, content=deep_inside)
        assert r.status_code in (200, 400)
        for body in (b"", b"\xff\xfe", b"null", b"[1, 2]", b'"text"', b"{" * 10):
            r = await client.post(answer, content=body)
            assert r.status_code == 400, body
        big = b'{"text": "' + b"a" * (MAX_BODY + 1) + b'"}'
        assert (await client.post(answer, content=big)).status_code == 413

        async def trickle() -> Any:  # no Content-Length: chunks, counted as they come
            for _ in range(MAX_BODY // 4096 + 2):
                yield b" " * 4096

        assert (await client.post(answer, content=trickle())).status_code == 413
        assert not asked[1].done() or asked[1].result().text == "x"

    _serve(check, caplog)


def test_a_signal_ends_a_pending_web_question() -> None:
    async def main() -> None:
        web = WebSeats(port=0)
        seat = web.seat(1)
        assert not web.leave(HumanLeft("interrupted (Ctrl-C)"))  # nothing asked: not taken
        task = asyncio.create_task(seat.answer(1, "", [], _form(1), lambda a: None))
        await asyncio.sleep(0)
        assert web.leave(HumanLeft("interrupted (Ctrl-C)"))
        with pytest.raises(HumanLeft, match=r"interrupted \(Ctrl-C\)"):
            await task

    asyncio.run(main())
