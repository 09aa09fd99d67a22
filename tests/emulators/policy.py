"""The emulated model's mind: a tiny deterministic Stille Post policy.

It reads only what a real model would read (the system prompt and the conversation) and
answers from a hash of it, so the same request always gets the same answer, whatever the
order in which concurrent requests arrive.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _h(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def roster_ids(system: str) -> list[str]:
    ids: list[str] = []
    for line in system.splitlines():
        if line.startswith("- ") and ": " in line and "," in line + ",":
            _, _, rest = line[2:].partition(": ")
            ids.extend(x.strip() for x in rest.split(",") if x.strip())
    return [i for i in ids if re.fullmatch(r"[\w.\-:]+", i)]


def seat_of(system: str) -> int:
    m = re.search(r"You are Player (\d+)", system)
    return int(m.group(1)) if m else 1


def decide(model: str, system: str, last_user: str, tool_choice: str, tools: list[str]) -> Reply:
    """`tool_choice` is normalised to "auto" | "none" | "required"."""
    seat = seat_of(system)
    ids = roster_ids(system)
    family = model.split("-")[0]
    own_family = [i for i in ids if i.startswith(family)] or ids or [model]
    # The Game Master's request to act is the last line of the last user turn.
    lines = last_user.strip().splitlines()
    last_line = lines[-1] if lines else ""
    guess_phase = re.search(r"Identity guess #(\d+): every active player", last_line)
    if guess_phase:
        # Guess within the own family, a different id each phase: a plausible strategy.
        k = (_h(model, seat) + int(guess_phase.group(1))) % len(own_family)
        return Reply(text=own_family[k])
    if "Introduction round" in last_line and "That is you" in last_line:
        return Reply(text=f"Hello from Player {seat}. I am curious which of us is which; "
                          "I tend to write concise, careful answers.")
    turn = re.search(r"Round (\d+), turn (\d+): Player \d+ speaks\. That is you", last_line)
    if turn is None or tool_choice == "none" or not tools:
        return Reply(text=f"Player {seat} here. Still thinking about who I am.")
    n = int(turn.group(2))
    m = re.search(r"among (\d+) AI language models", system)
    others = [p for p in range(1, int(m.group(1)) + 1 if m else 5) if p != seat]
    target = others[(_h(model, n) % len(others))]
    choice = (seat + n) % 4
    if choice == 0 or tool_choice == "none":
        return Reply(text=f"Player {seat}: Player {target} sounds like a large model to me.")
    if choice == 1 and "guess_model" in tools:
        guess = ids[_h(model, seat, n, target) % len(ids)] if ids else model
        return Reply(tool_calls=[("guess_model", {"player_id": target, "model_id": guess})])
    if choice == 2 and "proclaim_superiority" in tools:
        return Reply(text="Let me make a statement.",
                     tool_calls=[("proclaim_superiority",
                                  {"statement": f"Player {seat} reasons more carefully."})])
    if "propose_task" in tools:
        return Reply(tool_calls=[("propose_task",
                                  {"task": "Everyone: name a prime number above 100."})])
    return Reply(text="Nothing to add.")
