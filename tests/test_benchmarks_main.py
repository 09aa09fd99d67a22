"""`python -m benchmarks NAME --help` prints the benchmark's options and runs nothing."""

from __future__ import annotations

import pytest

from benchmarks.__main__ import main


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_the_options_and_plays_nothing(flag: str, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import benchmarks.bench_chameleon_theory as bench

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("--help started the sweep")

    monkeypatch.setattr(bench, "play_point", refuse)
    assert main(["chameleon-theory", flag]) == 0
    out = capsys.readouterr().out
    assert "--games G" in out and "--no-play" in out


def test_an_unknown_benchmark_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-benchmark", "--help"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
