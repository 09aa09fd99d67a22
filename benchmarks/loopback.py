"""A loopback model server for the real-path benchmarks, in its own process.

    python -m benchmarks.loopback API LATENCY_MS    # prints "PORT n", then serves

It is the emulators' server (tests/emulators/server.py: each API's wire format, its
request rules and the deterministic Stille Post policy) answering every request after
LATENCY_MS, without the prompt-cache emulation (quadratic in the requests seen, fine for
a recording, far too slow for thousands of calls) and without keeping the requests.
Its own process, so that neither its CPU nor its GIL is counted as ours.
`loopback_server(api, latency_s)` starts one and yields its SDK base URL.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
APIS = ("openai", "anthropic", "google")


class _Forget(list[Any]):
    """A list that keeps nothing: the server's request log, unneeded here."""

    def append(self, item: Any) -> None:
        return None


def serve(api: str, latency_s: float) -> None:
    from tests.emulators import server as emu

    class LeanState(emu.EmulatorState):
        def cached_tokens(self, model: str, prompt: str, *, minimum: int = 1024,
                          granularity: int = 1) -> int:
            return 0

        def anthropic_cache(self, model: str, blocks: Any, marked: Any, total: int, *,
                            minimum: int = 1024, lookback: int = 20) -> tuple[int, int]:
            return 0, 0

    state = LeanState(api)
    state.requests = _Forget()
    state.raw_bodies = _Forget()
    base = emu._make_handler(state)

    class Slow(base):  # type: ignore[misc, valid-type]
        def do_POST(self) -> None:
            time.sleep(latency_s)  # the model "thinks"; the request is read after it
            super().do_POST()

    class Server(emu._QuietServer):
        request_queue_size = 1024  # hundreds of clients connect at once

    httpd = Server(("127.0.0.1", 0), Slow)
    print(f"PORT {httpd.server_address[1]}", flush=True)
    httpd.serve_forever()


class Loopback(str):
    """The SDK base URL (the value), and the server's CPU so far (`cpu_s()`)."""

    pid: int

    def cpu_s(self) -> float | None:
        """User + system CPU of the server process (Linux /proc; None elsewhere)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def loopback_server(api: str, latency_s: float) -> Iterator[Loopback]:
    """Yields the base URL an SDK adapter of `api` takes (openai: ".../v1")."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.loopback", api,
                             str(latency_s * 1000)], stdout=subprocess.PIPE, env=env,
                            cwd=ROOT, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"the loopback server did not start: {line!r}")
        origin = f"http://127.0.0.1:{int(line.split()[1])}"
        url = Loopback(origin + ("/v1" if api == "openai" else ""))
        url.pid = proc.pid
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    serve(sys.argv[1], float(sys.argv[2]) / 1000)
