"""Visibility contract (docs/rules.md §2): no request built for a seat contains another pair's
private text or any vote reason (its own reasons included), over many seeded games of
chaotic LLM stand-ins through the real prompt path."""

from __future__ import annotations

import re

from stille_post.providers.base import request_text

from .conftest import play

TOKEN = re.compile(r"\b(?:PRIV|REASON)-\d+-\d+-zq\b")
SEATS = ["chaos", "chaos", "chaos", "chaos", "loyal", "sheep", "chaos", "backstabber"]


def test_no_prompt_holds_another_pairs_chat_or_any_reason() -> None:
    private_seen = reasons_seen = 0
    for seed in range(25):
        n = 4 + seed % 5
        outcome, events, providers = play(SEATS[:n], seed, {"num_players": n})
        assert outcome.status == "completed", outcome.reason
        reasons = {m for e in events if e.type == "vote_reason"
                   for m in TOKEN.findall(str(e.data.get("reason", "")))}
        reasons_seen += len(reasons)
        for seat, provider in providers.items():
            secret = set(reasons)
            for e in events:
                # By the rule (the pair named in the event), not by the event's own
                # visibility label: a mislabelled event must not hide its own leak.
                if e.type == "private_message" and seat not in e.data["pair"]:
                    secret.update(TOKEN.findall(str(e.data.get("text", ""))))
            own = {t for e in events if e.type == "private_message"
                   and seat in e.data["pair"] for t in TOKEN.findall(str(e.data["text"]))}
            private_seen += len(own)
            for request in provider.requests:
                leaked = secret & set(TOKEN.findall(request_text(request)))
                assert not leaked, (seed, seat, leaked)
    # The property only means something if the games produced what it guards.
    assert private_seen > 100 and reasons_seen > 100, (private_seen, reasons_seen)


def test_views_match_visibility_rules() -> None:
    """Every private chat line is visible to its pair only; reasons and the pairing trace
    to nobody; votes to the voter only; counts to everyone."""
    _, events, _ = play(["chaos"] * 6, 3, {"num_players": 6})
    for e in events:
        seats = e.visibility.seats
        if e.type == "private_message":
            assert seats == frozenset(e.data["pair"])
        elif e.type in ("vote_reason", "pairing_trace"):
            assert seats == frozenset()
        elif e.type in ("vote", "ranking"):
            assert seats == frozenset({e.actor})
        elif e.type in ("vote_result", "pairing", "elimination", "public_message"):
            assert e.visibility.is_public
