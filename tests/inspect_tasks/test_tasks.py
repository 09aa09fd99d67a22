"""Our games as Inspect tasks, end to end through `inspect_ai.eval(...)` on Inspect's own
`mockllm/model` with custom outputs, the log read back with `read_eval_log`.

The Chameleon runs in the fast suite; the other three games are `slow` (each eval takes
seconds: docs/inspect.md has the figures)."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog

from stille_post.core.transcript import Transcript
from stille_post.games import get_game
from stille_post.inspect_tasks.scoring import SCORE_KEYS
from stille_post.inspect_tasks.task import STORE_RESULT
from stille_post.tournament.results import load_results
from tests.inspect_tasks.evals import EVALUATED, beside, expected_scores, log_text, run_task
from tests.inspect_tasks.policies import garbage, mixed, plausible

# Short games: the fewest seats and rounds that still ask every kind of decision.
GAMES = {
    "chameleon": {},
    "elimination": {"preset": "short"},
    "connections": {},
    "stille-post": {"max_rounds": 2},
}

# the first Inspect eval in a process imports its model clients: seconds
pytestmark = pytest.mark.heavy


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b)


def check_against_our_outcome(log: EvalLog, games: int) -> None:
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == games
    folder = beside(log)
    results = load_results(folder)
    assert results.planned == games  # our transcripts, beside the log, read as a results folder
    values: dict[str, list[float]] = {k: [] for k in SCORE_KEYS}
    for sample in log.samples:
        assert sample.error is None
        assert sample.scores is not None
        score = sample.scores["game_score"]
        transcript = Path(score.metadata["transcript"])  # type: ignore[index]
        assert transcript.parent.parent == folder
        expected = expected_scores(transcript)
        for key in SCORE_KEYS:
            got = score.value[key]  # type: ignore[index]
            assert same(got, expected[key]), (sample.id, key, got, expected[key])
            values[key].append(got)
        # the store holds the result; the seat's view is the sample's conversation
        assert sample.store[STORE_RESULT]["evaluated"]
        roles = [m.role for m in sample.messages]
        assert roles[0] == "system" and roles[-1] == "assistant"
        # the public record is an info event of the sample, line for line our public events
        [info] = [e for e in sample.events if e.event == "info"]
        t = Transcript.load(transcript)
        vocabulary = get_game(t.game).events
        lines = str(info.data).split("\n\n")
        public = [e for e in t.events if e.visibility.is_public
                  and vocabulary[e.type].generic != "silent"
                  and str(e.data.get(vocabulary[e.type].text_key, "")).strip()]
        assert len(lines) == len(public)  # one line per public event, and nothing else
        spoken = [f"**Player {e.actor}:** {str(e.data[vocabulary[e.type].text_key]).strip()}"
                  for e in public if vocabulary[e.type].generic == "speech"]
        assert all(line in lines for line in spoken)
    # the aggregate metrics are Inspect's mean and stderr of the sample values
    assert log.results is not None
    for eval_score in log.results.scores:
        present = [v for v in values[eval_score.name] if not math.isnan(v)]
        mean = eval_score.metrics["mean"].value
        stderr = eval_score.metrics["stderr"].value
        assert mean == pytest.approx(statistics.fmean(present))
        assert stderr == pytest.approx(statistics.stdev(present) / math.sqrt(len(present))
                                       if len(present) > 1 else 0.0)


def test_the_chameleon_task_scores_our_outcome(tmp_path: Path) -> None:
    log = run_task("chameleon", tmp_path, mixed(), games=3, seed=4)
    check_against_our_outcome(log, 3)
    assert log.eval.task == "stille_post/chameleon"
    # each sample is one game with its own seed
    seeds = [Transcript.load(Path(s.scores["game_score"].metadata["transcript"])).header["seed"]
             for s in log.samples or []]
    assert seeds == [4, 5, 6]


@pytest.mark.slow
@pytest.mark.parametrize("game", [g for g in GAMES if g != "chameleon"])
def test_each_game_task_scores_our_outcome(game: str, tmp_path: Path) -> None:
    log = run_task(game, tmp_path, plausible, games=2, **GAMES[game])
    check_against_our_outcome(log, 2)


def test_a_model_that_only_returns_garbage_forfeits_without_a_traceback(
        tmp_path: Path) -> None:
    log = run_task("chameleon", tmp_path, garbage, games=2, seed=1, self_play=True)
    check_against_our_outcome(log, 2)
    assert "Traceback (most recent call last)" not in log_text(log)
    for sample in log.samples or []:
        assert sample.error is None and not sample.error_retries
        assert all(getattr(e, "traceback", None) is None for e in sample.events)
    for sample in log.samples or []:
        result = sample.store[STORE_RESULT]
        # The Chameleon's rule: a seat with no usable answer after its re-ask voids the game.
        assert result["status"] == "completed" and result["valid"] is False
        assert "invalid reply" in result["reason"] or "gave no usable answer" in result["reason"]
        asked = [row for row in result["adherence"].values() if row["decisions"]]
        assert asked and all(row["forfeits"] == row["decisions"] for row in asked)
        assert all(row["valid_first_try"] == 0 for row in asked)
        assert sample.scores["game_score"].value["adherence"] == 0.0  # type: ignore[index]


def test_role_option_puts_the_model_in_that_role(tmp_path: Path) -> None:
    log = run_task("chameleon", tmp_path, plausible, games=2, seed=1, role="chameleon")
    check_against_our_outcome(log, 2)
    for sample in log.samples or []:
        t = Transcript.load(Path(sample.scores["game_score"].metadata["transcript"]))
        mine = [s for s, info in t.seats.items() if info["player"] == EVALUATED]
        assert [t.seats[s]["role"] for s in mine] == ["chameleon"]


def test_a_token_limit_stops_the_sample_as_inspect_limits_do(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from stille_post.inspect_tasks._registry import TASKS

    model = get_model("mockllm/model", custom_outputs=plausible, memoize=False)
    [log] = inspect_eval(TASKS["chameleon"](games=1, self_play=True), model=model,
                         log_dir=str(tmp_path), display="none", token_limit=150)
    assert log.samples is not None
    [sample] = log.samples
    assert sample.limit is not None and sample.limit.type == "token"
    result = sample.store[STORE_RESULT]
    assert result["status"] == "aborted" and "limit" in result["reason"]
    assert Transcript.load(Path(result["transcript"])).result is not None  # kept, whole
