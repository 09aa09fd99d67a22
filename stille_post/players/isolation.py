"""Isolated agents (`--isolate-agents`): each agent in a process of its own.

An in-process agent is trusted code: it shares the engine's memory (the deal, the secret
word, every seat's private lines, through `gc` or the stack) and its environment (the
API keys). An isolated agent gets none of it. Its process (players/agent_box.py):

- is a fresh interpreter (`python -I`, not a fork: nothing of this process's memory),
  started in an empty private folder, in a session of its own (the terminal's Ctrl-C
  is the game's, not the agent's), with an environment of PATH, LANG, HOME and TMPDIR
  only: no key, no setting of the run;
- is sent only the requests an LLM in its seat would be sent, one at a time;
- runs under resource limits (address space, CPU seconds, file size, open files:
  `sandbox.Limits`) and, where the kernel has Landlock, may read only the Python
  installation, stille_post and the agent's own code, write only its private folder,
  open no TCP connection, and cannot signal or trace this process (players/sandbox.py);
- calls its model through this process (`context.model.complete` is a message), which
  makes the call with its keys and meters it (`MeteredProvider`), so usage, caps and
  dollars count as for an in-process agent;
- is killed when a call outlives the game's answer deadline (the turn is forfeited, and
  the next one starts a fresh process, a fresh agent), when it breaks the protocol,
  and when its seat is freed at the end of the game.

The agent's code must be one module or one package (a `python:` module from the current
folder, or an installed `agent:` entry point): the rest of the folder around it stays
closed. A failure to import or make the agent, inside its process, ends the game as
aborted with the reason: nothing of that seat can be played.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable
from dataclasses import asdict, replace
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import stille_post
from stille_post.core.errors import GameAborted, ProviderError, StillePostError, UsageError
from stille_post.players import sandbox
from stille_post.players.agent_box import MAX_LINE, completion_of, encode, request_of
from stille_post.providers.base import ChatRequest, Completion, MalformedReply, Usage

START_TIMEOUT_S = 60.0  # an interpreter and the agent's imports, on a loaded machine
BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
        "from stille_post.players.agent_box import main; main()")
# Read-only for the agent's process besides Python and stille_post: the loader's
# libraries and what the C library reads.
SYSTEM_READ = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache",
               "/etc/localtime", "/usr/share/zoneinfo", "/dev/null", "/dev/urandom")


def locate(ref: str) -> dict[str, Any]:
    """Where the agent's code is, found without running any of it: the top-level
    module's file (or its package's folders) and the `module:attr` to load. One line
    (UsageError) when it cannot be found."""
    kind, _, target = ref.partition(":")
    if kind == "agent":
        found = {ep.name: ep for ep in entry_points(group="stille_post.agents")}
        if target not in found:
            raise UsageError(f"unknown agent {target!r} (stille_post.agents entry points: "
                             f"{', '.join(sorted(found)) or 'none installed'})")
        target = found[target].value
    module_name, _, attr = target.rpartition(":")
    top = module_name.partition(".")[0]
    added = os.getcwd() not in sys.path and "" not in sys.path
    if added:  # as load_agent_factory does: the current folder is importable
        sys.path.append(os.getcwd())
    try:
        spec = importlib.util.find_spec(top)  # a top-level name: nothing is imported
    except (ImportError, ValueError):
        spec = None
    finally:
        if added:
            sys.path.remove(os.getcwd())
    if spec is None or not module_name or not attr:
        raise UsageError(f"{ref}: cannot find {module_name or target!r} to run it isolated")
    folders = [str(Path(p).resolve()) for p in spec.submodule_search_locations or []]
    origin = str(Path(spec.origin).resolve()) if spec.has_location and spec.origin else None
    return {"top": top, "target": f"{module_name}:{attr}", "origin": origin,
            "folders": folders or None, "read": folders or ([origin] if origin else [])}


def readable_paths(code: dict[str, Any]) -> list[str]:
    prefixes = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    package = str(Path(stille_post.__file__).resolve().parent)
    return sorted({*prefixes, package, *code["read"], *SYSTEM_READ})


def clean_environment(home: str) -> dict[str, str]:
    """No key, no setting: what an interpreter needs and nothing of the run."""
    return {"PATH": os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": home,
            "TMPDIR": home}


class IsolatedAgent:
    """The provider of an isolated agent's seat (behind its `LLMPlayer`)."""

    def __init__(self, ref: str, name: str, *, game: str, seat: int,
                 model: Any = None, limits: sandbox.Limits | None = None,
                 confine: bool | None = None) -> None:
        self.ref = ref
        self.name = name
        self.model = model  # a MeteredProvider, or None
        self.code = locate(ref)
        self.context = {"game": game, "seat": seat, "name": name, "model": model is not None}
        self.limits = limits or sandbox.Limits()
        self.confine = sandbox.available() if confine is None else confine
        self.walled = False  # the last process confirmed its Landlock walls
        self._lock = asyncio.Lock() if _loop() is not None else None
        self._box: _Box | None = None
        self._starting: asyncio.Future[_Box] | None = None
        self.started = 0  # processes started (a test counts them)
        self.model_seat: Any = None  # see players/agents.py
        loop = _loop()
        if loop is not None:  # inside a game: start while the game begins
            # On the next turn of the loop, not now: a seat made only to check the set-up
            # (the runner's `validate`) is gone by then, and starts nothing.
            loop.call_soon(_start_if_alive, weakref.ref(self))

    # --- the process -----------------------------------------------------------------

    def _start(self) -> asyncio.Future[_Box]:
        """Start the process now, from this (the event loop's) thread: the kernel kills
        it when the thread that made it ends (PR_SET_PDEATHSIG is per thread). Its
        handshake, which takes a while, is awaited in a thread."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_Box] = loop.create_future()
        self.started += 1
        try:
            spawned = _Box.spawn(self)
        except GameAborted as exc:
            future.set_exception(exc)
            return future

        def work() -> None:
            try:
                box: _Box | BaseException = spawned.handshake(self)
            except BaseException as exc:
                box = exc
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                loop.call_soon_threadsafe(_settle, future, box)

        threading.Thread(target=work, daemon=True,
                         name=f"stille-post isolated {self.name}").start()
        return future

    async def _ready_box(self) -> _Box:
        if self._box is not None and self._box.alive():
            return self._box
        if self._starting is None:
            self._starting = self._start()
        # Shielded: a deadline during the start does not waste it; the next turn uses it.
        starting = self._starting
        try:
            box = await asyncio.shield(starting)
        except asyncio.CancelledError:
            raise
        except BaseException:
            self._starting = None
            raise
        self._starting = None
        self._box = box
        self.walled = box.walled
        return box

    # --- the provider ----------------------------------------------------------------

    async def complete(self, request: ChatRequest) -> Completion:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # one call at a time, as for an in-process agent
            box = await self._ready_box()
            before = self.model.spent if self.model is not None else Usage()
            loop = asyncio.get_running_loop()
            answer: asyncio.Future[Any] = loop.create_future()

            def work() -> None:
                try:
                    result: Any = box.exchange(request, loop, self._model_call)
                except BaseException as exc:
                    result = exc
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(_settle, answer, result)

            threading.Thread(target=work, daemon=True,
                             name=f"stille-post isolated {self.name}").start()
            try:
                reply = await answer
            except asyncio.CancelledError:
                box.kill()  # past the deadline: the process goes, the next turn starts anew
                raise
            except (GameAborted, ProviderError):
                raise
            except _ProtocolError as exc:
                box.kill()
                raise ProviderError(f"agent {self.name} (isolated): {exc}") from None
        spent = _since(before, self.model.spent) if self.model is not None else Usage()
        return replace(reply, usage=spent,
                       model=reply.model if reply.model else self.name)

    async def _model_call(self, request: ChatRequest) -> Completion:
        if self.model is None:
            raise ProviderError("this agent has no model (write +MODEL after its name)")
        return await self.model.complete(request)

    async def aclose(self) -> None:
        if self._box is not None:
            self._box.kill()
        if self.model is not None:
            await self.model.aclose()


class _ProtocolError(Exception):
    """The agent's process said something that is not the protocol, or went away."""


class _Box:
    """One running agent process and its pipes (used from one thread at a time)."""

    def __init__(self, proc: subprocess.Popen[bytes], folder: str, name: str) -> None:
        self.proc = proc
        self.folder = folder
        self.name = name
        self.walled = False
        # The seat is freed (the game is over) or this process exits: the agent goes.
        self._finalizer = weakref.finalize(self, _end, proc, folder)

    @classmethod
    def spawn(cls, agent: IsolatedAgent) -> _Box:
        folder = tempfile.mkdtemp(prefix="stille-post-agent-")
        package_parent = str(Path(stille_post.__file__).resolve().parent.parent)
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-B", "-c", BOOT, package_parent],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                cwd=folder, env=clean_environment(folder), start_new_session=True,
                close_fds=True)
        except OSError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise GameAborted(f"agent {agent.name} could not be started in its own "
                              f"process: {exc}") from None
        return cls(proc, folder, agent.name)

    def handshake(self, agent: IsolatedAgent) -> _Box:
        """Send the start line and wait for the agent to be made (in a thread)."""
        box = self
        box.send(op="start", parent=os.getpid(), ref=agent.ref, context=agent.context,
                 code=agent.code, read=readable_paths(agent.code), confine=agent.confine,
                 limits=asdict(agent.limits))
        timer = threading.Timer(START_TIMEOUT_S, box.kill)
        timer.start()
        try:
            first = box.receive()
        except _ProtocolError as exc:
            box.kill()
            raise GameAborted(f"agent {agent.name} did not start in its own process "
                              f"({exc})") from None
        finally:
            timer.cancel()
        if first.get("op") != "ready":
            box.kill()
            why = str(first.get("message") or first.get("op"))[:400]
            raise GameAborted(f"agent {agent.name} could not be made in its own process: "
                              f"{why}")
        box.walled = first.get("walled") is True
        return box

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, **message: Any) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(encode(message))
            self.proc.stdin.flush()
        except (OSError, ValueError) as exc:
            raise _ProtocolError(f"its process is gone ({self._exit()})") from exc

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        try:
            line = self.proc.stdout.readline(MAX_LINE + 1)
        except (OSError, ValueError):
            line = b""
        if not line:
            raise _ProtocolError(f"its process ended ({self._exit()})")
        if len(line) > MAX_LINE or not line.endswith(b"\n"):
            raise _ProtocolError(f"a message over {MAX_LINE // 2**20} MiB")
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            raise _ProtocolError("a message that is not JSON") from None
        if not isinstance(message, dict):
            raise _ProtocolError("a message that is not a JSON object")
        return message

    def exchange(self, request: ChatRequest, loop: asyncio.AbstractEventLoop,
                 model_call: Callable[[ChatRequest], Any]) -> Completion:
        """One `respond`, with the model calls the agent makes during it (run in a
        thread; each model call goes back to the event loop, which holds the keys)."""
        self.send(op="respond", request=request)
        while True:
            message = self.receive()
            op = message.get("op")
            if op == "model":
                try:
                    asked = request_of(message.get("request"))
                except (ValueError, TypeError, KeyError) as exc:
                    self.send(op="model_error", message=f"not a request: {exc}")
                    continue
                call = asyncio.run_coroutine_threadsafe(model_call(asked), loop)
                try:
                    completion = call.result()
                except GameAborted:
                    raise
                except (StillePostError, Exception) as exc:
                    self.send(op="model_error", message=str(exc)[:500])
                    continue
                self.send(op="model_reply", completion=completion)
            elif op == "reply":
                try:
                    return completion_of(message.get("completion"))
                except (ValueError, TypeError) as exc:
                    raise MalformedReply(f"agent {self.name} returned an unreadable "
                                         f"Completion ({exc})") from None
            elif op == "wrong_type":
                raise MalformedReply(f"agent {self.name} returned "
                                     f"{str(message.get('type'))[:60]}, not a Completion")
            elif op == "failed":
                raise ProviderError(f"agent {self.name} raised "
                                    f"{str(message.get('kind'))[:60]}: "
                                    f"{str(message.get('message'))[:200]}")
            else:
                raise _ProtocolError(f"an unknown message {str(op)[:40]!r}")

    def _exit(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=1)
        code = self.proc.returncode
        if code is None:
            return "still running"
        if code < 0:
            return f"killed by signal {-code}: past a limit of memory or CPU, or a crash"
        return f"exit code {code}"

    def kill(self) -> None:
        self._finalizer()


def _end(proc: subprocess.Popen[bytes], folder: str) -> None:
    with contextlib.suppress(OSError):
        proc.kill()
    for pipe in (proc.stdin, proc.stdout):
        with contextlib.suppress(OSError, ValueError):
            if pipe is not None:
                pipe.close()
    with contextlib.suppress(subprocess.TimeoutExpired, OSError):
        proc.wait(timeout=2)
    shutil.rmtree(folder, ignore_errors=True)


def _start_if_alive(agent: weakref.ref[IsolatedAgent]) -> None:
    alive = agent()
    if alive is not None and alive._starting is None and alive._box is None:
        alive._starting = alive._start()


def _settle(future: asyncio.Future[Any], result: Any) -> None:
    if future.done():
        return
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)


def _loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _since(before: Usage, now: Usage) -> Usage:
    return Usage(now.input_tokens - before.input_tokens,
                 now.output_tokens - before.output_tokens,
                 now.cached_input_tokens - before.cached_input_tokens)


__all__ = ["IsolatedAgent", "clean_environment", "locate", "readable_paths"]
