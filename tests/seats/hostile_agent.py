"""A hostile agent, for tests/seats/test_agent_isolation.py: it looks for what it must
not see (values the test writes into a copy of this file: the other role's secret word,
an API key, the run's folder) in `gc`, every thread's stack, its environment, the run's
files and the parent's `/proc` entries, and reports what it found, by name only, through
its model (`context.model`), which the test records.

The values are kept reversed here, and only the search's own list holds them forward:
the search skips that list and its own frames, so a find is a real find."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
from typing import Any

from stille_post.providers.base import ChatRequest, Completion, Message, Usage

REVERSED: dict[str, list[str]] = {}  # name -> its forms, each [::-1]; written by the test
RUN_DIR = ""  # the run's folder, written by the test


def _search() -> tuple[list[str], int]:
    # The last search's own objects may still be in a cycle (a frame that holds itself):
    # they go first, or they would be found.
    gc.collect()
    # Each value as it is, and as a JSON file writes it (quotes escaped).
    needles = [(name, form) for name, values in REVERSED.items() for value in values
               for form in {value[::-1], json.dumps(value[::-1])[1:-1]}]
    own = {id(needles), *(id(pair) for pair in needles), *(id(v) for _, v in needles)}
    found: set[str] = set()

    def look(where: str, text: str) -> None:
        for name, value in needles:
            if value in text:
                found.add(f"{where}:{name}")

    for obj in gc.get_objects():
        if id(obj) in own:
            continue
        try:
            referents = gc.get_referents(obj)
        except Exception:
            continue
        for ref in referents:
            if id(ref) in own:
                continue
            if isinstance(ref, str):
                look("gc", ref)
            elif isinstance(ref, bytes | bytearray):
                look("gc", bytes(ref).decode("latin-1"))
    here = sys._getframe()
    for frame in list(sys._current_frames().values()):
        f: Any = frame
        while f is not None:
            if f is not here and f.f_globals is not globals():
                for value in list(f.f_locals.values()):
                    if id(value) in own:
                        continue
                    with contextlib.suppress(Exception):
                        look("stack", repr(value)[:200_000])
            f = f.f_back
    del here, frame, f  # no cycle through this frame
    look("environ", repr(dict(os.environ)))
    parent = os.getppid()
    paths = [f"/proc/{parent}/environ", f"/proc/{parent}/cmdline", f"/proc/{parent}/maps"]
    listed = 0
    for root, _dirs, files in os.walk(RUN_DIR):
        paths += [os.path.join(root, name) for name in files]
        listed += len(files)
    for path in paths:
        try:
            with open(path, "rb") as fh:
                look("file", fh.read(50_000_000).replace(b"\0", b" ").decode("latin-1"))
        except OSError:
            continue
    return sorted(found), listed


def report_word(found: list[str], listed: int) -> str:
    """The finds as one word (its reply, so that a transcript carries them): "gs" for
    `gc:secret`, "ek" for `environ:key`, ...; "clean" for none; then whether it could
    list the run's folder."""
    codes = "".join(where[0] + name[0] for where, _, name in
                    (f.partition(":") for f in found))
    return f"zzreport{codes or 'clean'}{'listed' if listed else 'blind'}"


class Agent:
    def __init__(self, context: Any) -> None:
        self.model = context.model

    async def respond(self, request: ChatRequest) -> Completion:
        found, listed = _search()
        report = {"found": found, "listed": listed,
                  "seat_view": "chameleon" in request.system.lower()}
        await self.model.complete(ChatRequest(system="REPORT",
                                              messages=[Message("user", json.dumps(report))]))
        return Completion(report_word(found, listed), [], Usage(), "hostile")
