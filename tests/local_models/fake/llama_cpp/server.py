"""A stand-in for `python -m llama_cpp.server` (tests/local_models): reads the same
--config_file, serves GET /v1/models (as llama-cpp-python lists them: `owned_by: "me"`,
`permissions`) and POST /v1/chat/completions on its host and port, and answers every chat
with the reply FAKE_LLAMA_REPLY names; a chat under a GBNF `grammar` of alternatives
(`root ::= "1" | "2"`) gets the first, as the real server's decoder would allow it.
FAKE_LLAMA_REPLY=exit makes it fail the way a server that cannot load its model does.
Stdlib only."""

from __future__ import annotations

import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(model: str, text: str) -> dict[str, Any]:
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 1_763_800_000,
            "model": model, "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102}}


def handler(reply: str, models: list[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # one write for headers, one for the body

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send({"object": "list", "data": [
                {"id": m, "object": "model", "owned_by": "me", "permissions": []}
                for m in models]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            first = re.match(r'root ::= "((?:[^"\\]|\\.)*)"', body.get("grammar") or "")
            text = json.loads(f'"{first.group(1)}"') if first else reply
            self._send(completion(body.get("model", "?"), text))

    return Handler


def serve(host: str, port: int, reply: str, models: list[str]) -> ThreadingHTTPServer:
    return ThreadingHTTPServer((host, port), handler(reply, models))


def main() -> None:
    with open(sys.argv[sys.argv.index("--config_file") + 1], encoding="utf-8") as f:
        config = json.load(f)
    reply = os.environ.get("FAKE_LLAMA_REPLY", "")
    if reply == "exit":
        print("llama_load_model_from_file: failed to load model", flush=True)
        raise SystemExit(1)
    serve(config["host"], config["port"], reply,
          [m["model_alias"] for m in config["models"]]).serve_forever()


if __name__ == "__main__":
    main()
