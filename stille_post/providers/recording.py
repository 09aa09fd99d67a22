"""Record and replay HTTP traffic with vcrpy: the one VCR configuration the CLI
(`play --record/--replay`), the test-suite (conftest.py) and the recording tools share.

Secrets never reach a cassette (DESIGN.md "Record and replay"):
- the auth headers and the `key`, `api_key`, `token`, `access_token` query parameters are
  filtered, and every configured key value is masked in URIs and in request and response
  bodies (providers/secrets.py: gateways echo a refused key in their error body);
- request and response headers are cut to an allow-list, which also drops cookies,
  organisation/project names and request ids;
- bodies are stored decoded (`decode_compressed_response`), and the adapters ask for gzip
  only, because vcrpy cannot decode zstd;
- `secrets.KEY_PATTERN` is what the security test scans every cassette and transcript
  for.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from stille_post.providers.secrets import redact, redact_bytes

FILTER_HEADERS = ["authorization", "x-api-key", "x-goog-api-key", "openai-organization",
                  "openai-project", "cookie"]
FILTER_QUERY_PARAMETERS = ["key", "api_key", "apikey", "token", "access_token"]
# Matching on the body keeps concurrent calls apart: the identity guesses of all seats go
# out at once and come back in any order while recording. "body" is `json_body` below
# wherever this module makes a VCR (and in the test-suite's pytest-recording hook).
MATCH_ON = ["method", "scheme", "host", "port", "path", "body"]

# Headers worth keeping: what the SDKs need to parse a reply and what shows the wire format.
_KEEP_REQUEST_HEADERS = {"content-type", "accept-encoding", "anthropic-version"}
_KEEP_RESPONSE_HEADERS = {"content-type", "retry-after", "retry-after-ms"}


def json_body(new: Any, recorded: Any) -> None:
    """vcrpy's `body` matcher for JSON APIs, at a fraction of its cost.

    vcrpy compares each request with every recorded one, and its `body` matcher parses
    both bodies each time and, when they differ (nearly always), renders a unified diff of
    the two for a message nobody reads unless nothing matches: a 105-call Elimination
    cassette spent 6 of its 10 s of replay there. Here each body is parsed once per
    request object, and a difference is named by its first JSON path
    (`.messages[3].content`). Bodies that are not both JSON go to vcrpy's own matcher.
    """
    a, b = _json_of(new), _json_of(recorded)
    if a is _NOT_JSON or b is _NOT_JSON:
        from vcr.matchers import body

        body(new, recorded)
        return
    if a != b:
        raise AssertionError(f"the JSON bodies differ at {_first_difference(a, b)}")


_NOT_JSON = object()


def _json_of(request: Any) -> Any:
    raw = getattr(request, "_body", None)
    cached = getattr(request, "_stille_post_json", None)
    if cached is not None and cached[0] is raw:
        return cached[1]
    value: Any = _NOT_JSON
    if isinstance(raw, bytes) and "json" in str(request.headers.get("content-type", "")):
        try:
            value = json.loads(raw)
        except ValueError:
            value = _NOT_JSON
    request._stille_post_json = (raw, value)
    return value


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if type(a) is type(b) and isinstance(a, dict):
        for key in sorted(a.keys() | b.keys()):
            if a.get(key, _NOT_JSON) != b.get(key, _NOT_JSON):
                return _first_difference(a.get(key), b.get(key), f"{path}.{key}")
    elif type(a) is type(b) and isinstance(a, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return path or "the top"


def scrub_request(request: Any) -> Any:
    for name in list(request.headers):
        if name.lower() not in _KEEP_REQUEST_HEADERS:
            del request.headers[name]
    uri = getattr(request, "uri", None)
    if isinstance(uri, str):
        clean = redact(uri)
        if clean != uri:
            request.uri = clean
    body = getattr(request, "body", None)
    if isinstance(body, bytes | str) and body:
        raw = body.encode("utf-8") if isinstance(body, str) else body
        clean_body = redact_bytes(raw)
        if clean_body != raw:
            request.body = clean_body
    return request


def scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers") or {}
    for name in list(headers):
        if name.lower() not in _KEEP_RESPONSE_HEADERS:
            del headers[name]
    body = response.get("body")
    if isinstance(body, dict):
        raw = body.get("string")
        if isinstance(raw, str):
            body["string"] = redact_bytes(raw.encode("utf-8")).decode("utf-8")
        elif isinstance(raw, bytes):
            body["string"] = redact_bytes(raw)
    return response


def vcr_config(*, rewrite_hosts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Keyword arguments for `vcr.VCR(...)` / pytest-recording's `vcr_config`.

    `rewrite_hosts` maps a recorded origin ("http://127.0.0.1:8011") to the origin stored
    in the cassette ("https://api.openai.com"): the emulator recordings are stored under
    the real API's address so that they replay through the default base URL.
    """

    def before_record_request(request: Any) -> Any:
        request = scrub_request(request)
        if rewrite_hosts:
            parts = urlsplit(request.uri)
            origin = f"{parts.scheme}://{parts.netloc}"
            if origin in rewrite_hosts:
                new = urlsplit(rewrite_hosts[origin])
                request.uri = urlunsplit((new.scheme, new.netloc, parts.path, parts.query,
                                          parts.fragment))
        return request

    return {
        "filter_headers": FILTER_HEADERS,
        "filter_query_parameters": FILTER_QUERY_PARAMETERS,
        "before_record_request": before_record_request,
        "before_record_response": scrub_response,
        "decode_compressed_response": True,
        "match_on": MATCH_ON,
    }


MAX_CASSETTE_BYTES = 256 << 20  # ~100x the repository's cassettes together


def check_cassette(path: Path) -> None:
    """Refuse a replay cassette that cannot be one, as one line (a `UsageError`), before
    vcrpy fails on it with a parser traceback: not UTF-8, not YAML, or no interactions."""
    import yaml

    from stille_post.core import yamltext
    from stille_post.core.errors import UsageError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not a cassette (not UTF-8 text: {exc.reason})") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the cassette ({exc.strerror or exc})") from None
    try:
        data = yamltext.load_bounded(text, max_bytes=MAX_CASSETTE_BYTES) \
            if text.strip() else None
    except yamltext.TooBigError as exc:
        raise UsageError(f"{path}: cassette refused: {exc}") from None
    except RecursionError:
        raise UsageError(f"{path}: not a cassette (nested too deeply)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{path}: not a cassette (invalid YAML{where})") from None
    if data is None:
        return  # an empty file: vcrpy treats it as a cassette with no interactions
    if not isinstance(data, dict) or not isinstance(data.get("interactions", []), list):
        raise UsageError(f"{path}: not a cassette (no list of interactions)")
    for n, entry in enumerate(data.get("interactions", []), start=1):
        problem = _interaction_problem(entry)
        if problem is not None:
            raise UsageError(f"{path}: not a cassette (interaction {n}: {problem})")


def _interaction_problem(entry: Any) -> str | None:
    """What vcrpy would trip over in one recorded interaction (a KeyError or TypeError
    deep in its loader, or at replay), or None: a request with its method, URI, body and
    headers, a response with a status code, headers and a body."""
    if not isinstance(entry, dict):
        return "not a mapping"
    request, response = entry.get("request"), entry.get("response")
    if not isinstance(request, dict):
        return "no request"
    for key in ("method", "uri"):
        if not isinstance(request.get(key), str):
            return f"the request has no {key}"
    if "body" not in request or not isinstance(request["body"], str | bytes | type(None)):
        return "the request has no body (null for none)"
    if not isinstance(request.get("headers"), dict):
        return "the request has no headers"
    if not isinstance(response, dict):
        return "no response"
    status = response.get("status")
    if not isinstance(status, dict) or not isinstance(status.get("code"), int) \
            or isinstance(status.get("code"), bool):
        return "the response has no status code"
    if not isinstance(response.get("headers"), dict):
        return "the response has no headers"
    body = response.get("body")
    if not isinstance(body, dict) or not isinstance(body.get("string"), str | bytes):
        return "the response has no body"
    return None


@contextmanager
def cassette(path: Path, *, mode: Literal["record", "replay"],
             rewrite_hosts: Mapping[str, str] | None = None,
             match_on: list[str] | None = None) -> Iterator[Any]:
    """Record every HTTP call inside the block to `path`, or replay them from it.

    Replay uses record mode `none`: a request missing from the cassette fails (and the
    retry layer reports it as such) instead of going to the network.
    """
    import vcr

    if mode == "replay":
        check_cassette(path)
    config = vcr_config(rewrite_hosts=rewrite_hosts)
    if match_on is not None:
        config["match_on"] = match_on
    recorder = vcr.VCR(record_mode="all" if mode == "record" else "none", **config)
    recorder.register_matcher("body", json_body)
    with recorder.use_cassette(str(path)) as cas:
        yield cas
