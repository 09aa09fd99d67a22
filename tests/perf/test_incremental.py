"""Incremental prompts (kit/incremental.py) render exactly what a full re-render did.

The references below are the renderers as they were before the kit kept conversations
(copied verbatim), so a change that alters a request byte is caught here and not only
by a cassette replay. Random event streams are cut into decisions at random points,
with repair previews (seq 0) and channel-like suffixes mixed in, and every decision's
messages are compared field by field, provider data included.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stille_post.core.events import Event, Visibility
from stille_post.games.chameleon import prompts as CP
from stille_post.games.kit import incremental
from stille_post.games.kit.framing import Conversation
from stille_post.games.kit.incremental import IncrementalRenderer, render_full
from stille_post.games.stille_post import prompts as SP
from stille_post.providers.base import Message, ToolCall

# --- the renderers as they were (reference) ------------------------------------------------


def legacy_sp(events: Sequence[Event], seat: int) -> list[Message]:
    messages: list[Message] = []
    pending_user: list[str] = []
    open_calls: set[str] = set()

    def flush_user() -> None:
        if pending_user:
            messages.append(Message("user", "\n\n".join(pending_user)))
            pending_user.clear()

    for e in events:
        own = e.actor == seat
        if own and e.type in ("message", "identity_guess"):
            flush_user()
            messages.append(Message("assistant", str(e.data.get("text", ""))))
            continue
        if own and e.type == "message_meta":
            if pending_user or not messages or messages[-1].role != "assistant":
                flush_user()
                messages.append(Message("assistant", ""))
            last = messages.pop()
            messages.append(Message("assistant", last.content, last.tool_calls,
                                    provider_data=dict(e.data.get("provider_data") or {})))
            continue
        if own and e.type == "tool_calls":
            calls = SP._tool_calls_of(e.data)
            if pending_user or not messages or messages[-1].role != "assistant":
                flush_user()
                messages.append(Message("assistant", "", calls))
            else:
                last = messages.pop()
                messages.append(Message("assistant", last.content, calls,
                                        provider_data=last.provider_data))
            open_calls = {c.id for c in calls if c.id}
            continue
        call_id = e.data.get("call_id")
        if own and call_id in open_calls:
            messages.append(Message("tool", str(e.data.get("text", "")), tool_call_id=call_id))
            open_calls.discard(call_id)
            continue
        line = SP._user_line(e, seat)
        if line is not None:
            pending_user.append(line)
    flush_user()
    return messages


def legacy_chameleon(events: Sequence[Event], seat: int, closing: str) -> list[Message]:
    messages: list[Message] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            messages.append(Message("user", "\n\n".join(pending)))
            pending.clear()

    for e in events:
        field = CP._OWN_ANSWER.get(e.type)
        if field is not None and e.actor == seat:
            flush()
            messages.append(Message("assistant", str(e.data.get(field, ""))))
            continue
        line = CP._line(e)
        if line is not None:
            pending.append(line)
    pending.append(f"{CP.GM_TO_YOU}: {closing}")
    flush()
    return messages


def dump(messages: Sequence[Message]) -> list[Any]:
    """Every field a provider adapter sends, provider data included (`==` on Message
    ignores it)."""
    return [(m.role, m.content, m.tool_call_id, dict(m.provider_data),
             [(c.name, c.arguments, c.id, c.malformed, dict(c.provider_data))
              for c in m.tool_calls]) for m in messages]


# --- random event streams -----------------------------------------------------------------

SEATS = (1, 2, 3)
texts = st.sampled_from(["", "hi", "[GAME MASTER]: x", "a\nb", "Player 2 speaks."])
vis = st.sampled_from([Visibility.public(), Visibility.only(1), Visibility.only(2)])
actors = st.sampled_from([None, 1, 2, 3])
call_ids = st.sampled_from(["c1", "c2", "c3"])


@st.composite
def sp_event(draw: st.DrawFn) -> tuple[str, int | None, Visibility, dict[str, Any]]:
    kind = draw(st.sampled_from(["message", "identity_guess", "message_meta", "tool_calls",
                                 "tool_result", "intro_prompt", "turn_start", "notice",
                                 "hint", "eliminated"]))
    actor = draw(actors)
    data: dict[str, Any] = {"text": draw(texts)}
    if kind == "message_meta":
        data = {"provider_data": draw(st.sampled_from([{}, {"sig": "abc"}, {"n": 2}]))}
    elif kind == "tool_calls":
        ids = draw(st.lists(call_ids, max_size=2, unique=True))
        data = {"tool_calls": [{"name": "guess_model", "arguments": {"player_id": 2},
                                "id": i, "provider_data": {"p": i}} for i in ids]}
    elif kind == "tool_result":
        data["call_id"] = draw(st.one_of(st.none(), call_ids))
    return kind, actor, draw(vis), data


@st.composite
def chameleon_event(draw: st.DrawFn) -> tuple[str, int | None, Visibility, dict[str, Any]]:
    kind = draw(st.sampled_from(["word", "vote", "tie_break", "guess", "role", "turn",
                                 "vote_start", "reveal"]))
    data: dict[str, Any] = {"text": draw(texts), "word": "apple", "target": 2, "picked": 3,
                            "guess": "pear"}
    return kind, draw(actors), draw(vis), data


def build(raw: Sequence[tuple[str, int | None, Visibility, dict[str, Any]]]) -> list[Event]:
    return [Event(i + 1, k, 1, i, a, v, d) for i, (k, a, v, d) in enumerate(raw)]


def previews(raw: Sequence[tuple[str, int | None, Visibility, dict[str, Any]]]) -> list[Event]:
    return [Event(0, k, 1, 0, a, v, d) for k, a, v, d in raw]


cuts = st.lists(st.integers(0, 40), max_size=8).map(sorted)


@settings(deadline=None)
@given(st.lists(sp_event(), max_size=40), cuts, st.lists(sp_event(), max_size=2),
       st.sampled_from(SEATS))
def test_stille_post_incremental_equals_full(raw: list[Any], points: list[int],
                                             extra: list[Any], seat: int) -> None:
    events = build(raw)
    renderer = IncrementalRenderer(SP.render_event)
    for k in [*points, len(events)]:
        view: Sequence[Event] = events[:k]
        assert dump(renderer.messages(view, seat)) == dump(legacy_sp(view, seat))
        assert dump(SP.render_messages(view, seat)) == dump(legacy_sp(view, seat))
        # A re-ask with a repair preview (seq 0) appended, as a tuple like kit/table.py.
        shown = (*view, *previews(extra))
        assert dump(renderer.messages(shown, seat)) == dump(legacy_sp(shown, seat))


@settings(deadline=None)
@given(st.lists(chameleon_event(), max_size=30), cuts, st.lists(chameleon_event(), max_size=2),
       st.sampled_from(SEATS), st.sampled_from(["Vote now.", "Your word?"]))
def test_chameleon_incremental_equals_full(raw: list[Any], points: list[int], extra: list[Any],
                                           seat: int, closing: str) -> None:
    events = build(raw)
    renderer = IncrementalRenderer(CP.render_event)
    for k in [*points, len(events)]:
        view = tuple(events[:k])  # the Chameleon's observation copies its view to a tuple
        expected = legacy_chameleon(view, seat, closing)
        got = renderer.messages(view, seat, f"{CP.GM_TO_YOU}: {closing}")
        assert dump(got) == dump(expected)
        shown = (*view, *previews(extra))
        got = renderer.messages(shown, seat, f"{CP.GM_TO_YOU}: {closing}")
        assert dump(got) == dump(legacy_chameleon(shown, seat, closing))


def test_only_new_events_are_rendered() -> None:
    events = build([("message", 2, Visibility.public(), {"text": f"m{i}"}) for i in range(50)])
    renderer = IncrementalRenderer(SP.render_event)
    for k in range(1, 51):
        renderer.messages(events[:k], 1)
    assert renderer.events_rendered == 50 and renderer.rebuilds == 1


def test_a_view_that_is_not_an_extension_is_rebuilt() -> None:
    """Same first event, but the event at the kept position is another object (a channel
    merged into the log as new events): the kept conversation must not be used."""
    a = build([("message", 2, Visibility.public(), {"text": t}) for t in "abc"])
    b = [a[0], Event(2, "message", 1, 1, 2, Visibility.public(), {"text": "X"}), a[2]]
    renderer = IncrementalRenderer(SP.render_event)
    renderer.messages(a[:2], 1)
    assert dump(renderer.messages(b, 1)) == dump(legacy_sp(b, 1))
    assert renderer.rebuilds == 2


def test_kept_conversations_of_finished_games_are_swept(monkeypatch: Any) -> None:
    """Even while something keeps every finished game's events alive (so the weak
    reference below never fires), idle conversations are swept."""
    monkeypatch.setattr(incremental, "SWEEP_EVERY", 8)
    monkeypatch.setattr(incremental, "MIN_HORIZON", 16)
    renderer = IncrementalRenderer(SP.render_event)
    live = build([("message", 2, Visibility.public(), {"text": "x"})] * 3)
    sizes = []
    finished = []
    for g in range(2000):  # 2,000 one-decision games, while one game stays live
        dead = build([("turn_start", 1, Visibility.public(), {"text": str(g)})])
        finished.append(dead)
        renderer.messages(dead, 1)
        renderer.messages(live, 1)
        sizes.append(len(renderer))
    assert max(sizes[1000:]) <= max(sizes[:1000]) < 60  # flat, not growing with games
    assert renderer.rebuilds == 2001  # the live one was never dropped


def test_a_game_whose_events_are_gone_leaves_no_conversation(monkeypatch: Any) -> None:
    """The kept conversations live as long as the game's events, no longer: a process
    that played games keeps none of them once they are over (no sweep involved)."""
    monkeypatch.setattr(incremental, "SWEEP_EVERY", 10**9)
    renderer = IncrementalRenderer(SP.render_event)
    live = build([("message", 2, Visibility.public(), {"text": "x"})] * 3)
    renderer.messages(live, 1)
    for _ in range(3):
        game = build([("turn_start", 1, Visibility.public(), {"text": "t"})] * 2)
        renderer.messages(game, 1)
        renderer.messages(game, 2)
        assert len(renderer) == 3  # the live game's and this game's two seats
        del game  # the game's events are freed (reference counting)
        assert len(renderer) == 1  # only the live game's
    assert dump(renderer.messages(live, 1)) == dump(legacy_sp(live, 1))
    assert renderer.rebuilds == 1 + 3 * 2  # the live one was kept throughout


def test_a_tournament_leaves_no_conversation_behind(tmp_path: Path) -> None:
    from stille_post.players.llm import LLMPlayer
    from stille_post.providers.simulated import SimulatedProvider
    from stille_post.tournament import TournamentConfig, run_tournament

    def factory(spec: str, prompts: Any) -> Any:
        return LLMPlayer(SimulatedProvider(spec.partition(":")[2], latency_s=0), prompts,
                         name=spec)

    before = len(SP.RENDERER)
    cfg = TournamentConfig(game="stille-post", games=6, seed=3,
                           players=("openai:a", "openai:b", "openai:c", "openai:d"))
    asyncio.run(run_tournament(cfg, tmp_path / "t", concurrency=3, llm_factory=factory,
                               durable=False))
    assert len(SP.RENDERER) == before


def test_a_failing_event_forgets_the_half_rendered_conversation() -> None:
    raised: list[bool] = []

    def flaky(conv: Conversation, e: Event, seat: int) -> None:
        if e.data.get("boom") and not raised:
            raised.append(True)
            raise KeyError("boom")
        conv.user(str(e.data.get("text")))

    events = build([("x", None, Visibility.public(), {"text": "a"}),
                    ("x", None, Visibility.public(), {"text": "b", "boom": True})])
    renderer = IncrementalRenderer(flaky)
    with pytest.raises(KeyError):
        renderer.messages(events, 1)
    assert len(renderer) == 0
    assert dump(renderer.messages(events, 1)) == dump(render_full(flaky, events, 1))


def test_a_whole_game_renders_the_same_requests_either_way() -> None:
    """A real game with LLM seats: every request equals the from-scratch rendering."""
    from stille_post.core.rng import make_rng
    from stille_post.games import get_game
    from stille_post.games.kit.setup import prepare
    from stille_post.players.base import Decision
    from stille_post.players.llm import LLMPlayer
    from stille_post.providers.simulated import SimulatedProvider

    seen: list[tuple[Any, Any]] = []

    class Checking:
        def __init__(self, inner: Any, full: Any) -> None:
            self.inner, self.full = inner, full

        def render(self, decision: Decision[Any]) -> Any:
            req = self.inner.render(decision)
            seen.append((dump(req.messages), dump(self.full(decision))))
            return req

    def sp_full(d: Decision[Any]) -> list[Message]:
        return legacy_sp(d.observation.events, d.observation.seat)

    def factory(spec: str, prompts: Any) -> Any:
        return LLMPlayer(SimulatedProvider(spec.partition(":")[2], latency_s=0, tool_every=2),
                         Checking(prompts, sp_full), name=spec)

    seats = ["openai:gpt-5-mini", "anthropic:claude-opus-4-6", "google:gemini-2.5-flash",
             "openai:gpt-4.1"]
    for seed in range(3):
        prepared = prepare(get_game("stille-post"), seed=seed, rng=make_rng(seed),
                           players=seats, options={}, llm_factory=factory)
        asyncio.run(prepared.play(None))
    assert len(seen) > 50
    assert all(a == b for a, b in seen)


def test_conversation_snapshot_leaves_it_open() -> None:
    conv = Conversation()
    conv.user("a")
    assert dump(conv.snapshot("q")) == dump([Message("user", "a\n\nq")])
    conv.user("b")
    fork = conv.copy()
    fork.assistant("mine")
    assert dump(conv.snapshot()) == dump([Message("user", "a\n\nb")])
    conv.attach_calls([ToolCall("t", {}, id="c9")])
    assert conv.open_calls == {"c9"} and "c9" not in fork.open_calls
