"""Import benchmark (`python -m benchmarks import`): the published Elimination Game logs
are 3,988 eight-seat games in about 460 MB of JSONL. Synthetic logs of the same shape are
generated into a temporary folder (never the repository), then imported by
`stille-post import elimination logs` in a subprocess, whose wall time and peak memory
(ru_maxrss) are the figures. Targets: under 2 minutes and under 500 MB.

Sizes come from the environment so CI can run it smaller:
    BENCH_IMPORT_GAMES=3988 BENCH_IMPORT_MB=460 BENCH_IMPORT_DIR=/tmp/... (kept for reuse)
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODELS = [f"model-{i:02d}" for i in range(48)]
WORDS = ["alliance", "trust", "vote", "threat", "partner", "jury", "final", "round",
         "player", "keep", "betray", "quiet", "strong", "weak", "plan", "deal", "promise",
         "honest", "fair", "strategy", "listen", "agree", "careful"]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def game_lines(i: int, scale: float = 1.0) -> list[str]:
    """One eight-seat game in the published format: six rounds of public statements,
    proposals, pairs, three private subrounds, votes with reasons (a tie now and then),
    then the final and the jury. Texts run up to `scale` times their word limits (the
    published models often wrote past them)."""
    rng = random.Random(i)

    def say(limit: int) -> str:
        n = max(2, round(limit * scale))
        return _text(rng, rng.randint(n // 2, n))

    gid = str(1754000000000000 + i)
    models = rng.sample(MODELS, 8)
    pid = {s: f"Player{s}_Game{gid}_{models[s - 1]}" for s in range(1, 9)}
    out: list[dict[str, Any]] = []

    def add(t: str, **f: Any) -> None:
        out.append({"game_id": gid, "type": t, **f})

    active = list(range(1, 9))
    eliminated: list[int] = []
    rnd = 0
    while len(active) > 2:
        rnd += 1
        for s in rng.sample(active, len(active)):
            huge = i == 7 and rnd == 1 and s == active[0]  # one message of 39,834 words
            add("conversation", round=rnd, subround=0, player_id=pid[s],
                message="" if rng.random() < 0.002 else
                _text(rng, 39_834) if huge else say(80))
        order = rng.sample(active, len(active))
        pairs = [order[j:j + 2] for j in range(0, len(order) - 1, 2)]
        for a, b in pairs:
            for x, y in ((a, b), (b, a)):
                add("preference_proposal", round=rnd, proposer=f"P{x}", target=f"P{y}",
                    rank_of_target=1)
                add("preference_outcome", round=rnd, target=f"P{y}", accepted=True)
        add("preference_result", round=rnd, matched_pairs=[[f"P{a}", f"P{b}"] for a, b in pairs])
        for sub, limit in ((1, 70), (2, 50), (3, 30)):
            for a, b in pairs:
                for x, y in ((a, b), (b, a)):
                    add("private", round=rnd, subround=sub, speaker_id=pid[x], target_id=pid[y],
                        message=say(limit))
        loser = rng.choice(active)
        tie = rng.random() < 0.15 and len(active) > 3
        rival = rng.choice([s for s in active if s != loser])
        votes = {s: (loser if s != loser else rival) for s in active}
        if tie:  # loser and rival each get half of the others' votes
            votes[rival] = loser
            others = [s for s in active if s not in (loser, rival)]
            half = len(others) // 2
            for k, s in enumerate(others):
                if k >= 2 * half:  # the odd one out names a third seat: one vote, no lead
                    votes[s] = next(x for x in others if x != s)
                else:
                    votes[s] = loser if k < half else rival
        for s, t in votes.items():
            add("private_vote_reason", voter_id=pid[s], target_id=pid[t],
                reason=say(40))
        for s, t in votes.items():
            add("vote", round=rnd, voter_id=pid[s], target_id=pid[t], public_vote=False,
                timestamp=f"2025-08-{1 + i % 28:02d}T10:{rnd:02d}:00")
        counts = {t: list(votes.values()).count(t) for t in set(votes.values())}
        leaders = [t for t, c in counts.items() if c == max(counts.values())]
        if len(leaders) > 1:
            for s in leaders:
                add("conversation", round=rnd, subround=0, player_id=pid[s],
                    message=say(50))
            for s in active:
                if s not in leaders:
                    add("private_revote_reason", voter_id=pid[s], target_id=pid[loser],
                        reason=say(20))
                    add("vote", round=rnd, voter_id=pid[s], target_id=pid[loser],
                        public_vote=False)
            loser = loser if loser in leaders else leaders[0]
        else:
            loser = leaders[0]
        active.remove(loser)
        eliminated.append(loser)
        add("elimination", round=rnd, eliminated_player=pid[loser], tie_break=len(leaders) > 1,
            random_pick=False)
    for s in active:
        add("conversation", round=rnd + 1, subround=0, player_id=pid[s], message=say(80))
    jury = {s: rng.choice(active) for s in eliminated}
    for s, t in jury.items():
        add("private_jury_reason", voter_id=pid[s], target_id=pid[t], reason=say(40))
    tally = {f: list(jury.values()).count(f) for f in active}
    out_final = max(active, key=lambda f: (tally[f], f))
    winner = next(s for s in active if s != out_final)
    ranks = {winner: 1, out_final: 2, **{s: 8 - k for k, s in enumerate(eliminated)}}
    add("final_results", winners=[f"P{winner}"], winners_full=[pid[winner]],
        final_ranks={pid[s]: r for s, r in ranks.items()})
    return [json.dumps(x) for x in out]


def generate(folder: Path, games: int, megabytes: float) -> int:
    """Write `games` files totalling about `megabytes`; reuse a folder already made."""
    stamp = folder / ".bench-import.json"
    want = {"games": games, "mb": megabytes, "v": 4}
    if stamp.exists() and json.loads(stamp.read_text()) == want:
        return sum(p.stat().st_size for p in folder.glob("*.jsonl"))
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    # A game's bytes are about linear in the text scale (ids and fields are fixed): probe
    # two scales and solve for the per-game budget. Game 7 holds the one enormous
    # message: left out of the probe, it would skew it.
    def probe(scale: float) -> float:
        return sum(len(x) + 1 for i in range(20, 40) for x in game_lines(i, scale)) / 20

    low, high = probe(1.0), probe(2.0)
    scale = max(0.2, 1.0 + (megabytes * 1e6 / games - low) / (high - low))
    total = 0
    for i in range(games):
        text = "\n".join(game_lines(i, scale)) + "\n"
        (folder / f"game_{i:05d}.jsonl").write_text(text, encoding="utf-8")
        total += len(text.encode("utf-8"))
    stamp.write_text(json.dumps(want))
    return total


def main() -> None:
    games = int(os.environ.get("BENCH_IMPORT_GAMES", 3988))
    mb = float(os.environ.get("BENCH_IMPORT_MB", 460))
    logs = Path(os.environ.get("BENCH_IMPORT_DIR")
                or Path(tempfile.gettempdir()) / f"stille-post-bench-import-{games}-{mb:g}")
    t0 = time.perf_counter()
    size = generate(logs, games, mb)
    print(f"   synthetic logs: {games} games, {size / 1e6:.0f} MB in {logs} "
          f"({time.perf_counter() - t0:.0f} s to make or reuse)")
    with tempfile.TemporaryDirectory(prefix="bench-import-out-") as tmp:
        out = Path(tmp) / "imported"
        load = os.getloadavg()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t1 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", "from stille_post.cli import main; main()", "import",
             "elimination", "logs", str(logs), "--out", str(out), "--json"],
            capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t1
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak_mb = after.ru_maxrss / 1024  # KiB on Linux; the only child is the import
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            print(f"   import failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
            return
        stats = json.loads(proc.stdout)
        written = sum(p.stat().st_size for p in (out / "games").glob("*.jsonl"))
        print(f"   imported {stats['imported']} of {stats['games_read']} games, skipped "
              f"{stats['skipped']}; transcripts {written / 1e6:.0f} MB")
        print(f"   wall {wall:.1f} s (target < 120 s), CPU {cpu:.1f} s, peak RSS "
              f"{peak_mb:.0f} MB (target < 500 MB); {size / 1e6 / wall:.1f} MB/s")
        print(f"   load average at the start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
              f"on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
