"""Hostile YAML shared by the tests, the bad-input table and the chaos run."""

from __future__ import annotations


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """A "billion laughs" script: each level a list of `width` aliases of the one below,
    so `width ** levels` strings (9**9 = 387 million) from a few hundred bytes."""
    lines = ['- &l0 {text: "lol lol lol lol lol lol lol lol"}']
    for i in range(1, levels + 1):
        lines.append(f"- &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def text_bomb(levels: int = 6, width: int = 9) -> str:
    """Aliases that expand inside one reply's text-like data (a long transcript)."""
    return ("replies:\n" + "\n".join(
        f"  - &r{i} " + ("{text: 'x'}" if i == 0 else "[" + ", ".join([f"*r{i - 1}"] * width)
                         + "]") for i in range(levels + 1)) + "\n")
