"""`stille-post export` of results folders: the tables load with datasets, pandas and
polars; the rows per seat are the decisions the transcripts count; the three tables and
both formats say the same; re-exports add only new games or rewrite atomically."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from stille_post.export import ExportRequest, run_export
from stille_post.export.run import ExportExists
from tests.clirun import run_cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from tests.export.conftest import Folder, adherence_decisions, transcripts  # noqa: E402


def _rows(out: Path) -> list[dict[str, Any]]:
    return list(pq.read_table(out / "data").to_pylist())


def _jsonl_rows(out: Path) -> list[dict[str, Any]]:
    rows = []
    for part in sorted((out / "data").glob("*.jsonl")):
        rows += [json.loads(line) for line in part.read_text(encoding="utf-8").splitlines()]
    return rows


def test_a_tournament_folder_loads_with_datasets_pandas_and_polars(
        bot_folder: Folder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # datasets: offline (read when it is imported), its cache in the test's folder
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    datasets = pytest.importorskip("datasets")
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    folder = bot_folder("stille-post", 4)
    out = tmp_path / "out"
    done = run_cli("export", str(folder), "--out", str(out), "--hf-card")
    assert done.returncode == 0, done.stderr
    ds = datasets.load_dataset("parquet", data_dir=str(out), cache_dir=str(tmp_path / "hf"))
    train = ds["train"]
    frame = pd.read_parquet(out / "data")
    polars = pl.read_parquet(out / "data")
    # One row per decision: per game and seat, the result line's adherence count.
    want: Counter[tuple[str, int]] = Counter()
    for path in transcripts(folder):
        for seat, n in adherence_decisions(path).items():
            want[(f"{folder.name}/{path.stem}", seat)] = n
    assert sum(want.values()) > 0
    for name, got in (("datasets", Counter(zip(train["game_id"], train["seat"], strict=True))),
                      ("pandas", Counter(zip(frame["game_id"], frame["seat"], strict=True))),
                      ("polars", Counter(zip(polars["game_id"].to_list(),
                                             polars["seat"].to_list(), strict=True)))):
        assert got == want, name
    # Nested columns arrive nested, not as JSON text.
    first = train[0]
    assert isinstance(first["messages"], list) and first["messages"][0]["role"] == "user"
    assert isinstance(first["reply"], dict) and first["reply"]["text"]
    assert set(frame["prompt_source"]) == {"replayed"}
    assert polars.schema["messages"] == pl.List(pl.Struct(polars.schema["messages"].inner.fields))
    # The dataset card: the schema and the tournament's settings.
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "| `messages` |" in card and '"game": "stille-post"' in card


@pytest.mark.parametrize("what", ["games", "events"])
def test_games_and_events_tables(bot_folder: Folder, tmp_path: Path, what: str) -> None:
    folder = bot_folder("chameleon", 4)
    out = tmp_path / what
    result = run_export(ExportRequest((folder,), out, what=what))  # type: ignore[arg-type]
    assert result.games == 4 and not result.problems
    rows = _rows(out)
    lines = [[json.loads(x) for x in p.read_text(encoding="utf-8").splitlines()]
             for p in transcripts(folder)]
    if what == "games":
        assert len(rows) == 4
        for row, t in zip(sorted(rows, key=lambda r: r["game_id"]), lines, strict=True):
            result_line = t[-1]
            assert row["seed"] == t[0]["seed"] and row["status"] == result_line["status"]
            assert {s["seat"]: s["placement"] for s in row["seats"]} == {
                int(k): v for k, v in result_line["placements"].items()}
            assert json.loads(row["config"]) == t[0]["config"]
            assert row["decisions"] == sum(a["decisions"]
                                           for a in result_line["adherence"].values())
    else:
        events = [x for t in lines for x in t if x["kind"] == "event"]
        assert len(rows) == len(events)
        for row, e in zip(sorted(rows, key=lambda r: (r["game_id"], r["seq"])), events,
                          strict=True):
            assert (row["seq"], row["type"], row["actor"]) == (e["seq"], e["type"], e["actor"])
            assert json.loads(row["data"]) == e["data"]
            vis = e["visibility"]
            assert row["public"] == (vis == "public")
            assert row["audience"] == (None if vis == "public" else vis)


def test_parquet_and_jsonl_rows_are_the_same(bot_folder: Folder, tmp_path: Path) -> None:
    folder = bot_folder("elimination", 1)
    run_export(ExportRequest((folder,), tmp_path / "p"))
    run_export(ExportRequest((folder,), tmp_path / "j", fmt="jsonl"))
    parquet, jsonl = _rows(tmp_path / "p"), _jsonl_rows(tmp_path / "j")
    assert len(parquet) > 100
    assert parquet == jsonl


def test_the_schema_is_the_rows(bot_folder: Folder) -> None:
    """Every table's rows have exactly the schema's columns, in its order."""
    from stille_post.export.records import decision_records  # noqa: F401
    from stille_post.export.rows import TABLES
    from stille_post.export.schema import schema

    folder = bot_folder("stille-post", 4)
    for table in TABLES:
        out = folder.parent / f"schema-{table}"
        run_export(ExportRequest((folder,), out, what=table, fmt="jsonl"))
        row = _jsonl_rows(out)[0]
        assert list(row) == schema(table).names, table


def test_rewards_follow_the_scheme(bot_folder: Folder, tmp_path: Path) -> None:
    folder = bot_folder("stille-post", 4)
    run_export(ExportRequest((folder,), tmp_path / "w"))
    run_export(ExportRequest((folder,), tmp_path / "p", reward="partial"))
    for row in _rows(tmp_path / "w"):
        assert row["reward"] == (1.0 if row["placement"] == 1 else 0.0)
    for row in _rows(tmp_path / "p"):
        assert row["reward"] == pytest.approx((4 - row["placement"]) / 3)


def test_an_existing_export_is_one_line_unless_overwrite(bot_folder: Folder,
                                                         tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 4)
    out = tmp_path / "out"
    assert run_cli("export", str(folder), "--out", str(out)).returncode == 0
    before = {p.name: p.read_bytes() for p in (out / "data").iterdir()}
    again = run_cli("export", str(folder), "--out", str(out))
    assert again.returncode == 2
    assert again.stderr.count("\n") == 1 and "already holds an export" in again.stderr
    assert {p.name: p.read_bytes() for p in (out / "data").iterdir()} == before
    # A folder holding something else is never written into, --overwrite or not.
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    refused = run_cli("export", str(folder), "--out", str(other), "--overwrite")
    assert refused.returncode == 2 and "holds no export" in refused.stderr
    assert [p.name for p in other.iterdir()] == ["notes.txt"]


def test_a_re_export_after_resume_adds_only_the_new_games(bot_folder: Folder,
                                                          tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 4)
    games = transcripts(folder)
    held = tmp_path / "held"
    held.mkdir()
    for path in games[2:]:  # two games not played yet
        path.rename(held / path.name)
    out = tmp_path / "out"
    first = run_export(ExportRequest((folder,), out))
    assert first.games == 2 and first.mode == "new"
    part0 = (out / "data" / "part-00000.parquet")
    stamp = (part0.read_bytes(), part0.stat().st_mtime_ns)
    for path in held.iterdir():  # the resume plays them
        path.rename(folder / "games" / path.name)
    second = run_export(ExportRequest((folder,), out, overwrite=True))
    assert (second.mode, second.games, second.kept) == ("added", 2, 2)
    assert sorted(p.name for p in (out / "data").iterdir()) == ["part-00000.parquet",
                                                                "part-00001.parquet"]
    assert (part0.read_bytes(), part0.stat().st_mtime_ns) == stamp  # left as it was
    full = tmp_path / "full"
    run_export(ExportRequest((folder,), full))
    key = lambda r: (r["game_id"], r["decision"])  # noqa: E731
    assert sorted(_rows(out), key=key) == sorted(_rows(full), key=key)
    third = run_export(ExportRequest((folder,), out, overwrite=True))
    assert (third.mode, third.games) == ("unchanged", 0)
    # Other settings: written anew, in one swap.
    fourth = run_export(ExportRequest((folder,), out, overwrite=True, reward="partial"))
    assert fourth.mode == "rewritten" and fourth.games == 4
    assert [p.name for p in (out / "data").iterdir()] == ["part-00000.parquet"]
    assert {r["reward_scheme"] for r in _rows(out)} == {"partial"}


def test_a_failed_export_leaves_no_part_file_and_the_old_export_whole(
        bot_folder: Folder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stille_post.export import writer

    folder = bot_folder("chameleon", 4)
    out = tmp_path / "out"
    run_export(ExportRequest((folder,), out))
    before = sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*")
                    if p.is_file())
    calls = {"n": 0}
    real = writer.ParquetSink.add

    def failing(self: Any, row: dict[str, Any]) -> None:
        calls["n"] += 1
        if calls["n"] == 20:
            raise OSError(28, "No space left on device")
        real(self, row)

    monkeypatch.setattr(writer.ParquetSink, "add", failing)
    monkeypatch.setattr(writer, "ROW_GROUP_ROWS", 8)
    with pytest.raises(OSError):
        run_export(ExportRequest((folder,), out, overwrite=True, reward="partial"))
    after = sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*")
                   if p.is_file())
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chameleon-4", "out"]  # no staging
    # A first export that fails leaves no folder at all.
    with pytest.raises(OSError):
        calls["n"] = 0
        run_export(ExportRequest((folder,), tmp_path / "new"))
    assert not (tmp_path / "new").exists()


def test_part_files_the_manifest_does_not_list_are_removed(bot_folder: Folder,
                                                           tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 4)
    out = tmp_path / "out"
    run_export(ExportRequest((folder,), out))
    # A run killed between renaming a part into place and writing the manifest:
    orphan = out / "data" / "part-00007.parquet"
    orphan.write_bytes((out / "data" / "part-00000.parquet").read_bytes())
    (out / ".part-00008.parquet.tmp").write_bytes(b"half")
    result = run_export(ExportRequest((folder,), out, overwrite=True))
    assert result.mode == "unchanged"
    assert not orphan.exists() and not (out / ".part-00008.parquet.tmp").exists()
    assert len(_rows(out)) == sum(sum(adherence_decisions(p).values())
                                  for p in transcripts(folder))


def test_parquet_without_pyarrow_is_one_line_and_jsonl_still_works(
        bot_folder: Folder, tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 4)
    # A module shadowing pyarrow with an ImportError, first on the path.
    shadow = tmp_path / "shadow"
    (shadow / "pyarrow").mkdir(parents=True)
    (shadow / "pyarrow" / "__init__.py").write_text("raise ImportError('no pyarrow here')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(shadow), os.environ.get("PYTHONPATH", "")])}
    import subprocess
    import sys

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", "from stille_post.cli import main; main()",
                               *args], env=env, capture_output=True, text=True, timeout=300,
                              check=False)

    refused = cli("export", str(folder), "--out", str(tmp_path / "p"))
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip().splitlines() == [
        "error: Parquet export needs pyarrow: pip install 'stille_post[data]' "
        "(or --format jsonl)"]
    done = cli("export", str(folder), "--out", str(tmp_path / "j"), "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    assert len(_jsonl_rows(tmp_path / "j")) == sum(sum(adherence_decisions(p).values())
                                                   for p in transcripts(folder))


def test_export_needs_a_real_folder(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="no such folder"):
        run_export(ExportRequest((tmp_path / "missing",), tmp_path / "out"))
    done = run_cli("export", str(tmp_path / "missing"), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1


def test_export_exists_is_a_usage_error() -> None:
    from stille_post.core.errors import UsageError

    assert issubclass(ExportExists, UsageError)


def test_a_failed_re_export_adds_no_part_file(bot_folder: Folder, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Adding games in place: a part is named only once complete, and the manifest is
    replaced only after it, so a run that dies leaves the export as it was."""
    from stille_post.export import writer

    folder = bot_folder("chameleon", 4)
    held = tmp_path / "held"
    held.mkdir()
    for path in transcripts(folder)[2:]:
        path.rename(held / path.name)
    out = tmp_path / "out"
    run_export(ExportRequest((folder,), out))
    before = sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*")
                    if p.is_file())
    for path in held.iterdir():
        path.rename(folder / "games" / path.name)
    real = writer.ParquetSink.add
    calls = {"n": 0}

    def failing(self: Any, row: dict[str, Any]) -> None:
        calls["n"] += 1
        if calls["n"] == 12:
            raise OSError(28, "No space left on device")
        real(self, row)

    monkeypatch.setattr(writer.ParquetSink, "add", failing)
    monkeypatch.setattr(writer, "ROW_GROUP_ROWS", 4)  # a row group is on disk before
    # As after a kill -9: nothing cleans up behind the failed run.
    monkeypatch.setattr(writer.ParquetSink, "abort", lambda self: None)
    with pytest.raises(OSError):
        run_export(ExportRequest((folder,), out, overwrite=True))
    after = sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*")
                   if p.is_file() and not p.name.startswith(".part-"))
    assert after == before  # data/ and the manifest as they were
    monkeypatch.undo()
    again = run_export(ExportRequest((folder,), out, overwrite=True))
    assert (again.mode, again.games) == ("added", 2)
    assert not [p for p in out.iterdir() if p.name.startswith(".part-")]


def test_two_folders_of_one_name_are_refused(bot_folder: Folder, tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 4)
    twin = tmp_path / "elsewhere" / folder.name
    twin.parent.mkdir()
    import shutil

    shutil.copytree(folder, twin)
    done = run_cli("export", str(folder), str(twin), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "both hold game" in done.stderr
    assert not (tmp_path / "out").exists()
