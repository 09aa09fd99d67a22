"""YAML as plain data, parsed by libyaml's C parser when PyYAML was built with it.

PyYAML's `safe_load` always uses the pure-Python parser, several times slower than
libyaml on the spec's scenario files and the cassettes (docs/performance.md).
`CSafeLoader` builds the same plain data (the same safe tags: no Python objects); wheels
without libyaml fall back to the pure parser. Errors are `yaml.YAMLError` either way,
with the same `problem_mark`.

`load_bounded` is for files a user hands us (scripts, cassettes): an alias (`*a`) is a
pointer, so a few hundred bytes of nested aliases stand for billions of nodes once the
data is walked (a "billion laughs" bomb: 715 bytes ran for minutes, 561 bytes wrote a
6.2 MB transcript). It refuses a file over `max_bytes`, and a document that, with
every alias expanded, is bigger than `max_expanded` (nodes plus scalar characters); the
size is taken on the composed node graph with each distinct node sized once, so the
check itself is linear in the file.
"""

from __future__ import annotations

from typing import Any

import yaml

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# The expanded size of a document: one per node plus the characters of each scalar,
# every alias counted as a copy of what it points at. A document without aliases is
# about as big as its text; 16 MiB is ~30x the biggest repository cassette.
MAX_EXPANDED = 16 << 20


class TooBigError(ValueError):
    """A YAML document over the size or expanded-node bound (an alias bomb, say)."""


def safe_load(text: str) -> Any:
    return yaml.load(text, Loader=_LOADER)


def load_bounded(text: str, *, max_bytes: int, max_expanded: int = MAX_EXPANDED) -> Any:
    """`safe_load` that raises `TooBigError` (one line) instead of building data that
    would expand past `max_expanded` (see above), or reading text longer than
    `max_bytes`."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise TooBigError(f"{size} bytes, over the limit of {max_bytes}")
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node, max_expanded) > max_expanded:
            raise TooBigError(f"its aliases expand it past {max_expanded} nodes and "
                              "characters (an alias bomb?)")
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _expanded_size(root: yaml.Node, cap: int) -> int:
    """How many nodes and scalar characters `root` stands for with every alias
    expanded (stops counting past `cap`).
    Iterative (a deep document must not hit the recursion limit); each distinct node is
    sized once, an alias costing what its target costs."""
    sizes: dict[int, int] = {}
    entered: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes or (not children_done and key in entered):
            continue
        kids = _children(node)
        if not children_done and kids:
            entered.add(key)
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in sizes)
            continue
        # A recursive alias (a node inside itself) has no size yet: count it once.
        own = len(node.value) if isinstance(node, yaml.ScalarNode) else 0
        total = 1 + own + sum(sizes.get(id(k), 1) for k in kids)
        sizes[key] = min(total, cap + 1)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []
