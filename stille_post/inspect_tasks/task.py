"""One Inspect task per registered game, made from its `GameDefinition` alone.

    inspect eval stille_post/<game> --model openai/gpt-5-mini -T games=20 -T seed=1

Each sample is one game with its own seed (`seed`, `seed + 1`, ...), played by the same
`play_game` as `stille-post play`. The evaluated model (Inspect's `--model`, bound with
`get_model()`) fills the seats the options choose (seating.py); every one of its
decisions is one `Model.generate()` call with our tools as Inspect tools
(providers/inspect_model.py), so Inspect's retries, cache, limits and usage accounting
apply, while re-asks and forfeits stay the kit's. The scorer reads our outcome
(scoring.py). Each sample's log holds the public record (an info event and the store)
and the evaluated seat's view (the sample's messages); our own transcript is written to
a results folder beside Inspect's log (results.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stille_post.core.errors import UsageError
from stille_post.core.rng import make_rng
from stille_post.games import get_game
from stille_post.games.kit.definition import GameDefinition
from stille_post.games.kit.setup import prepare
from stille_post.inspect_tasks import results
from stille_post.inspect_tasks.record import PublicRecord
from stille_post.inspect_tasks.scoring import SCORE_KEYS, GameResult, explanation, sample_value
from stille_post.inspect_tasks.seating import Layout, layout
from stille_post.players.base import Player, PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.players.specs import parse_seat_spec
from stille_post.providers.inspect_model import (
    InspectProvider,
    to_inspect_messages,
)
from stille_post.session import play_game

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.model import ChatMessage, Model
    from inspect_ai.scorer import Scorer
    from inspect_ai.solver import Solver

NAMESPACE = __name__.partition(".")[0]  # the entry point's name: tasks are NAMESPACE/<name>
STORE_RESULT = f"{NAMESPACE}:result"
STORE_RECORD = f"{NAMESPACE}:public_record"
DEFAULT_OUT = Path("runs") / "inspect"  # when the log is not a local file
# What the dry run seats in the evaluated seats before any model is known.
_PLACEHOLDER = "inspect:evaluated/model"


def task_name(game: str) -> str:
    """`my-game` -> `my_game`: Inspect's task names are Python names."""
    return game.replace("-", "_")


def game_task(definition: GameDefinition) -> Callable[..., Task]:
    """The registered task function of one game (`stille_post/<name>`)."""
    from inspect_ai import task
    from inspect_ai._util.registry import registry_name

    game = definition.name

    def make(games: int = 10, seed: int = 1, seats: Any = None, opponents: Any = "bot",
             role: str | None = None, self_play: bool = False, preset: str | None = None,
             out: str | None = None, **options: Any) -> Task:
        return build_task(get_game(game), games=games, seed=seed, seats=seats,
                          opponents=opponents, role=role, self_play=self_play,
                          preset=preset, out=out, options=options)

    make.__name__ = make.__qualname__ = task_name(game)
    make.__doc__ = f"{definition.title}: {definition.description}"
    # Inspect prefixes a task's name with its package when it can tell the function
    # comes from an installed package (inspect_ai._util.registry.registry_name); it
    # cannot when a source checkout's egg-info is on sys.path before the install (tests
    # run from the repository). Either way the task is `stille_post/<name>`.
    name = task_name(game)
    if registry_name(make, name) != f"{NAMESPACE}/{name}":
        name = f"{NAMESPACE}/{name}"
    return task(name=name)(make)


def build_task(definition: GameDefinition, *, games: int, seed: int, seats: Any,
               opponents: Any, role: str | None, self_play: bool, preset: str | None,
               out: str | None, options: dict[str, Any]) -> Task:
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample

    # Inspect hands every task its `model`; any other key is the game's own option.
    options = {k: v for k, v in options.items() if k != "model"}
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games={games!r}: give the number of games, at least 1")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed={seed!r}: give a whole number")
    seating = {"seats": seats, "role": role, "self_play": bool(self_play),
               "opponents": opponents}
    check(definition, seed=seed, options=options, preset=preset, seating=seating)
    samples = [Sample(input=f"Play {definition.title} (seed {s}).", id=f"s{s}",
                      metadata={"game": definition.name, "seed": s})
               for s in range(seed, seed + games)]
    return Task(dataset=MemoryDataset(samples, name=definition.name),
                solver=play(definition.name, seating=seating, options=options,
                            preset=preset, out=out),
                scorer=game_score(),
                metadata={"game": definition.name, **{k: v for k, v in seating.items()},
                          "options": options, "preset": preset})


def check(definition: GameDefinition, *, seed: int, options: dict[str, Any],
          preset: str | None, seating: dict[str, Any]) -> None:
    """Set up the first game without playing it, so that a bad option, seat or role is
    one line before any sample runs (a ValueError Inspect shows as the task's error)."""
    try:
        seats = layout(definition, _PLACEHOLDER, options=options, preset=preset,
                       **seating)
        prepare(definition, seed=seed, rng=make_rng(seed), players=seats.players,
                options=options, roles=seats.roles, preset=preset,
                llm_factory=_stand_in)
    except UsageError as exc:
        raise ValueError(f"stille_post/{task_name(definition.name)}: {exc}") from None


def _stand_in(spec: str, prompts: PromptBook) -> Player:
    from stille_post.providers.scripted import ScriptedProvider

    return LLMPlayer(ScriptedProvider([]), prompts, name=spec)  # never asked


class SampleSeats:
    """The LLM factory of one sample: the evaluated seats on the task's model, other
    `inspect:` seats on their own Inspect model, and our own kinds (`openai:MODEL`,
    `model:ALIAS`, ...) through the CLI's factory, live."""

    def __init__(self, model: Model, evaluated: str) -> None:
        self.model = model
        self.evaluated = evaluated
        self.evaluated_players: list[tuple[LLMPlayer, InspectProvider]] = []
        self.inspect_providers: list[InspectProvider] = []
        self._ours: Any = None

    def __call__(self, spec_text: str, prompts: PromptBook) -> Player:
        if spec_text == self.evaluated:
            provider = InspectProvider(self.model)
            player = LLMPlayer(provider, prompts, name=spec_text)
            self.evaluated_players.append((player, provider))
            self.inspect_providers.append(provider)
            return player
        spec = parse_seat_spec(spec_text, ())
        if spec.provider == "inspect" and spec.model is not None:
            provider = InspectProvider(spec.model)
            self.inspect_providers.append(provider)
            return LLMPlayer(provider, prompts, name=spec_text)
        if self._ours is None:
            from stille_post.cli.llm_seats import make_llm_factory

            self._ours = make_llm_factory()
        ours: Player = self._ours(spec_text, prompts)
        return ours

    def limit_error(self) -> BaseException | None:
        return next((p.limit_error for p in self.inspect_providers if p.limit_error), None)

    async def aclose(self) -> None:
        if self._ours is not None:
            await self._ours.aclose()


def play(game: str, *, seating: dict[str, Any], options: dict[str, Any],
         preset: str | None, out: str | None) -> Solver:
    from inspect_ai.log import transcript
    from inspect_ai.log._samples import sample_active
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.solver import Generate, TaskState, solver

    @solver(name="play_game")
    def play_solver() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            definition = get_game(game)
            model = get_model()
            evaluated = f"inspect:{model}"
            seats: Layout = layout(definition, evaluated, options=options, preset=preset,
                                  **seating)
            seed = int(state.metadata["seed"])
            active = sample_active()
            folder = Path(out) if out else results.folder_beside(
                active.log_location if active else None, DEFAULT_OUT / task_name(game))
            results.open_folder(folder, game)
            game_id, part = results.new_transcript(folder, f"{state.sample_id}-e{state.epoch}")
            factory = SampleSeats(model, evaluated)
            record = PublicRecord(definition.events)
            try:
                run = await play_game(game, seed=seed, out=part, players=seats.players,
                                      roles=seats.roles, options=options, preset=preset,
                                      llm_factory=factory, watch=record)
            except BaseException:
                part.unlink(missing_ok=True)  # no game was played: nothing to keep
                raise
            finally:
                await factory.aclose()
            path = results.adopt(folder, game_id, part)
            labels = {int(k): str(v.get("player", "")) for k, v in run.seats.items()}
            outcome = run.outcome
            result = GameResult(
                status=outcome.status, reason=outcome.reason, valid=outcome.summary.valid,
                placements=dict(outcome.placements),
                evaluated=tuple(s for s, label in sorted(labels.items())
                                if label == evaluated),
                adherence=dict(outcome.adherence), labels=labels, transcript=str(path))
            state.store.set(STORE_RESULT, result.to_json())
            state.store.set(STORE_RECORD, record.lines)
            transcript().info(record.markdown() or "(no public events)",
                              source=f"{NAMESPACE}: public record")
            state.messages = seat_view(factory, result)
            state.output = ModelOutput.from_content(str(model), explanation(result))
            limit = factory.limit_error()
            if limit is not None:
                raise limit  # Inspect records its limit as for any task
            return state

        return solve

    return play_solver()


def seat_view(factory: SampleSeats, result: GameResult) -> list[ChatMessage]:
    """The conversation of the first evaluated seat that was asked anything, as it last
    saw it, with its last reply. The evaluated players were made in seat order (the kit
    seats players 1..n in turn), so the k-th one plays the k-th evaluated seat."""
    from inspect_ai.model import ChatMessageUser

    for player, provider in factory.evaluated_players[:len(result.evaluated)]:
        if player.last_request is None:
            continue
        messages = to_inspect_messages(player.last_request)
        if provider.last_output is not None:
            messages.append(provider.last_output.message)
        return messages
    seats = ", ".join(f"Player {s}" for s in result.evaluated) or "no seat"
    return [ChatMessageUser(content=f"The evaluated model ({seats}) was asked nothing "
                                    "before the game ended.")]


def game_score() -> Scorer:
    from inspect_ai.scorer import Score, Target, mean, scorer, stderr
    from inspect_ai.solver import TaskState

    @scorer(name="game_score", metrics={key: [mean(), stderr()] for key in SCORE_KEYS})
    def game_scorer() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            data = state.store.get(STORE_RESULT)
            if data is None:  # the solver failed before the game ended
                return Score(value={k: float("nan") for k in SCORE_KEYS},
                             explanation="no game was played")
            result = GameResult.from_json(data)
            return Score(value=sample_value(result),
                         answer=state.output.completion.splitlines()[0]
                         if state.output.completion else None,
                         explanation=explanation(result),
                         metadata=result.to_json())

        return score

    return game_scorer()
