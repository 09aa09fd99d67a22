"""A loopback model server for the real-path benchmarks, in its own process.

    python -m benchmarks.loopback API LATENCY_MS [MODEL [TLS_DIR]]   # prints "PORT n"

It is the emulators' server (tests/emulators/server.py: each API's wire format, its
request rules and the deterministic Stille Post policy) answering every request after
LATENCY_MS, without the prompt-cache emulation (quadratic in the requests seen, fine for
a recording, far too slow for thousands of calls) and without keeping the requests. It
answers a request it has answered before from memory, with the same bytes (`_BY_REQUEST`).
Its own process, so that neither its CPU nor its GIL is counted as ours.
`loopback_server(api, latency_s)` starts one and yields its SDK base URL.
"""

from __future__ import annotations

import io
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
APIS = ("openai", "anthropic", "google")


class _Forget(list[Any]):
    """A list that keeps nothing: the server's request log, unneeded here."""

    def append(self, item: Any) -> None:
        return None


# The bytes of each 200 answer, by what the emulator reads of its request: the path, the
# body and the headers below. Without prompt caching (LeanState) the emulator's answer is
# a pure function of those, so a repeated request gets the bytes it would have got anyway,
# without its body parsed or checked again. The server shares the 2 cores with the client
# it measures; remembering cut its CPU by half in the 200-game run (3.2 to 1.7 s: games
# of one lineup repeat their requests), CPU that a real remote API never takes from its
# client. Bounded, so a long run cannot grow it forever.
_BY_REQUEST: dict[tuple[Any, ...], bytes] = {}
_READ_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "anthropic-version")
MAX_REMEMBERED = 50_000


_MESSAGES: ContextVar[list[dict[str, Any]]] = ContextVar("messages")


def play_chameleon(api: str) -> None:
    """Make the emulator's model the simulated Chameleon player of `bench_peer`
    (benchmarks/simchameleon.py `answer_for`: ours or ChatArena's, by the request), in
    place of its Stille Post policy. The OpenAI wire format and request rules stay the
    emulator's. In this process only: the loopback server's own."""
    from benchmarks.simchameleon import answer_for
    from tests.emulators import policy
    from tests.emulators import server as emu

    if api != "openai":
        raise ValueError("the Chameleon policy speaks the OpenAI API only")
    handler = emu._HANDLERS[api]

    def with_messages(state: Any, path: str, body: bytes, req: dict[str, Any]) -> dict[str, Any]:
        token = _MESSAGES.set(req.get("messages") or [])  # for `decide`, which sees less
        try:
            return handler(state, path, body, req)
        finally:
            _MESSAGES.reset(token)

    def decide(model: str, system: str, last_user: str, choice: str,
               tools: list[str]) -> policy.Reply:
        return policy.Reply(text=answer_for(_MESSAGES.get()))

    emu._HANDLERS[api] = with_messages
    emu.decide = decide  # type: ignore[assignment]


POLICIES = ("stille-post", "chameleon")


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate and key for 127.0.0.1, valid for a day (the HTTPS loopback's)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "loopback-cert.pem", folder / "loopback-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def serve(api: str, latency_s: float, model: str = "stille-post", tls_dir: str = "") -> None:
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
    if model == "chameleon":
        play_chameleon(api)
    posts = [0]  # POST requests answered, for GET /calls
    counting = threading.Lock()
    base = emu._make_handler(state)

    class Slow(base):  # type: ignore[misc, valid-type]
        memo_key: tuple[Any, ...] | None = None
        rfile: Any

        def do_GET(self) -> None:
            if self.path != "/calls":
                self._send_json(404, b"{}", None)
                return
            with counting:
                self._send_json(200, json.dumps({"calls": posts[0]}).encode(), None)

        def do_POST(self) -> None:
            with counting:
                posts[0] += 1
            time.sleep(latency_s)  # the model "thinks"; the request is read after it
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            # What the emulator reads of a request: its path, body and these headers.
            self.memo_key = (self.path, body, *(self.headers.get(h) for h in _READ_HEADERS))
            data = _BY_REQUEST.get(self.memo_key)
            if data is not None:
                self._send_json(200, data, None)
                return
            rfile, self.rfile = self.rfile, io.BytesIO(body)  # the emulator reads it again
            try:
                super().do_POST()
            finally:
                self.rfile = rfile

        def _send_json(self, status: int, data: bytes,
                       headers: dict[str, str] | None = None) -> None:
            # Every answer the emulator writes passes here, encoded: a 200 is kept.
            if status == 200 and not headers and self.memo_key is not None:
                if len(_BY_REQUEST) >= MAX_REMEMBERED:
                    _BY_REQUEST.clear()
                _BY_REQUEST[self.memo_key] = data
            super()._send_json(status, data, headers)

    tls: ssl.SSLContext | None = None
    if tls_dir:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(*self_signed(Path(tls_dir)))

    class Server(emu._QuietServer):
        request_queue_size = 1024  # hundreds of clients connect at once

        def get_request(self) -> tuple[Any, Any]:
            sock, address = super().get_request()
            if tls is not None:  # the handshake happens in the handler's thread
                sock = tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            return sock, address

    class Handler(Slow):
        def setup(self) -> None:
            if tls is not None:
                self.request.do_handshake()
            super().setup()

    httpd = Server(("127.0.0.1", 0), Handler)
    print(f"PORT {httpd.server_address[1]}", flush=True)
    httpd.serve_forever()


class Loopback(str):
    """The SDK base URL (the value), the server's CPU so far (`cpu_s()`) and the
    requests it has been sent (`calls()`)."""

    pid: int
    origin: str

    def calls(self) -> int:
        with urllib.request.urlopen(self.origin + "/calls", timeout=10) as answer:
            return int(json.load(answer)["calls"])

    def cpu_s(self) -> float | None:
        """User + system CPU of the server process (Linux /proc; None elsewhere)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def loopback_server(api: str, latency_s: float, model: str = "stille-post", *,
                    tls: bool = False) -> Iterator[Loopback]:
    """Yields the base URL an SDK adapter of `api` takes (openai: ".../v1"). `model`:
    the emulator's Stille Post policy, or the simulated Chameleon player ("chameleon").
    `tls`: HTTPS, as every cloud API is, on a certificate made for the run; this process
    trusts it (SSL_CERT_FILE, and the adapters' shared TLS context made anew) until the
    server stops."""
    if model not in POLICIES:
        raise ValueError(f"model must be one of {POLICIES}, not {model!r}")
    from stille_post.providers._common import tls_context

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # The certificate's folder, for HTTPS only (the server writes it; "" means HTTP).
    with tempfile.TemporaryDirectory(prefix="loopback-tls-") if tls else nullcontext("") \
            as folder:
        proc = subprocess.Popen([sys.executable, "-m", "benchmarks.loopback", api,
                                 str(latency_s * 1000), model, folder],
                                stdout=subprocess.PIPE, env=env, cwd=ROOT, text=True)
        trusted = os.environ.get("SSL_CERT_FILE")
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line.startswith("PORT "):
                raise RuntimeError(f"the loopback server did not start: {line!r}")
            origin = f"{'https' if tls else 'http'}://127.0.0.1:{int(line.split()[1])}"
            if tls:
                os.environ["SSL_CERT_FILE"] = str(Path(folder) / "loopback-cert.pem")
                tls_context.cache_clear()
            url = Loopback(origin + ("/v1" if api == "openai" else ""))
            url.pid, url.origin = proc.pid, origin
            yield url
        finally:
            proc.terminate()
            proc.wait(10)
            if tls:
                if trusted is None:
                    os.environ.pop("SSL_CERT_FILE", None)
                else:
                    os.environ["SSL_CERT_FILE"] = trusted
                tls_context.cache_clear()


if __name__ == "__main__":
    serve(sys.argv[1], float(sys.argv[2]) / 1000, *sys.argv[3:5])
