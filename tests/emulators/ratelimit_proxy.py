"""A one-shot rate limiter in front of a real server, for recording a 429-then-success.

    python -m tests.emulators.ratelimit_proxy http://127.0.0.1:8765 PORT

Answers the first POST with HTTP 429 (OpenAI's error shape, `Retry-After: 1`) and
forwards every later request to the target unchanged. It runs as its own process so that
the recorder (vcrpy patches this process's HTTP clients) records only the SDK's traffic,
not the proxy's forwarding.
"""

from __future__ import annotations

import http.server
import json
import sys
import urllib.request
from typing import Any


def serve(target: str, port: int) -> None:
    state = {"first": True}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one write for headers, one for the body

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers: dict[str, str] = {}
            if state["first"]:
                state["first"] = False
                data = json.dumps({"error": {
                    "message": "Rate limit reached. Please try again later.",
                    "type": "requests", "param": None, "code": "rate_limit_exceeded"}}).encode()
                status, headers = 429, {"retry-after": "1"}
            else:
                req = urllib.request.Request(target + self.path, data=body, method="POST",
                                             headers={"content-type": "application/json"})
                with urllib.request.urlopen(req, timeout=900) as resp:
                    data, status = resp.read(), resp.status
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    serve(sys.argv[1].rstrip("/"), int(sys.argv[2]))
