"""The imported transcripts, event by event, against the hand-written fixtures."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stille_post.core.transcript import Transcript
from stille_post.games.elimination import EVENTS
from stille_post.games.elimination.importer.convert import parse_player

G1 = "eg-1754984898827689.jsonl"
P = "Player{}_Game1754984898827689_{}"
MODELS = {1: "o1-mini", 2: "gpt-4o", 3: "claude-3-5-sonnet_20241022", 4: "gemini-2.0-flash"}

# Game 1, every event: "type round turn actor visibility" (visibility: pub, log, or seats).
GAME1 = """
game_start 0 0 - pub
round_start 1 0 - pub
speaking_order 1 0 - pub
public_message 1 1 3 pub
public_message 1 2 1 pub
public_message 1 3 4 pub
public_message 1 4 2 pub
phase 1 4 - pub
pairing_trace 1 4 - log
pairing 1 4 - pub
phase 1 4 - pub
""" + "".join(f"private_message 1 4 {a} {v}\n" for _ in range(3) for a, v in
              ((4, "1,4"), (1, "1,4"), (2, "2,3"), (3, "2,3"))) + """
phase 1 4 - pub
vote 1 4 1 1
vote_reason 1 4 1 log
vote 1 4 2 2
vote_reason 1 4 2 log
vote 1 4 3 3
vote_reason 1 4 3 log
vote 1 4 4 4
vote_reason 1 4 4 log
vote_result 1 4 - pub
elimination 1 4 4 pub
round_start 2 4 - pub
speaking_order 2 4 - pub
public_message 2 5 2 pub
public_message 2 6 1 pub
public_message 2 7 3 pub
phase 2 7 - pub
pairing_trace 2 7 - log
pairing 2 7 - pub
phase 2 7 - pub
""" + "".join(f"private_message 2 7 {a} 1,3\n" for _ in range(3) for a in (1, 3)) + """
phase 2 7 - pub
vote 2 7 1 1
vote_reason 2 7 1 log
vote 2 7 2 2
vote_reason 2 7 2 log
vote 2 7 3 3
vote_reason 2 7 3 log
vote_result 2 7 - pub
tie 2 7 - pub
speaking_order 2 7 - pub
tie_break_message 2 8 2 pub
tie_break_message 2 9 1 pub
vote 2 9 3 3
vote_reason 2 9 3 log
tie_break 2 9 - pub
tie_break 2 9 - pub
elimination 2 9 2 pub
phase 3 9 - pub
speaking_order 3 9 - pub
final_message 3 10 3 pub
final_message 3 11 1 pub
phase 3 11 - pub
vote 3 11 2 2
vote_reason 3 11 2 log
vote 3 11 4 4
vote_reason 3 11 4 log
vote_result 3 11 - pub
elimination 3 11 1 pub
game_over 3 11 - pub
reveal 3 11 - pub
"""


def _vis(v: Any) -> str:
    return "pub" if v == "public" else "log" if v == [] else ",".join(map(str, v))


def _shape(e: dict[str, Any]) -> str:
    actor = "-" if e["actor"] is None else str(e["actor"])
    return f"{e['type']} {e['round']} {e['turn']} {actor} {_vis(e['visibility'])}"


def _events(folder: Path, name: str, read: Callable[[Path], list[dict[str, Any]]]
            ) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    lines = read(folder / "games" / name)
    return lines[0], lines[1:-1], lines[-1]


def test_game1_event_by_event(imported: Path, read_jsonl: Any) -> None:
    _, events, _ = _events(imported, G1, read_jsonl)
    want = [x for x in GAME1.strip().splitlines() if x]
    assert [_shape(e) for e in events] == want
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["type"] for e in events} <= set(EVENTS)  # only the engine's vocabulary


def test_game1_header_seats_and_marker(imported: Path, read_jsonl: Any, logs: Path) -> None:
    header, _, result = _events(imported, G1, read_jsonl)
    assert header["game"] == "elimination"
    assert header["imported_from"] == {
        "format": "elimination-logs", "game_id": "1754984898827689", "lines": 72,
        "source": str(logs / "game_1754984898827689.jsonl")}
    assert {int(s): v["player"] for s, v in header["seats"].items()} == MODELS
    assert result["placements"] == {"1": 2, "2": 3, "3": 1, "4": 4}
    s = result["summary"]
    assert (s["winners"], s["eliminated"], s["valid"], s["turns"]) == ([3], [4, 2, 1], True, 11)
    d = s["details"]
    assert d["decided_by"] == {"4": "votes", "2": "cumulative", "1": "votes"}
    assert d["cumulative"] == {"1": 1, "2": 2, "3": 0, "4": 3}
    assert d["jury_votes"] == {"2": 1, "4": 1}
    assert d["over_limit_messages"] == 2 and d["finalists"] == [1, 3] and d["rounds"] == 3


def test_every_message_kept_whole_with_its_fields(imported: Path, read_jsonl: Any,
                                                  logs: Path) -> None:
    """Each conversation and private line is one message event with its whole text."""
    source = read_jsonl(logs / "game_1754984898827689.jsonl")
    _, events, _ = _events(imported, G1, read_jsonl)
    messages = [e for e in events if e["type"].endswith("_message")]
    said = [x for x in source if x["type"] in ("conversation", "private")]
    assert len(messages) == len(said)
    for e, line in zip(messages, said, strict=True):
        speaker = line.get("player_id") or line["speaker_id"]
        assert e["actor"] == e["data"]["seat"] == parse_player(speaker)[0]
        assert e["data"]["text"] == line["message"]  # never cut, never escaped
        if line["type"] == "private":
            assert e["data"]["to"] == parse_player(line["target_id"])[0]
            assert e["data"]["subround"] == line["subround"]
            assert e["data"]["limit_words"] == (70, 50, 30)[line["subround"] - 1]
    long_public = next(e for e in messages if e["actor"] == 4)
    assert long_public["data"]["over_limit"] is True
    assert long_public["data"]["words"] > long_public["data"]["limit_words"] == 80
    long_private = [e for e in messages if e["type"] == "private_message"][-1]  # limit 30
    assert long_private["data"]["over_limit"] is True
    assert long_private["data"]["limit_words"] == 30
    empty = next(e for e in messages if e["actor"] == 2)
    assert empty["data"]["empty"] is True and empty["data"]["text"] == ""
    assert sum(bool(e["data"].get("over_limit")) for e in messages) == 2


def test_game1_pairing_votes_and_ties(imported: Path, read_jsonl: Any) -> None:
    _, events, _ = _events(imported, G1, read_jsonl)
    by = [e for e in events if e["type"] == "pairing_trace"]
    assert by[0]["data"]["entry_order"] == [2, 4, 3, 1]
    assert by[0]["data"]["steps"] == [
        {"proposer": 2, "receiver": 1, "result": "accepted", "rank_of_target": 1},
        {"proposer": 4, "receiver": 1, "result": "swapped", "displaced": 2, "rank_of_target": 1},
        {"proposer": 2, "receiver": 3, "result": "accepted", "rank_of_target": 2},
        {"proposer": 3, "receiver": 1, "result": "rejected", "rank_of_target": 1},
        {"proposer": 3, "receiver": 2, "result": "accepted", "rank_of_target": 2},
        {"proposer": 1, "receiver": 4, "result": "accepted", "rank_of_target": 1}]
    assert by[1]["data"]["exhausted"] == [2]
    pairings = [e["data"] for e in events if e["type"] == "pairing"]
    assert [(p["pairs"], p["unpaired"]) for p in pairings] == [([[4, 1], [2, 3]], []),
                                                               ([[1, 3]], [2])]
    votes = [e["data"] for e in events if e["type"] == "vote"]
    assert [(v["voter"], v["stage"], v["target"], v["valid"]) for v in votes] == [
        (1, "vote", 4, True), (2, "vote", 4, True), (3, "vote", 4, True), (4, "vote", 2, True),
        (1, "vote", 2, True), (2, "vote", 1, True), (3, "vote", 3, False),
        (3, "revote", 3, False), (2, "jury", 1, True), (4, "jury", 1, True)]
    assert votes[0]["timestamp"] == "2025-08-12T09:41:02" and votes[0]["public_vote"] is False
    assert votes[6]["invalid"] == "self-vote" and votes[-1]["from_reason"] is True
    reasons = [e["data"] for e in events if e["type"] == "vote_reason"]
    assert reasons[0]["reason"] == "P4 will go anyway; better to be on the winning side."
    assert [r["stage"] for r in reasons].count("revote") == 1
    results = [e["data"] for e in events if e["type"] == "vote_result"]
    assert [(r["stage"], r["counts"], r["invalid"], r["leaders"]) for r in results] == [
        ("vote", {"2": 1, "4": 3}, 0, [4]), ("vote", {"1": 1, "2": 1}, 1, [1, 2]),
        ("jury", {"1": 2}, 0, [1])]
    tie = next(e["data"] for e in events if e["type"] == "tie")
    assert (tie["tied"], tie["revoters"]) == ([1, 2], [3])
    steps = [e["data"] for e in events if e["type"] == "tie_break"]
    assert [(s["step"], s["leaders"], s["decided"]) for s in steps] == [
        ("revote", [1, 2], False), ("cumulative", [2], True)]
    assert steps[1]["cumulative"] == {"1": 1, "2": 2}
    elims = [e["data"] for e in events if e["type"] == "elimination"]
    assert [(x["seat"], x["stage"], x["votes"], x["decided_by"], x["rank"]) for x in elims] == [
        (4, "vote", 3, "votes", 4), (2, "vote", 1, "cumulative", 3), (1, "jury", 2, "votes", 2)]
    # The log's own flags, which have no counterpart, are kept under the event's data.
    assert (elims[1]["tie_break"], elims[1]["cumu_check"], elims[1]["random_pick"]) == \
        (True, True, False)
    assert "recount_differs" not in elims[1]


def test_bare_ids_three_way_tie(imported: Path, read_jsonl: Any) -> None:
    header, events, result = _events(imported, "eg-bare-001.jsonl", read_jsonl)
    assert {v["player"] for v in header["seats"].values()} == {"unknown"}
    assert all("model" not in v for v in header["seats"].values())
    tie = next(e["data"] for e in events if e["type"] == "tie")
    assert (tie["tied"], tie["revoters"]) == ([1, 2, 3], [])
    assert not any(e["type"] == "tie_break_message" for e in events)
    steps = [e["data"] for e in events if e["type"] == "tie_break"]
    assert [(s["step"], s["leaders"]) for s in steps] == [("cumulative", [1, 2, 3]),
                                                          ("rng", [2])]
    assert steps[1]["picked"] == 2
    elim = next(e["data"] for e in events if e["type"] == "elimination")
    assert (elim["seat"], elim["decided_by"]) == (2, "rng")
    finals = [e for e in events if e["type"] == "final_message"]
    assert [e["actor"] for e in finals] == [3, 1] and finals[0]["data"]["source_subround"] \
        == "final"
    assert result["placements"] == {"1": 2, "2": 3, "3": 1}


def test_two_games_in_one_file(imported: Path, read_jsonl: Any) -> None:
    h5, ev5, _ = _events(imported, "eg-1754990000000005.jsonl", read_jsonl)
    _h6, ev6, r6 = _events(imported, "eg-1754990000000006.jsonl", read_jsonl)
    assert h5["seats"]["1"]["player"] == h5["seats"]["3"]["player"] == "deepseek-r1"
    first = next(e for e in ev5 if e["type"] == "public_message")
    assert first["data"]["timestamp"] == "2025-08-13T10:00:00"  # an extra field, kept
    bad = next(e["data"] for e in ev6 if e["type"] == "vote" and e["data"]["voter"] == 3)
    assert (bad["target"], bad["valid"], bad["invalid"], bad["source_target"]) == \
        (None, False, "no answer", "nobody")
    assert r6["summary"]["winners"] == [1]


def test_transcripts_read_back(imported: Path) -> None:
    """Our own reader takes every imported transcript as complete."""
    for path in sorted((imported / "games").glob("*.jsonl")):
        t = Transcript.load(path)
        assert t.complete and t.game == "elimination"
        assert json.loads(path.read_text().splitlines()[-1])["kind"] == "result"


def test_over_limit_is_marked_at_the_exact_word(logs: Path, read_jsonl: Any) -> None:
    """80 words is within the public limit, 81 is over; the text stays whole either way."""
    from stille_post.games.elimination.importer.convert import convert_game

    lines = read_jsonl(logs / "game_bare_ids.jsonl")
    texts = {"P1": " ".join(["w"] * 80), "P2": " ".join(["w"] * 81), "P3": "x " * 5000}
    for line in lines:
        if line["type"] == "conversation" and line["round"] == 1:
            line["message"] = texts[line["player_id"]]
    c = convert_game("bare-001", lines, sources=["g.jsonl"])
    public = [json.loads(x) for x in c.lines if '"public_message"' in x]
    marks = {e["actor"]: (e["data"]["words"], e["data"].get("over_limit")) for e in public}
    assert marks == {1: (80, None), 2: (81, True), 3: (5000, True)}
    assert public[2]["data"]["text"] == texts["P3"]  # 5,000 words, not cut
    assert c.summary.details["over_limit_messages"] == 2


def _convert(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from stille_post.games.elimination.importer.convert import convert_game

    c = convert_game(str(lines[0]["game_id"]), lines, sources=["g.jsonl"])
    return [json.loads(x) for x in c.lines[1:-1]]


def test_a_tie_break_our_recount_does_not_see_is_kept(logs: Path, read_jsonl: Any) -> None:
    """Round 2's self-vote made valid: our recount has no tie, the log has a tie-break.
    Its statements and re-vote are still imported, and the difference is marked."""
    lines = read_jsonl(logs / "game_1754984898827689.jsonl")
    i = next(i for i, x in enumerate(lines) if x["type"] == "vote"
             and x["voter_id"].startswith("Player3_") and x.get("timestamp", "").endswith("44:11"))
    lines[i]["target_id"] = "Player2_Game1754984898827689_gpt-4o"
    events = _convert(lines)
    result = [e["data"] for e in events if e["type"] == "vote_result"][1]
    assert result["leaders"] == [2] and result["tie"] is False
    tie = next(e["data"] for e in events if e["type"] == "tie")
    assert (tie["tied"], tie["recount_differs"]) == ([1, 2], True)
    said = [e["data"]["text"] for e in events if e["type"] == "tie_break_message"]
    assert said == ["Keep me: P1 breaks every deal.", "Keep me: P2 only accuses."]
    assert any(e["type"] == "vote" and e["data"]["stage"] == "revote" for e in events)
    elim = [e["data"] for e in events if e["type"] == "elimination"][1]
    assert (elim["seat"], elim["recount_differs"], elim["decided_by"]) == (2, True,
                                                                          "cumulative")


def test_pairs_from_private_lines_without_a_preference_result(logs: Path,
                                                              read_jsonl: Any) -> None:
    lines = [x for x in read_jsonl(logs / "game_1754984898827689.jsonl")
             if not x["type"].startswith("preference_")]
    events = _convert(lines)
    pairings = [e["data"] for e in events if e["type"] == "pairing"]
    assert [(p["pairs"], p["unpaired"], p["pairs_from"]) for p in pairings] == [
        ([[4, 1], [2, 3]], [], "private"), ([[1, 3]], [2], "private")]
    trace = next(e["data"] for e in events if e["type"] == "pairing_trace")
    assert trace["steps"] == [] and trace["entry_order"] == []


def test_a_voter_logged_twice_keeps_both_reasons(logs: Path, read_jsonl: Any) -> None:
    lines = read_jsonl(logs / "game_1754984898827689.jsonl")
    i = next(i for i, x in enumerate(lines) if x["type"] == "vote")  # P1's vote, round 1
    first = {**lines[i], "target_id": "Player2_Game1754984898827689_gpt-4o"}
    again = {**lines[i - 4], "reason": "Changed my mind."}  # P1's reason, repeated
    events = _convert([*lines[:i], again, first, *lines[i:]])
    mine = [e["data"] for e in events if e["round"] == 1 and e["actor"] == 1
            and e["type"] in ("vote", "vote_reason")]
    assert [(d.get("target"), d.get("valid"), d.get("superseded"), d.get("reason"))
            for d in mine] == [
        (2, False, True, None), (4, True, None, None),
        (4, None, None, "P4 will go anyway; better to be on the winning side."),
        (4, None, None, "Changed my mind.")]
    result = next(e["data"] for e in events if e["type"] == "vote_result")
    assert result["counts"] == {"2": 1, "4": 3} and result["invalid"] == 0


def test_metrics_count_imported_over_limit_messages(imported: Path, read_jsonl: Any) -> None:
    """Imported texts are kept whole and only marked `over_limit`; the game's metrics still
    count them among `over_limit_messages`, as they count the engine's cuts."""
    from stille_post.games.elimination.metrics import compute_metrics

    t = Transcript.load(imported / "games" / G1)
    marked = sum(bool(e.data.get("over_limit")) for e in t.events)
    assert marked == 2
    assert compute_metrics([t])["overall"]["over_limit_messages"] == marked
