"""The process an isolated agent runs in (`--isolate-agents`; the parent's side is
players/isolation.py), and the JSON both sides speak.

The parent starts `python -I` on `main()` with a clean environment (no API keys), in an
empty private folder, in a session of its own. This process then

1. reads the `start` line: the agent's reference, its context, where its code is;
2. dies with its parent (PR_SET_PDEATHSIG), applies its resource limits and, where the
   kernel has Landlock, closes every file but the Python installation, stille_post, the
   agent's own code and its private folder (players/sandbox.py);
3. only then imports the agent (its module's code runs inside the walls) and makes it;
4. answers `respond` lines, one at a time: the request in, the agent's reply out. A call
   the agent makes to its model (`context.model.complete`) goes out as a `model` line
   and the parent, which holds the keys and meters the spend, sends the completion back.

One JSON object per line each way. Nothing of the game is here but the requests.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from dataclasses import asdict, is_dataclass
from typing import Any, BinaryIO

from stille_post.providers.base import ChatRequest, Completion, Message, Tool, ToolCall, Usage

MAX_LINE = 8 * 1024 * 1024  # one message either way; a longer line ends the agent


# --- the codec (both sides) ---------------------------------------------------------------

def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):  # opaque provider data (a thought signature)
        return {"__bytes__": base64.b64encode(value).decode("ascii")}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _unplain(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__bytes__"} and isinstance(value["__bytes__"], str):
            return base64.b64decode(value["__bytes__"])
        return {k: _unplain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unplain(v) for v in value]
    return value


def encode(obj: Any) -> bytes:
    return json.dumps(_plain(obj), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _tool_call(d: Any) -> ToolCall:
    if not isinstance(d, dict) or not isinstance(d.get("name"), str) \
            or not isinstance(d.get("arguments"), dict):
        raise ValueError("a tool call needs a name and an arguments object")
    call_id = d.get("id")
    return ToolCall(d["name"], _unplain(d["arguments"]),
                    call_id if isinstance(call_id, str) else None,
                    provider_data=_unplain(d.get("provider_data") or {}))


def request_of(d: Any) -> ChatRequest:
    """A ChatRequest read back (the child's view of a request, or its model call)."""
    if not isinstance(d, dict) or not isinstance(d.get("system"), str) \
            or not isinstance(d.get("messages"), list):
        raise ValueError("not a request")
    messages = []
    for m in d["messages"]:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant", "tool") \
                or not isinstance(m.get("content"), str):
            raise ValueError("a message needs a role and text content")
        call_id = m.get("tool_call_id")
        messages.append(Message(m["role"], m["content"],
                                [_tool_call(c) for c in m.get("tool_calls") or []],
                                call_id if isinstance(call_id, str) else None,
                                provider_data=_unplain(m.get("provider_data") or {})))
    tools = [Tool(str(t["name"]), str(t.get("description", "")), _unplain(t["parameters"]))
             for t in d.get("tools") or [] if isinstance(t, dict)
             and isinstance(t.get("parameters"), dict) and "name" in t]

    def opt(key: str, kind: type | tuple[type, ...]) -> Any:
        value = d.get(key)
        return value if isinstance(value, kind) and not isinstance(value, bool) else None

    extra = d.get("extra")
    return ChatRequest(d["system"], messages, tools, opt("max_output_tokens", int),
                       opt("temperature", (int, float)), opt("tool_choice", str),
                       opt("reasoning_effort", str),
                       _unplain(extra) if isinstance(extra, dict) else {})


def completion_of(d: Any) -> Completion:
    """A Completion read back. From the agent's side it is untrusted: a wrong shape is
    a ValueError (the parent's malformed reply, which earns the corrective re-ask)."""
    if not isinstance(d, dict) or not isinstance(d.get("text"), str):
        raise ValueError("a reply needs a text")
    calls = d.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ValueError("tool_calls must be a list")
    raw_usage = d.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    model = d.get("model")
    finish = d.get("finish_reason")
    return Completion(d["text"], [_tool_call(c) for c in calls],
                      # Within the bounds every server's usage is read in (core/usage.py).
                      Usage.reported(usage.get("input_tokens"), usage.get("output_tokens"),
                                     usage.get("cached_input_tokens")) or Usage(),
                      model if isinstance(model, str) else "",
                      finish if isinstance(finish, str) else None,
                      provider_data=_unplain(d.get("provider_data") or {})
                      if isinstance(d.get("provider_data"), dict) else {})


# --- the child ----------------------------------------------------------------------------

class _Channel:
    def __init__(self, inp: BinaryIO, out: BinaryIO) -> None:
        self.inp = inp
        self.out = out

    def send(self, **message: Any) -> None:
        self.out.write(encode(message))
        self.out.flush()

    def receive(self) -> dict[str, Any]:
        line = self.inp.readline(MAX_LINE + 1)
        if not line:
            raise SystemExit(0)  # the parent is gone or done
        message = json.loads(line)
        if not isinstance(message, dict):
            raise SystemExit(3)
        return message


class _ModelThroughParent:
    """`context.model` of an isolated agent: each call is asked of the parent, which
    calls the seat's model with its own keys and counts what it spends."""

    def __init__(self, channel: _Channel) -> None:
        self.channel = channel

    async def complete(self, request: ChatRequest) -> Completion:
        self.channel.send(op="model", request=request)
        answer = self.channel.receive()
        if answer.get("op") == "model_reply":
            return completion_of(answer.get("completion"))
        from stille_post.core.errors import ProviderError

        raise ProviderError(str(answer.get("message") or "the model call failed")[:500])


def _pdeathsig() -> None:
    try:
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _load(ref: str, code: dict[str, Any]) -> Any:
    """The agent's factory, imported inside the walls from where the parent found its
    code (`code`: the top-level module's name and its file or folders), so that the
    folder around it need not be readable."""
    import importlib
    import importlib.util

    top = str(code["top"])
    if top not in sys.modules:
        origin, folders = code.get("origin"), code.get("folders")
        spec = importlib.util.spec_from_file_location(
            top, origin, submodule_search_locations=folders) if origin else \
            importlib.util.spec_from_loader(top, None, is_package=True)
        if spec is None:
            raise ImportError(f"cannot load {top}")
        if not origin:  # a namespace package: its folders are its path
            spec.submodule_search_locations = list(folders or [])
        module = importlib.util.module_from_spec(spec)
        sys.modules[top] = module
        if spec.loader is not None:
            spec.loader.exec_module(module)
    target = str(code["target"])
    module_name, _, attr = target.rpartition(":")
    module = importlib.import_module(module_name)
    factory = getattr(module, attr)
    if not callable(factory):
        raise TypeError(f"{ref} is not callable")
    return factory


def main() -> None:
    channel = _Channel(sys.stdin.buffer, sys.stdout.buffer)
    # The agent's own prints must not corrupt the channel: they go nowhere.
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    start = channel.receive()
    _pdeathsig()
    if os.getppid() != int(start.get("parent", -1)):
        raise SystemExit(1)  # the parent died before the line above took effect
    # What the agent's side needs is imported before the walls go up.
    import asyncio
    import inspect

    from stille_post.players import sandbox
    from stille_post.players.agents import AgentContext

    sandbox.apply_limits(sandbox.Limits(**start.get("limits", {})))
    walled = False
    if start.get("confine"):
        try:
            sandbox.confine(read=start["read"], write=[os.getcwd()])
            walled = True
        except OSError as exc:
            channel.send(op="error", message=f"the sandbox could not be set up: {exc}")
            return
    loop = asyncio.new_event_loop()
    context = start.get("context") or {}
    model = _ModelThroughParent(channel) if context.get("model") else None
    try:
        factory = _load(str(start["ref"]), start["code"])
        agent = factory(AgentContext(str(context.get("game", "")), int(context.get("seat", 0)),
                                     str(context.get("name", "")), model))
        if not callable(getattr(agent, "respond", None)):
            raise TypeError("the agent has no respond(request) method")
    except BaseException as exc:  # the agent's module or factory: reported, then out
        channel.send(op="error", message=f"{type(exc).__name__}: {str(exc)[:300]}")
        return
    channel.send(op="ready", walled=walled)
    while True:
        message = channel.receive()
        if message.get("op") != "respond":
            continue
        try:
            reply = agent.respond(request_of(message.get("request")))
            if inspect.isawaitable(reply):
                reply = loop.run_until_complete(reply)
            if not isinstance(reply, Completion):
                channel.send(op="wrong_type", type=type(reply).__name__)
                continue
            channel.send(op="reply", completion=reply)
        except SystemExit:
            raise
        except BaseException as exc:
            channel.send(op="failed", kind=type(exc).__name__, message=str(exc)[:300])


__all__ = ["MAX_LINE", "completion_of", "encode", "main", "request_of"]
