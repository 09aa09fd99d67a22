"""An independent rule checker for Connections (docs/rules.md §4), run over many seeded bot
games: it replays each transcript's events (as JSON, the way an outside checker reads a
`.jsonl`) against the rules alone, never against the engine's own functions, and names
the first broken rule.

What it checks, attempt by attempt:
- the first announcement is the first letter and nothing else (no length, in the event
  data or in any public text), and every prefix is a prefix of the secret;
- the clue-giver rotates through the guessers every attempt;
- every clue word and every guess starts with the revealed prefix, is in the dictionary,
  is not blocked, and was not used before (the secret word excepted: it is never used);
  a blocked word never comes back; no clue contains its word (letters only);
- the outcome: Setter Blocked exactly when the setter named the clue word and it is not
  the secret; otherwise Connection exactly when another guesser named it; otherwise
  Guesser Wrong; a forfeited clue is a Guesser Wrong with no word;
- letters are revealed only by a Connection, one letter each; a Connection after the
  whole secret is revealed reveals nothing, and only then does the Game Master say that no
  letter is left;
- the guessers win only with a Connection whose clue word IS the secret, the game ends
  right there, and otherwise it ends with the setter's win after `max_attempts`;
- the summary: Table 1's columns add up (reveals + guesser wrong + setter blocked =
  iterations = the attempts before the winning one), winners and placements agree.

The fast suite plays 60 games (frequency and oracle seats at 2, 3 and 5 guessers) and one
semantic game, on secret words chosen to reach the whole-secret case often (`cat`,
`cart`, `stumbled`, ... and the setter's own choice). `slow` plays 800 more, the size of
the held-out checker's run. A broken rule fails the test with the game's seed and the
attempt.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from stille_post.games.connections.dictionary import Dictionary, wordfreq_english
from tests.connections.harness import prepared

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

# Short words with many longer words that start with them (the whole-secret case comes
# early and play goes on among `catalyst`, `category`...), the issue's `stumbled`, and
# None: the setter bot chooses.
WORDS: tuple[str | None, ...] = ("cat", "car", "cart", "man", "pan", "art", "stumbled",
                                 "band", "xenophobia", None)
FAST_LINEUPS = (["frequency"] * 3, ["frequency"] * 4, ["frequency"] * 6,
                ["oracle:p=0.5"] * 3, ["oracle:p=0.3", "oracle:p=0.9", "oracle:p=0.9"],
                ["frequency", "oracle:p=0.7", "frequency"])
SEMANTIC_LINEUPS = (["frequency", "semantic", "semantic"],
                    ["semantic", "adaptive", "semantic", "adaptive"])


class Broken(AssertionError):
    pass


def _letters(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalpha())


def check_game(events: Sequence[Mapping[str, Any]], result: Mapping[str, Any],
               d: Dictionary, max_attempts: int) -> None:
    """Raise Broken naming the first rule the transcript breaks."""
    def broken(what: str, attempt: int | None = None) -> Broken:
        where = f"attempt {attempt}: " if attempt else ""
        return Broken(where + what)

    start = next(e for e in events if e["type"] == "game_start")["data"]
    setter, guessers = int(start["setter"]), [int(s) for s in start["guessers"]]
    secret_events = [e for e in events if e["type"] == "secret"]
    if len(secret_events) != 1 or secret_events[0]["visibility"] != [setter]:
        raise broken("the secret word must be told to the setter alone, once")
    secret = str(secret_events[0]["data"]["word"])
    for e in events:
        if e["visibility"] == "public":
            if "length" in e["data"]:
                raise broken(f"a public {e['type']} event carries the secret's length")
            if re.search(r"\d+ letters", str(e["data"].get("text", ""))):
                raise broken(f"a public {e['type']} text tells a length: {e['data']['text']}")
    prefixes = [e for e in events if e["type"] == "prefix"]
    if not prefixes or prefixes[0]["data"] != {"prefix": secret[0], "revealed": 1,
                                              "text": f"The first letter is {secret[0].upper()}."}:
        raise broken("the first announcement must be the first letter, and nothing else")

    prefix, blocked, used = secret[0], [], []
    attempt = 0
    giver = word = None
    guesses: dict[int, str] = {}
    won = False
    outcomes: list[str] = []
    curve: list[int] = []
    after_prefix = iter(prefixes[1:])

    def legal(w: str, a: int) -> None:
        if not w.startswith(prefix):
            raise broken(f"{w!r} does not start with the prefix {prefix!r}", a)
        if w not in d:
            raise broken(f"{w!r} is not in the dictionary", a)
        if w in blocked:
            raise broken(f"{w!r} is blocked, and came back", a)
        if w in used and w != secret:
            raise broken(f"{w!r} was used before", a)

    for e in events:
        t, data = e["type"], e["data"]
        if won and t in ("attempt_start", "clue", "guess", "scored"):
            raise broken("play went on after the guessers won", attempt)
        if t == "attempt_start":
            attempt += 1
            if int(data["attempt"]) != attempt or attempt > max_attempts:
                raise broken("attempts are numbered 1.. up to max_attempts", attempt)
            giver = guessers[(attempt - 1) % len(guessers)]
            if e["actor"] != giver or data["prefix"] != prefix:
                raise broken("the clue passes to the next guesser every attempt, on the "
                             "revealed prefix", attempt)
            word, guesses = None, {}
        elif t == "clue_word":
            if e["actor"] != giver or e["visibility"] != [giver]:
                raise broken("the clue word is the clue-giver's, and private", attempt)
            word = str(data["word"])
            legal(word, attempt)
        elif t == "clue":
            if word is None or word in _letters(str(data["clue"])):
                raise broken("a clue must not contain its word", attempt)
        elif t == "guess":
            seat = int(e["actor"])
            if seat == giver or seat in guesses:
                raise broken("the clue-giver does not guess; everyone else guesses once", attempt)
            guesses[seat] = str(data["word"])
            legal(guesses[seat], attempt)
        elif t == "scored":
            if data["word"] != word:
                raise broken("the scored word is the clue word", attempt)
            setter_named = word is not None and guesses.get(setter) == word
            connectors = sorted(s for s, g in guesses.items() if s != setter and g == word)
            if word is None:
                expected = "guesser_wrong"
            elif setter_named and word != secret:
                expected = "setter_blocked"
            elif connectors:
                expected = "connection"
            else:
                expected = "guesser_wrong"
            if data["outcome"] != expected:
                raise broken(f"outcome {data['outcome']}, the rules say {expected}", attempt)
            if expected == "connection" and data["connectors"] != connectors:
                raise broken("the connectors are the other guessers who named it", attempt)
            win = expected == "connection" and word == secret
            if bool(data["win"]) != win:
                raise broken(f"win={data['win']} for clue word {word!r}; the guessers win "
                             f"only with the secret {secret!r} as the clue word", attempt)
            was_full = prefix == secret
            if expected == "setter_blocked":
                blocked.append(str(word))
            elif word is not None:
                used.append(word)
            if expected == "connection":
                prefix = secret[:len(prefix) + 1]
                if not win:
                    p = next(after_prefix, None)
                    if p is None or p["data"]["prefix"] != prefix or \
                            p["data"]["revealed"] != len(prefix) or \
                            bool(p["data"].get("complete")) != was_full:
                        raise broken("a Connection reveals the next letter, or says that "
                                     "none is left once the whole secret is revealed", attempt)
            if data["prefix"] != prefix or data["blocked"] != blocked or data["used"] != used:
                raise broken("the scored prefix and lists", attempt)
            outcomes.append(expected)
            curve.append(len(prefix))
            won = win
        elif t == "game_over":
            want = "guessers_win" if won else "setter_wins"
            if data["result"] != want:
                raise broken(f"the game ended {data['result']}, the rules say {want}", attempt)
            if not won and attempt != max_attempts:
                raise broken("without a win the game ends after max_attempts", attempt)
    if next(after_prefix, None) is not None:
        raise broken("a letter was revealed without a Connection")

    det = result["details"]
    conns = outcomes.count("connection")
    reveals = conns - (1 if won else 0)
    expected_details = {
        "secret": secret, "attempts": attempt, "connections": conns, "reveals": reveals,
        "guesser_wrong": outcomes.count("guesser_wrong"),
        "setter_blocked": outcomes.count("setter_blocked"),
        "iterations": attempt - (1 if won else 0), "letters_revealed": len(prefix),
        "curve": curve, "blocked": blocked, "used": used,
    }
    for key, value in expected_details.items():
        if det[key] != value:
            raise broken(f"details.{key} = {det[key]!r}, the transcript says {value!r}")
    if reveals + det["guesser_wrong"] + det["setter_blocked"] != det["iterations"]:
        raise broken("Table 1's columns must add up to the iterations")
    winners = guessers if won else [setter]
    if sorted(result["winners"]) != sorted(winners):
        raise broken(f"winners {result['winners']}, the rules say {winners}")
    places = {int(s): p for s, p in result["placements"].items()}
    if any(places[s] != 1 for s in winners) or \
            any(p != 1 + len(winners) for s, p in places.items() if s not in winners):
        raise broken(f"placements {places} for winners {winners}")


def play_checked(players: Sequence[str], seed: int, word: str | None,
                 max_attempts: int) -> str:
    options: dict[str, Any] = {"max_attempts": max_attempts}
    if word is not None:
        options["word"] = word
    game = prepared(players, seed, **options)
    events: list[Any] = []
    outcome = asyncio.run(game.play(events.append))
    assert outcome.status == "completed", outcome.reason
    summary = outcome.summary
    result = {"winners": list(summary.winners), "details": summary.details,
              "placements": {str(s): p for s, p in outcome.placements.items()}}
    try:
        check_game([e.to_json() for e in events], result, wordfreq_english(), max_attempts)
    except Broken as exc:
        raise AssertionError(f"seed {seed}, players {list(players)}, word {word}: {exc}") \
            from None
    return str(summary.details["result"])


def _cases(count: int, seed0: int, lineups: Sequence[Sequence[str]]
           ) -> list[tuple[list[str], int, str | None, int]]:
    pick = random.Random(seed0)
    return [(list(lineups[i % len(lineups)]), seed0 + i, pick.choice(WORDS),
             pick.choice((8, 20, 50))) for i in range(count)]


def _run(cases: Sequence[tuple[list[str], int, str | None, int]]) -> dict[str, int]:
    results: dict[str, int] = {}
    for players, seed, word, max_attempts in cases:
        r = play_checked(players, seed, word, max_attempts)
        results[r] = results.get(r, 0) + 1
    return results


def test_checker_finds_no_broken_rule_in_fast_games() -> None:
    # Semantic seats cost about a second a game: the fast suite plays them in the test
    # below, and 60 of them under `slow`.
    results = _run(_cases(60, 40_000, FAST_LINEUPS))
    # Both endings happen, so both were checked (the test can fail on either).
    assert results.get("guessers_win", 0) >= 5 and results.get("setter_wins", 0) >= 5, results


@pytest.mark.slow
def test_checker_finds_no_broken_rule_in_800_games() -> None:
    results = _run(_cases(740, 50_000, FAST_LINEUPS) + _cases(60, 51_000, SEMANTIC_LINEUPS))
    assert sum(results.values()) == 800
    assert results.get("guessers_win", 0) >= 50 and results.get("setter_wins", 0) >= 50


def test_the_whole_secret_case_is_reached_and_checked() -> None:
    """The checker's hard case happens in these games: a Connection on another word
    reveals the last letter, and play goes on (several in a row for `cat`)."""
    events: list[Any] = []
    game = prepared(["frequency", "semantic", "semantic"], 3, word="cat", max_attempts=20)
    outcome = asyncio.run(game.play(events.append))
    history = outcome.summary.details["history"]
    full = [h for h in history if h["outcome"] == "connection" and h["word"] != "cat"
            and len(h["prefix"]) + 1 >= 3]
    assert full, history  # a Connection that revealed the last T (or nothing) with no win
    assert outcome.summary.details["result"] == "guessers_win"
    assert history[-1]["word"] == "cat"
    check_game([e.to_json() for e in events],
               {"winners": list(outcome.summary.winners), "details": outcome.summary.details,
                "placements": {str(s): p for s, p in outcome.placements.items()}},
               wordfreq_english(), 20)


@pytest.mark.parametrize("planted", ["win_on_last_letter", "reveal_without_connection",
                                     "length_announced", "outcome_changed"])
def test_the_checker_catches_a_planted_break(planted: str) -> None:
    """The checker is not blind: each hand-broken copy of a real transcript fails it."""
    events: list[Any] = []
    game = prepared(["frequency", "semantic", "semantic"], 3, word="cat", max_attempts=20)
    outcome = asyncio.run(game.play(events.append))
    ev = [e.to_json() for e in events]
    result = {"winners": list(outcome.summary.winners), "details": outcome.summary.details,
              "placements": {str(s): p for s, p in outcome.placements.items()}}
    check_game(ev, result, wordfreq_english(), 20)  # as played: no broken rule
    scored = [i for i, e in enumerate(ev) if e["type"] == "scored"]
    if planted == "win_on_last_letter":
        # The old engine: the Connection that revealed the last letter won.
        i = next(i for i in scored if ev[i]["data"]["prefix"] == "cat")
        ev[i]["data"]["win"] = True
    elif planted == "reveal_without_connection":
        ev.insert(scored[0] + 1, {"type": "prefix", "visibility": "public", "actor": None,
                                  "data": {"prefix": "ca", "revealed": 2, "text": "x"}})
    elif planted == "length_announced":
        i = next(i for i, e in enumerate(ev) if e["type"] == "prefix")
        ev[i]["data"]["length"] = 3
    else:
        ev[scored[0]]["data"]["outcome"] = "guesser_wrong"
    with pytest.raises(Broken):
        check_game(ev, result, wordfreq_english(), 20)
