"""What a caller's seat observes: the request its model would be sent, as plain data and
as plain text.

The data (`observation`) is the `ChatRequest` the game's prompts rendered for the
decision: the system prompt, the chat messages, the offered tools as JSON schemas, the
tool choice and the output cap, with the decision's kind, its attempt (0, then 1, 2, ...
for corrective re-asks) and the re-ask's reason. `text` is one string of the same, for
text-only policies; a tool call is answered by writing
`{"name": TOOL, "arguments": {...}}` (kit/adherence.py takes such a reply as the call).

`paragraphs` splits a request into (role, text) pieces, the unit in which TextArena's
observations arrive: each decision sends a seat only the pieces it has not been sent.
"""

from __future__ import annotations

import json
from typing import Any

from stille_post.envs.episode import Turn
from stille_post.providers.base import ChatRequest, Message, Tool

TOOL_HELP = ('To call a tool, reply with only a JSON object: {"name": TOOL, "arguments": '
             '{...}}; to say something and call tools, {"text": "...", "tool_calls": '
             '[{"name": TOOL, "arguments": {...}}]}. Otherwise reply with plain text.')


def observation(turn: Turn, view: SeatView | None = None) -> dict[str, Any]:
    """The observation of a pending decision, as plain data (JSON-serialisable). Made
    once per turn; `view` (the seat's, kept between its turns) lets the messages already
    converted for the seat's previous observation be reused, so a step costs what is new
    in the conversation, not its whole length. Entries of `messages` are shared between
    a seat's observations: copy one before changing it."""
    if turn.observed is not None:
        return turn.observed
    request = turn.request
    view = view if view is not None else SeatView()
    messages, texts = view.update(request.messages)
    parts = [request.system, *texts]
    if request.tools:
        parts.append(tools_text(request.tools, request.tool_choice))
    turn.observed = {
        "seat": turn.seat,
        "kind": turn.decision.kind,
        "attempt": turn.attempt,
        "repair": turn.decision.repair or "",
        "system": request.system,
        "messages": messages,
        "tools": [tool_json(t) for t in request.tools],
        "tool_choice": request.tool_choice or "",
        "max_output_tokens": request.max_output_tokens or 0,
        "text": "\n\n".join(parts),
    }
    return turn.observed


class SeatView:
    """One seat's messages as last converted, reused while the conversation keeps the
    same message objects (the kit's prompts extend a seat's conversation in place:
    games/kit/incremental.py)."""

    __slots__ = ("json", "messages", "text")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.json: list[dict[str, Any]] = []
        self.text: list[str] = []

    def update(self, messages: list[Message]) -> tuple[list[dict[str, Any]], list[str]]:
        old = self.messages
        k, n = 0, min(len(old), len(messages))
        while k < n and old[k] is messages[k]:
            k += 1
        self.json = [*self.json[:k], *(message_json(m) for m in messages[k:])]
        self.text = [*self.text[:k], *(message_text(m) for m in messages[k:])]
        self.messages = list(messages)
        return list(self.json), self.text


def message_json(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"name": c.name, "arguments": dict(c.arguments), "id": c.id or ""}
                             for c in m.tool_calls]
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    return out


def tool_json(t: Tool) -> dict[str, Any]:
    return {"name": t.name, "description": t.description, "parameters": t.parameters}


def paragraphs(request: ChatRequest) -> list[tuple[str, str]]:
    """The request as (role, text) pieces in order: the system prompt, then each
    message's paragraphs (consecutive Game Master lines share one user message), then
    the offered tools. A later decision's pieces extend an earlier one's, except for the
    closing question, which each decision words anew."""
    out = [("system", request.system)]
    for m in request.messages:
        role = m.role
        for part in m.content.split("\n\n") if m.content else []:
            if part.strip():
                out.append((role, part))
        for c in m.tool_calls:
            out.append((role, json.dumps({"name": c.name, "arguments": c.arguments},
                                         ensure_ascii=False)))
    if request.tools:
        out.append(("tools", tools_text(request.tools, request.tool_choice)))
    return out


_TOOLS_TEXT: dict[tuple[int, ...], tuple[list[Tool], str | None, str]] = {}


def tools_text(tools: list[Tool], choice: str | None = None) -> str:
    """The offered tools for a text-only reader; a game's tools are the same objects
    decision after decision, so the text is kept (while those objects live)."""
    key = (*map(id, tools), id(choice))
    kept = _TOOLS_TEXT.get(key)
    if kept is not None and all(a is b for a, b in zip(kept[0], tools, strict=True)) \
            and kept[1] is choice:
        return kept[2]
    text = _tools_text(tools, choice)
    if len(_TOOLS_TEXT) > 256:
        _TOOLS_TEXT.clear()
    _TOOLS_TEXT[key] = (list(tools), choice, text)
    return text


def _tools_text(tools: list[Tool], choice: str | None) -> str:
    lines = ["Tools you may call:" if choice != "required" else "Answer with a tool call:"]
    for t in tools:
        lines.append(f"- {t.name}: {t.description}\n  arguments (JSON schema): "
                     f"{json.dumps(t.parameters, ensure_ascii=False, sort_keys=True)}")
    lines.append(TOOL_HELP)
    return "\n".join(lines)


_LABELS = {"user": "[Game Master]", "assistant": "[You]", "tool": "[Tool result]"}


def message_text(m: Message) -> str:
    label = _LABELS.get(m.role, f"[{m.role}]")
    body = m.content
    if m.tool_calls:
        calls = "\n".join(json.dumps({"name": c.name, "arguments": c.arguments},
                                     ensure_ascii=False) for c in m.tool_calls)
        body = f"{body}\n{calls}" if body else calls
    return f"{label} {body}"


def request_text(request: ChatRequest) -> str:
    """The whole request as one text (`observation`'s `text`)."""
    parts = [request.system, *(message_text(m) for m in request.messages)]
    if request.tools:
        parts.append(tools_text(request.tools, request.tool_choice))
    return "\n\n".join(parts)


def new_pieces(sent: list[tuple[str, str]], now: list[tuple[str, str]]
               ) -> list[tuple[str, str]]:
    """The pieces of `now` after its longest common prefix with `sent`."""
    k = 0
    for a, b in zip(sent, now, strict=False):
        if a != b:
            break
        k += 1
    return now[k:]


__all__ = ["TOOL_HELP", "SeatView", "new_pieces", "observation", "paragraphs",
           "request_text", "tools_text"]
