"""H1: no dependency changes the process's logging, and no log record carries a key.

`wordllama` (imported by the Connections semantic bots) calls
`logging.basicConfig(level=INFO)`; after that httpx printed every request URL on stderr,
`?api_key=` values included. Run in a fresh interpreter: the point is what a process
that imported the semantic bots prints, and a test must not change pytest's own logging.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

SECRET = "gw-secret-9Qx7Lm2Vt4Rb8Kp3"  # not key-shaped: only value/parameter masking catches it

PROBE = textwrap.dedent(f"""
    import json, logging, sys, threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Quiet(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
        def log_message(self, *a):
            pass

    before = (logging.getLogger().level, len(logging.getLogger().handlers))
    {{setup}}
    from stille_post.games.connections import bots, embeddings  # noqa: F401
    embeddings.load()  # imports wordllama, as a semantic bot does
    after = (logging.getLogger().level, len(logging.getLogger().handlers))

    server = HTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    import httpx
    url = f"http://127.0.0.1:{{server.server_port}}/v1/models?api_key={SECRET}"
    httpx.get(url)
    # A user who asks for DEBUG logs gets them, scrubbed.
    records = []
    class Keep(logging.Handler):
        def emit(self, record):
            records.append(self.format(record))
    keep = Keep(level=logging.DEBUG)
    logging.getLogger().addHandler(keep)
    logging.getLogger().setLevel(logging.DEBUG)
    httpx.get(url)
    try:
        raise RuntimeError("refused " + url)
    except RuntimeError:
        logging.getLogger("probe").exception("request failed: %s", url)
    server.shutdown()
    print(json.dumps({{"before": before, "after": after, "records": records}}))
""")


def _probe(setup: str = "") -> tuple[dict[str, object], str]:
    proc = subprocess.run([sys.executable, "-c", PROBE.replace("{setup}", setup)],
                          capture_output=True, text=True, timeout=120, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_importing_the_semantic_bots_leaves_logging_alone_and_nothing_leaks() -> None:
    out, err = _probe()
    assert out["before"] == out["after"], "importing the semantic bots changed logging"
    assert SECRET not in err
    records = out["records"]
    assert isinstance(records, list)
    # httpx did log the request (so the check is real), with the key masked.
    assert any("127.0.0.1" in r and "api_key=[redacted]" in r for r in records), records
    assert not any(SECRET in r for r in records)
    assert any("RuntimeError: refused" in r for r in records)  # the traceback, scrubbed


def test_the_cli_boundary_keeps_a_later_basicconfig_from_lowering_the_level() -> None:
    # What `stille-post` does first; then a dependency that calls basicConfig(INFO).
    setup = ("from stille_post.providers.logsafety import guard_root; guard_root(); "
             "logging.basicConfig(level=logging.INFO)")
    out, err = _probe(setup)
    assert out["after"][0] == logging_warning()  # type: ignore[index]
    assert SECRET not in err and "HTTP Request" not in err


def logging_warning() -> int:
    import logging

    return logging.WARNING
