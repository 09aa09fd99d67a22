"""The task options that seat the evaluated model, and the one-line errors a bad option
gives when the task is made (before any sample runs). No eval runs here."""

from __future__ import annotations

import math

import pytest

from stille_post.core.errors import UsageError
from stille_post.games import all_games, get_game
from stille_post.inspect_tasks.scoring import GameResult, sample_value, seat_scores
from stille_post.inspect_tasks.seating import Layout, layout
from stille_post.inspect_tasks.task import task_name

ME = "inspect:openai/gpt-5-mini"


def test_seats_role_self_play_and_opponents() -> None:
    cham = get_game("chameleon")
    assert layout(cham, ME, options={}) == Layout([ME, "bot", "bot", "bot"])
    assert layout(cham, ME, options={}, seats="2,4", opponents="random") == \
        Layout(["random", ME, "random", ME])
    assert layout(cham, ME, options={}, seats=[3], opponents="a,b,c") == \
        Layout(["a", "b", ME, "c"])
    assert layout(cham, ME, options={"num_players": 5}, self_play=True) == Layout([ME] * 5)
    assert layout(cham, ME, options={}, role="chameleon") == \
        Layout(["bot"] * 4, {"chameleon": ME})
    assert len(layout(get_game("elimination"), ME, options={}, preset="short").players
               or []) == 4  # the preset's seat count


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"seats": "5"}, "has 4 seats"),
    ({"seats": "0"}, "seat numbers from 1"),
    ({"seats": "1,1"}, "names a seat twice"),
    ({"seats": "1", "role": "chameleon"}, "role= or seats="),
    ({"self_play": True, "seats": "1"}, "drop seats="),
    ({"role": "dealer"}, "has no role 'dealer'"),
    ({"opponents": "a,b"}, "names 2 seats but 3"),
    ({"opponents": ME}, "is the evaluated model"),
])
def test_bad_seating(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        layout(get_game("chameleon"), ME, options={}, **kwargs)  # type: ignore[arg-type]


def test_every_registered_game_has_a_task_named_after_it() -> None:
    from inspect_ai._util.registry import registry_info

    from stille_post.inspect_tasks._registry import TASKS

    assert set(TASKS) == {task_name(g) for g in all_games()}
    assert {registry_info(t).name for t in TASKS.values()} == \
        {f"stille_post/{task_name(g)}" for g in all_games()}


@pytest.mark.parametrize(("game", "options", "message"), [
    ("chameleon", {"role": "dealer"}, "stille_post/chameleon: chameleon has no role"),
    ("chameleon", {"words": 0}, "stille_post/chameleon: --words"),
    ("chameleon", {"opponents": "nobody"}, "unknown player 'nobody'"),
    ("stille-post", {"self_play": True}, "distinct identities"),
    ("chameleon", {"games": 0}, "at least 1"),
])
def test_a_bad_task_option_is_one_line_before_any_sample(
        game: str, options: dict[str, object], message: str) -> None:
    from stille_post.inspect_tasks._registry import TASKS

    with pytest.raises(ValueError, match=message) as caught:
        TASKS[task_name(game)](**options)
    assert "\n" not in str(caught.value)


def test_game_options_reach_the_game() -> None:
    from stille_post.inspect_tasks._registry import TASKS

    made = TASKS["chameleon"](games=3, seed=10, words=6, model="mockllm/model")
    assert [s.metadata["seed"] for s in made.dataset] == [10, 11, 12]  # type: ignore[index]
    assert made.metadata["options"] == {"words": 6}  # Inspect's `model` is not an option


def test_a_void_game_rewards_nobody_and_ranks_the_seat_last() -> None:
    result = GameResult("completed", "void", False, {1: 1, 2: 1, 3: 1}, (1, 2),
                        {1: {"decisions": 2, "valid_first_try": 1}, 2: {"decisions": 0}},
                        {1: ME, 2: ME, 3: "bot:x"})
    assert seat_scores(result)[1] == {"win": 0.0, "partial": 0.0, "placement": 3.0,
                                      "adherence": 0.5}
    value = sample_value(result)
    assert value["adherence"] == 0.5  # seat 2 was never asked: left out, not a 0
    won = GameResult("completed", None, True, {1: 1, 2: 3, 3: 2}, (1, 2), {}, {})
    assert sample_value(won)["win"] == 0.5 and sample_value(won)["partial"] == 0.5
    assert math.isnan(sample_value(won)["adherence"])

