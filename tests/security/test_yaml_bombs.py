"""M5: a `script:` seat (or a cassette) that is an alias bomb or simply too big is refused
in one line, before anything walks it."""

from __future__ import annotations

from pathlib import Path

import pytest

from stille_post.core import yamltext
from stille_post.core.errors import ScenarioError, UsageError
from stille_post.games import get_game
from stille_post.players import script_seat
from stille_post.players.script_seat import script_player
from stille_post.players.specs import SeatSpec
from stille_post.providers.recording import check_cassette
from tests.security.bombs import alias_bomb, text_bomb


def _script(path: Path) -> object:
    prompts = get_game("stille-post").prompts
    return script_player(SeatSpec(raw=f"script:{path}", script=str(path)), prompts)


@pytest.mark.parametrize("bomb", [alias_bomb(), text_bomb()], ids=["nested", "replies"])
def test_an_alias_bomb_script_is_refused(tmp_path: Path, bomb: str) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb, encoding="utf-8")
    assert len(bomb) < 800
    with pytest.raises(ScenarioError, match="alias bomb"):
        _script(path)


def test_an_oversized_script_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    limit = script_seat.MAX_SCRIPT_BYTES
    path.write_text("- hello\n" * (limit // 8 + 10), encoding="utf-8")
    with pytest.raises(ScenarioError, match="over the limit"):
        _script(path)


def test_a_normal_script_and_benign_aliases_still_load(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text("- &hi {text: hello}\n- *hi\n- text: bye\n", encoding="utf-8")
    player = _script(path)
    assert player.provider.remaining == 3  # type: ignore[attr-defined]


def test_a_recursive_alias_is_bounded() -> None:
    # A node that contains itself: the size check must terminate.
    data = yamltext.load_bounded("&a [*a, 1]\n", max_bytes=100)
    assert data[1] == 1 and data[0] is data


def test_an_alias_bomb_cassette_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text("interactions:\n" + "".join(
        "  " + line + "\n" for line in alias_bomb(levels=12).splitlines()), encoding="utf-8")
    with pytest.raises(UsageError, match="alias bomb"):
        check_cassette(path)
