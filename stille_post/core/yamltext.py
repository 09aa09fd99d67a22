"""YAML as plain data, parsed by libyaml's C parser when PyYAML was built with it.

PyYAML's `safe_load` always uses the pure-Python parser, several times slower than
libyaml on the spec's scenario files and the cassettes (docs/performance.md).
`CSafeLoader` builds the same plain data (the same safe tags: no Python objects); wheels
without libyaml fall back to the pure parser. Errors are `yaml.YAMLError` either way,
with the same `problem_mark`.
"""

from __future__ import annotations

from typing import Any

import yaml

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str) -> Any:
    return yaml.load(text, Loader=_LOADER)
