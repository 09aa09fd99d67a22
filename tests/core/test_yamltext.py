"""The fast YAML reader builds what PyYAML's own safe_load builds, and stays safe."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stille_post.core import yamltext

ROOT = Path(__file__).resolve().parents[2]


def test_the_c_parser_is_used_when_pyyaml_has_it() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("this PyYAML was built without libyaml")
    assert yamltext._LOADER is yaml.CSafeLoader


@pytest.mark.parametrize("path", [
    *sorted((ROOT / "stille_post" / "games").glob("*/spec/*.yaml"))[:6],
    min((ROOT / "cassettes").rglob("*.yaml"), key=lambda p: p.stat().st_size),
], ids=lambda p: p.name)
def test_same_data_as_pyyaml_on_the_repos_files(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert yamltext.safe_load(text) == yaml.safe_load(text)


@pytest.mark.parametrize("text", [
    "!!python/object/apply:os.system ['true']",
    "!!python/name:os.system",
    "a: !!python/tuple [1, 2]",
])
def test_python_tags_are_refused(text: str) -> None:
    with pytest.raises(yaml.YAMLError):
        yamltext.safe_load(text)


def test_a_syntax_error_carries_its_line() -> None:
    with pytest.raises(yaml.MarkedYAMLError) as err:
        yamltext.safe_load("a: 1\nb: [2, 3\nc: 4\n")
    assert err.value.problem_mark is not None and err.value.problem_mark.line >= 1
