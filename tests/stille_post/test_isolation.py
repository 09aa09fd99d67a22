"""Visibility contract: no request built for seat A contains text visible only to seat B.

Many seeded games of chaotic LLM stand-ins (which earn hints by guessing right now and
then) go through the real prompt path; every request each seat was sent is checked
against every private event of every other seat.
"""

from __future__ import annotations

from stille_post.core.events import visible_to
from stille_post.games.stille_post.prompts import HINTS_HEADER, hint_line
from stille_post.providers.base import request_text


def test_no_request_contains_another_seats_private_text(play, chaos) -> None:
    hints_seen = 0
    for seed in range(120):
        players, providers = chaos(4, seed)

        def give_oracles(game, providers=providers):
            for seat, p in providers.items():
                p.oracle = {s: m.id for s, m in game.identities.items() if s != seat}

        _, events, game = play(players, seed=seed, guess_every=2, max_rounds=5,
                               before_play=give_oracles)
        private = [e for e in events if not e.visibility.is_public]
        public_lines = {f"[Player {e.actor}]: {e.data['text']}" for e in events
                        if e.type == "message"}
        for seat, provider in providers.items():
            secrets = set()
            for e in private:
                if e.visibility.allows(seat):
                    continue
                if e.type == "hint":
                    secrets.add(hint_line(e.data["kind"], e.data["value"]))
                elif e.type == "tool_calls":
                    # The exact way request_text shows a call: only its maker may have it.
                    secrets.update(f"{c['name']} {c.get('arguments') or {}}"
                                   for c in e.data["tool_calls"] if c.get("arguments"))
                elif e.type == "identity_guess":
                    secrets.add(f"[Player {e.actor}]: {e.data['text']}")
                # repair_request / no_hints_left / guess_invalid: generic wording that every
                # seat's own notices share, so they cannot be told apart by text.
            own_calls = {f"{c['name']} {c.get('arguments') or {}}" for e in events
                         if e.type == "tool_calls" and e.actor == seat
                         for c in e.data["tool_calls"]}
            own_hints = {hint_line(e.data["kind"], e.data["value"]) for e in events
                         if e.type == "hint" and e.visibility.allows(seat)}
            secrets -= public_lines | own_calls | own_hints  # equal text may be its own too
            for request in provider.requests:
                # Every secret is a whole line of a request, so compare lines: a substring
                # test would confuse "gpt-5" with "gpt-5-mini".
                lines = set(request_text(request).splitlines())
                leaked = secrets & lines
                assert not leaked, (seed, seat, leaked)
            # Own hints reach the system prompt in the order received: each request shows
            # a prefix of the seat's hint list (the last hint may come after its last turn).
            all_lines = [hint_line(k, v) for k, v in game.hints[seat]]
            for request in provider.requests:
                shown = [ln for ln in request.system.splitlines() if ln in all_lines]
                assert shown == all_lines[: len(shown)]
                if shown:
                    assert HINTS_HEADER in request.system
                hints_seen += len(shown)
    assert hints_seen > 100  # the test only means something if hints were earned


def test_engine_views_equal_the_visibility_rule(play, chaos) -> None:
    players, _ = chaos(5, 11)
    _, events, game = play(players, seed=11, guess_every=1)
    for seat in range(1, 6):
        assert game.log.views[seat] == visible_to(events, seat)


def test_other_players_are_never_assistant_turns(play, chaos) -> None:
    """Assistant turns hold only the seat's own published words; the seat's own words never
    come back as a "[Player k]:" user line."""
    players, providers = chaos(4, 5)
    _, events, _ = play(players, seed=5)
    for seat, provider in providers.items():
        own = {e.data["text"] for e in events
               if e.actor == seat and e.type in ("message", "identity_guess")} | {""}
        for request in provider.requests:
            for m in request.messages:
                if m.role == "assistant":
                    assert m.content in own
                if m.role == "user":
                    assert not any(line.startswith(f"[Player {seat}]:")
                                   for line in m.content.splitlines())


class _Thinker:
    """A provider whose completions carry opaque provider data (like thinking blocks)."""

    def __init__(self) -> None:
        self.requests: list = []

    async def complete(self, request):
        from stille_post.providers.base import Completion, ToolCall, Usage

        self.requests.append(request)
        calls = [] if request.tool_choice == "none" else [ToolCall("propose_task", {"task": "x"})]
        return Completion("gpt-5", calls, Usage(), "thinker",
                          provider_data={"thinking": "SECRET-THOUGHT"})


def test_provider_data_returns_to_its_own_model_only(play, bots) -> None:
    from stille_post.games.stille_post.prompts import PROMPTS
    from stille_post.players.llm import LLMPlayer

    thinker = _Thinker()
    players = bots(["cautious", "cautious", "cautious"], 9)
    players[1] = LLMPlayer(thinker, PROMPTS, name="thinker")
    _, _, game = play(players, seed=9, max_rounds=2)
    for seat in (2, 3):
        assert "SECRET-THOUGHT" not in repr([e.data for e in game.log.views[seat]])
    own_turns = [m for m in thinker.requests[-1].messages if m.role == "assistant"]
    assert own_turns and all(m.provider_data == {"thinking": "SECRET-THOUGHT"}
                             for m in own_turns if m.tool_calls)
