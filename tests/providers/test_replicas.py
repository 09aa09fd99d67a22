"""Replicas behind one alias (providers/replicas.py): calls go to the least busy live
replica, a replica whose connection fails is taken out and its calls are sent to another
at once, a taken-out replica is probed again after a back-off, and the calls per
replica are counted for the progress line and the summary."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.errors import GameAborted, ProviderError
from stille_post.providers import replicas
from stille_post.providers.base import ChatRequest, Completion, Message, Usage
from stille_post.providers.preflight import Probe
from stille_post.providers.replicas import ReplicaSet, Watched, watching
from stille_post.providers.retry import RetryPolicy, no_sleep
from tests import clirun

LOOPBACK = pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
REQUEST = ChatRequest(system="s", messages=[Message("user", "hi")])


class Fake:
    """A replica's adapter: answers after `delay`, or fails on the connection."""

    def __init__(self, name: str, delay: float = 0.0) -> None:
        self.name, self.delay = name, delay
        self.dead = False
        self.calls = 0
        self.in_flight = 0
        self.peak = 0

    async def complete(self, request: ChatRequest) -> Completion:
        self.calls += 1
        if self.dead:
            raise ProviderError(f"x: could not reach the provider ({self.name} refused)",
                                retryable=True)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        return Completion(self.name, [], Usage(), "m")


@pytest.fixture(autouse=True)
def _fresh_counts() -> None:
    replicas.reset_counts()


def _watched(fakes: list[Fake], urls: list[str] | None = None) -> Watched:
    urls = urls or [f"http://127.0.0.1:{9100 + i}/v1" for i in range(len(fakes))]
    return Watched("openai-compatible", urls, fakes, label="model:rep",
                   policy=RetryPolicy(sleep=no_sleep, jitter=lambda: 0.0))


def test_calls_go_to_the_replica_with_the_fewest_in_flight() -> None:
    a, b = Fake("a", 0.01), Fake("b", 0.03)  # b is three times as slow

    async def run() -> list[str]:
        seat = _watched([a, b])
        return [c.text for c in await asyncio.gather(*(seat.complete(REQUEST)
                                                       for _ in range(60)))]

    answers = asyncio.run(run())
    assert len(answers) == 60
    # All 60 start at once: least-in-flight alternates them, 30 each (the counts too).
    assert (a.calls, b.calls) == (30, 30)
    assert replicas.counts() == {"http://127.0.0.1:9100/v1": {"calls": 30, "failed": 0},
                                 "http://127.0.0.1:9101/v1": {"calls": 30, "failed": 0}}


def test_a_slow_replica_gets_fewer_calls_when_they_arrive_over_time() -> None:
    a, b = Fake("a", 0.005), Fake("b", 0.05)

    async def run() -> None:
        seat = _watched([a, b])

        async def stream() -> None:
            for _ in range(20):
                await seat.complete(REQUEST)

        await asyncio.gather(*(stream() for _ in range(4)))

    asyncio.run(run())
    assert a.calls > 2 * b.calls  # the busy one is passed over


def test_a_dead_replica_is_taken_out_and_its_calls_answered_by_the_other() -> None:
    a, b = Fake("a", 0.001), Fake("b", 0.001)
    b.dead = True
    notices: list[str] = []

    async def run() -> list[str]:
        seat = _watched([a, b])
        return [(await seat.complete(REQUEST)).text for _ in range(10)]

    with watching(notices.append):
        answers = asyncio.run(run())
    assert answers == ["a"] * 10  # no call failed
    assert b.calls == 1  # tried once, then out (its back-off has not run out)
    assert len(notices) == 1 and "127.0.0.1:9101" in notices[0]
    assert "its calls go to the other replicas" in notices[0]
    assert replicas.counts()["http://127.0.0.1:9101/v1"] == {"calls": 1, "failed": 1}


def test_a_taken_out_replica_is_probed_after_its_back_off_and_comes_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    probes: list[str] = []

    def fake_probe(kind: str, url: str, timeout_s: float = 1.5) -> Probe:
        probes.append(url)
        return Probe(url)  # alive again

    monkeypatch.setattr(replicas, "probe", fake_probe)
    rs = ReplicaSet("openai-compatible", ["http://a/v1", "http://b/v1"], clock=lambda: now[0])

    async def run() -> None:
        b = rs.replicas[1]
        rs.take_out(b)
        assert rs.pick() is rs.replicas[0] and not b.live
        now[0] = 0.5  # before the back-off (1 s): no probe
        rs.pick()
        assert probes == []
        now[0] = 1.01
        rs.pick()  # due: a probe starts, in the background
        await asyncio.sleep(0.05)
        assert probes == ["http://b/v1"] and b.live and b.backoff == replicas.FIRST_BACKOFF_S

    asyncio.run(run())


def test_a_replica_that_stays_down_waits_longer_each_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    monkeypatch.setattr(replicas, "probe",
                        lambda kind, url, timeout_s=1.5: Probe(url, "connection refused"))
    rs = ReplicaSet("openai-compatible", ["http://a/v1", "http://b/v1"], clock=lambda: now[0])

    async def run() -> list[float]:
        b = rs.replicas[1]
        rs.take_out(b)
        waits = []
        for _ in range(7):
            now[0] = b.down_until or 0.0
            rs.pick()
            await asyncio.sleep(0.02)
            waits.append(b.backoff)
        return waits

    assert asyncio.run(run()) == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]


def test_every_replica_down_is_one_line_and_with_strict_an_abort() -> None:
    a, b = Fake("a"), Fake("b")
    a.dead = b.dead = True
    notices: list[str] = []

    async def ask(seat: Watched) -> None:
        await seat.complete(REQUEST)

    with watching(notices.append):
        for _ in range(3):
            with pytest.raises(ProviderError, match="none of its 2 replicas answers"):
                asyncio.run(ask(_watched([a, b])))
    # One line per URL, not per call: the first out sends its calls to the other, the
    # last out leaves the seat waiting for one to come back.
    assert len(notices) == 2
    assert "9100" in notices[0] and "its calls go to the other replicas" in notices[0]
    assert "9101" in notices[1] and "model:rep waits for a replica" in notices[1]
    with watching(notices.append, strict=True), pytest.raises(GameAborted, match="--strict"):
        asyncio.run(ask(_watched([a, b])))


def test_a_single_server_that_dies_is_one_warning_line_then_each_turn_fails_fast(
        monkeypatch: pytest.MonkeyPatch) -> None:
    a = Fake("a")
    a.dead = True
    probes: list[str] = []

    def fake_probe(kind: str, url: str, timeout_s: float = 1.5) -> Probe:
        probes.append(url)
        return Probe(url, "connection refused")

    monkeypatch.setattr(replicas, "probe", fake_probe)
    notices: list[str] = []
    seat = _watched([a])
    with watching(notices.append):
        for _ in range(4):
            with pytest.raises(ProviderError):
                asyncio.run(seat.complete(REQUEST))
    assert len(notices) == 1 and "stopped answering" in notices[0]
    assert "model:rep forfeits its turns" in notices[0]
    assert a.calls == 1 and len(probes) == 3  # later turns: a probe, not the retry loop
    with watching(notices.append, strict=True), pytest.raises(GameAborted, match="--strict"):
        asyncio.run(_watched([a]).complete(REQUEST))


def test_counts_add_up_across_worker_processes() -> None:
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    urls = ["http://a/v1", "http://b/v1"]
    with replicas.share_counts(urls, 2, ctx) as join:
        def work(k: int) -> None:
            join(k)
            for _ in range(5 + k):
                replicas._COUNTS.add(urls[k], 0)

        procs = [ctx.Process(target=work, args=(k,)) for k in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        replicas._COUNTS.add(urls[0], 1)  # this process's own
    assert replicas.counts() == {"http://a/v1": {"calls": 5, "failed": 1},
                                 "http://b/v1": {"calls": 6, "failed": 0}}


# --- the done-when run: two servers, one killed midway through 40 games ----------------------

MODELS = """
[models.rep-a]
provider = "openai-compatible"
model = "tiny-a"
base_url = ["{a}", "{b}"]

[models.rep-b]
provider = "openai-compatible"
model = "tiny-b"
base_url = ["{a}", "{b}"]
"""


@LOOPBACK
@pytest.mark.slow
def test_forty_games_survive_a_replica_killed_midway(tmp_path: Path) -> None:
    from benchmarks.loopback import loopback_server

    with loopback_server("openai", 0.01) as a, loopback_server("openai", 0.01) as b:
        (tmp_path / "models.toml").write_text(MODELS.format(a=a, b=b), encoding="utf-8")
        out = tmp_path / "t"
        seen: dict[str, int] = {}

        def kill_midway() -> None:
            while len(list((out / "games").glob("*.jsonl"))) < 20:
                time.sleep(0.02)
            seen["a"], seen["b"] = a.calls(), b.calls()  # both up until here
            os.kill(b.pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_midway, daemon=True)
        killer.start()
        proc = clirun.run_cli(
            "tournament", "stille-post", "--online", "--games", "40", "--seed", "1",
            "--players", "model:rep-a,model:rep-b,detective,random", "--max-rounds", "2",
            "--concurrency", "8", "--workers", "2", "--out", "t", "--json",
            cwd=tmp_path, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
        killer.join(timeout=5)
        assert proc.returncode == 0, proc.stderr
        summary = json.loads(proc.stdout)
        a_calls = a.calls()
    assert summary["this_run"]["played"] == 40
    assert summary["status"]["completed"] == 40 and summary["status"]["aborted"] == 0
    # Calls spread evenly while both were up (within ±20% of their mean).
    mean = (seen["a"] + seen["b"]) / 2
    assert mean > 50 and abs(seen["a"] - seen["b"]) <= 0.2 * mean, seen
    # The kill cost no forfeit: every decision of every game got its answer.
    events = [json.loads(line) for p in (tmp_path / "t" / "games").glob("*.jsonl")
              for line in p.read_text(encoding="utf-8").splitlines()]
    assert len([e for e in events if "result" in e or e.get("status")]) >= 40
    assert [e for e in events if e.get("type") == "forfeit"] == []
    # The summary's counts: every call A received, and B's failed connections.
    counted: dict[str, Any] = summary["this_run"]["replicas"]
    assert counted[a.rstrip("/")]["calls"] == a_calls
    assert counted[b.rstrip("/")]["failed"] >= 1
    assert "stopped answering" in proc.stderr and len(
        [ln for ln in proc.stderr.splitlines() if "stopped answering" in ln]) <= 2
