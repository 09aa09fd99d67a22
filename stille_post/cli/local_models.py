"""The `local-models` command: the local proving ground (docs/adherence.md).

Plays every game with one seat of a real local model beside the game's bots, and prints
how well each model follows the rules: a row per game × model with its decisions, the
share valid on the first try, re-asked, forfeited and over a word or character limit
(95% Wilson intervals), the refused replies by kind (games/kit/adherence.py), and the
mean tokens and seconds per decision. The same games with a bot in the model's seat are
the baseline rows. Each game names what is played (`trial` in its definition).

By default it serves the small models that installed packages ship (local_server.py) on
a free loopback port and stops the server at the end; `--server URL --model NAME` points
it at any other OpenAI-compatible server instead (Ollama, vLLM, ...).

`--structured MODE` plays the model seats with constrained decoding (players/llm.py:
the decision's legal moves as a schema the server decodes under); `--structured both`
plays every game × model free and with "schema", and prints the two side by side, with
the refusals of replies that met their schema counted apart (the rules no schema states).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from stille_post.core.errors import UsageError
from stille_post.games.kit.adherence import ERROR_KINDS, SeatAdherence
from stille_post.games.kit.definition import MODEL_SEAT, Trial
from stille_post.games.kit.stats import ratio, wilson


def trials(names: list[str] | None) -> dict[str, Trial]:
    """The games to play (each game's `trial`, games/kit/definition.py): all that have
    one, or the named ones."""
    from stille_post.games import all_games

    games = all_games()
    known = {name: g.trial for name, g in games.items() if g.trial is not None}
    for name in names or ():
        if name not in known:
            raise UsageError(f"unknown game {name!r}; the proving ground plays "
                             f"{', '.join(known)}")
    return {name: known[name] for name in names or known}


MODES = ("off", "schema", "legal")


@dataclass
class Row:
    game: str
    model: str
    mode: str = "off"  # the model seat's constrained decoding
    games: int = 0
    seconds: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    tally: SeatAdherence = field(default_factory=SeatAdherence)

    def to_json(self) -> dict[str, Any]:
        t, n = self.tally, self.tally.decisions

        def rate(count: int) -> dict[str, Any]:
            return {"count": count, "rate": ratio(count, n), "ci": wilson(count, n)}

        return {"game": self.game, "model": self.model, "mode": self.mode,
                "games": self.games, "decisions": n,
                "valid_first_try": rate(t.valid_first_try), "reasks": rate(t.reasked),
                "forfeits": rate(t.forfeits), "over_limit": rate(t.over_limit),
                "errors": {k: t.errors.get(k, 0) for k in ERROR_KINDS},
                "structured_decisions": t.structured, "beyond_schema": t.beyond_schema,
                "input_tokens_per_decision": ratio(self.input_tokens, n),
                "output_tokens_per_decision": ratio(self.output_tokens, n),
                "seconds_per_decision": ratio(self.seconds, n)}


def play_setup(game: str, setup: Trial, seat: str, seeds: list[int], out: Path,
               label: str, *, online: bool, record: Path | None = None,
               mode: str = "off", options: Mapping[str, Any] | None = None) -> Row:
    """The games of one row: `seat` in the model's place; the row counts that seat only.
    `record`: a folder for the game's cassette and its setup (one seed). `mode`: the
    seat's constrained decoding; `options`: its provider's extra options."""
    from stille_post.cli.llm_seats import llm_session
    from stille_post.session import play_game

    players = [seat if p == MODEL_SEAT else p for p in setup.players]
    index = setup.players.index(MODEL_SEAT)
    row = Row(game, label, mode)
    suffix = "" if mode == "off" else f"-{mode}"
    for seed in seeds:
        path = out / f"{game}-{label.replace(':', '-')}{suffix}-{seed}.jsonl"
        path.unlink(missing_ok=True)
        cassette = None
        if record is not None:
            cassette = record / f"{game}.yaml"
            cassette.unlink(missing_ok=True)
            setup_json: dict[str, Any] = {"seed": seed, "players": players,
                                          "options": dict(setup.options)}
            if mode != "off":
                setup_json["structured"] = mode
            (record / f"{game}.json").write_text(json.dumps(setup_json, indent=2) + "\n",
                                                 encoding="utf-8")
        t0 = time.monotonic()
        with llm_session(online=online, record=cassette, replay=None,
                         structured=mode if online else None, extra_options=options,
                         preflight_seats=None) as factory:
            run = asyncio.run(_play(play_game, game, seed, path, players, setup.options,
                                    factory))
        row.seconds += time.monotonic() - t0
        if record is not None:
            (record / f"{game}.transcript.jsonl").write_bytes(path.read_bytes())
        mine = sorted(run.outcome.adherence)[index]
        row.tally.add(SeatAdherence.from_json(run.outcome.adherence[mine]) or SeatAdherence())
        row.games += 1
        usage = run.outcome.usage.get(mine)
        if usage is not None:
            row.input_tokens += usage.input_tokens
            row.output_tokens += usage.output_tokens
    return row


async def _play(play_game: Callable[..., Any], game: str, seed: int, path: Path,
                players: list[str], options: Mapping[str, Any], factory: Any) -> Any:
    try:
        return await play_game(game, seed=seed, out=path, players=players, options=options,
                               llm_factory=factory)
    finally:
        if factory is not None:  # its HTTP connections close on the loop that opened them
            await factory.aclose()


def answered_nothing(row: Row) -> bool:
    """Every reply of the model's seat was empty or never came."""
    t = row.tally
    return t.decisions > 0 and t.valid_first_try == 0 and t.forfeits == t.decisions and \
        set(t.errors) <= {"empty", "no_answer"}


def prove(models: list[str], url: str, games: dict[str, Trial], seeds: list[int], out: Path,
          baselines: bool, progress: Callable[[str], None],
          record: Path | None = None, modes: tuple[str, ...] = ("off",),
          options: Mapping[str, Any] | None = None) -> list[Row]:
    # wordllama (the Connections bots' embeddings) turns on INFO logging when imported,
    # and httpx would then log every request of the model's seat.
    for name in ("httpx", "httpx2"):  # httpx2: the HTTP client the openai SDK ships
        logging.getLogger(name).setLevel(logging.WARNING)
    rows: list[Row] = []
    for game, setup in games.items():
        if baselines:
            rows.append(play_setup(game, setup, setup.baseline, seeds, out,
                                   f"bot:{setup.baseline}", online=False))
        for model in models:
            for mode in modes:
                label = model if mode == "off" else f"{model} ({mode})"
                progress(f"{game}: {label} ...")
                folder = None if record is None else (
                    record if len(modes) == 1 else record / mode)
                if folder is not None:
                    folder.mkdir(parents=True, exist_ok=True)
                row = play_setup(game, setup, f"openai-compatible:{model}@{url}", seeds, out,
                                 model, online=True, record=folder, mode=mode,
                                 options=options)
                if answered_nothing(row):
                    raise UsageError(f"{model} at {url} answered nothing in {game} "
                                     f"({row.tally.decisions} decisions, every reply empty "
                                     "or missing): is it served, and is it an instruct "
                                     "model?")
                rows.append(row)
                progress(f"{game}: {label}: {row.tally.valid_first_try}/"
                         f"{row.tally.decisions} valid on the first try, {row.seconds:.0f} s")
    return rows


def _pct(cell: dict[str, Any]) -> str:
    return "–" if cell["rate"] is None else f"{100 * cell['rate']:.0f}%"


def print_table(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    if len({r.get("mode", "off") for r in rows if not r["model"].startswith("bot:")}) > 1:
        print_side_by_side(rows)
        return
    t = Table(title="rule adherence of local models (share of decisions)")
    for col in ("game", "model", "decisions", "valid 1st try", "re-asked", "forfeited",
                "over limit", "refused replies by kind", "in tok/dec", "out tok/dec",
                "s/dec"):
        t.add_column(col, justify="left" if col in ("game", "model") else "right")
    for r in rows:
        kinds = ", ".join(f"{k} {n}" for k, n in r["errors"].items() if n) or "–"

        def num(v: float | None, fmt: str = "{:.0f}") -> str:
            return "–" if v is None else fmt.format(v)

        t.add_row(r["game"], r["model"], str(r["decisions"]), _pct(r["valid_first_try"]),
                  _pct(r["reasks"]), _pct(r["forfeits"]), _pct(r["over_limit"]), kinds,
                  num(r["input_tokens_per_decision"]), num(r["output_tokens_per_decision"]),
                  num(r["seconds_per_decision"], "{:.1f}"))
    Console().print(t)


def _pair_cell(free: dict[str, Any] | None, held: dict[str, Any] | None, key: str) -> str:
    return f"{_pct(free[key]) if free else '–'} → {_pct(held[key]) if held else '–'}"


def print_side_by_side(rows: list[dict[str, Any]]) -> None:
    """The free and the structured rows of each game × model in one line: free → held."""
    from rich.console import Console
    from rich.table import Table

    modes = sorted({r["mode"] for r in rows if r["mode"] != "off"})
    t = Table(title=f"rule adherence, free → {'/'.join(modes)} (share of decisions)")
    for col in ("game", "model", "decisions", "valid 1st try", "re-asked", "forfeited",
                "refused (free)", "refused (held)", "met schema, refused", "out tok/dec",
                "s/dec"):
        t.add_column(col, justify="left" if col in ("game", "model") or "refused (" in col
                     else "right")
    pairs: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for r in rows:
        pairs.setdefault((r["game"], r["model"]), {})[r["mode"]] = r
    for (game, model), by_mode in pairs.items():
        free = by_mode.get("off")
        for mode in modes if not model.startswith("bot:") else ("off",):
            held = by_mode.get(mode) if mode != "off" else None

            def kinds(r: dict[str, Any] | None) -> str:
                return ", ".join(f"{k} {n}" for k, n in r["errors"].items() if n) or "–" \
                    if r else "–"

            def per(r: dict[str, Any] | None, key: str, fmt: str) -> str:
                v = r.get(key) if r else None
                return "–" if v is None else fmt.format(v)

            t.add_row(game, model if mode == "off" else f"{model} ({mode})",
                      f"{free['decisions'] if free else '–'} / "
                      f"{held['decisions'] if held else '–'}",
                      _pair_cell(free, held, "valid_first_try"),
                      _pair_cell(free, held, "reasks"), _pair_cell(free, held, "forfeits"),
                      kinds(free), kinds(held),
                      str(held["beyond_schema"]) if held else "–",
                      f"{per(free, 'output_tokens_per_decision', '{:.0f}')} → "
                      f"{per(held, 'output_tokens_per_decision', '{:.0f}')}",
                      f"{per(free, 'seconds_per_decision', '{:.1f}')} → "
                      f"{per(held, 'seconds_per_decision', '{:.1f}')}")
    Console().print(t)


def register(app: typer.Typer) -> None:
    @app.command("local-models")
    def local_models(
        model: Annotated[list[str] | None, typer.Option(
            "--model", help="a model to play (repeatable); default: every shipped one "
                            "(smollm2-135m, gemma3-270m, qwen2.5-coder-1.5b), or with "
                            "--server, required")] = None,
        server: Annotated[str | None, typer.Option(
            "--server", help="an OpenAI-compatible base URL to use instead of starting "
                             "one (e.g. http://127.0.0.1:11434/v1 for Ollama)")] = None,
        game: Annotated[list[str] | None, typer.Option(
            "--game", help="a game to play (repeatable); default: all four")] = None,
        games: Annotated[int, typer.Option(
            "--games", min=1, max=100, help="games per game × model (seeds 1..N)")] = 1,
        port: Annotated[int, typer.Option(
            "--port", min=0, max=65535, help="the server's loopback port (0: a free one)")]
        = 0,
        python: Annotated[str, typer.Option(
            "--python", help="the interpreter with llama-cpp-python that serves the models")]
        = sys.executable,
        out: Annotated[Path, typer.Option(
            "--out", help="transcripts, server log and assembled models go here")]
        = Path("runs/local-models"),
        record: Annotated[Path | None, typer.Option(
            "--record", help="record each game's cassette (one model, one game each) into "
                             "this folder")] = None,
        no_baselines: Annotated[bool, typer.Option(
            "--no-baselines", help="leave out the bot rows")] = False,
        structured: Annotated[str, typer.Option(
            "--structured", help="the model seats' constrained decoding: off | schema | "
                                 "legal | both (off and schema, side by side)")] = "off",
        free_text_tools: Annotated[str | None, typer.Option(
            "--free-text-tools", help="structured seats' free-text turns list the tools "
                                      "with their legal schemas, as defined, or none: "
                                      "legal | plain | omitted (default: the provider "
                                      "kind's choice); for measuring the layouts")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="print the rows as JSON")]
        = False,
    ) -> None:
        """Play every game with local models beside bots; print their rule adherence."""
        from stille_post.cli import local_server

        chosen = trials(game)
        if structured not in (*MODES, "both"):
            raise UsageError(f"--structured {structured!r}: use off, schema, legal or both")
        modes = ("off", "schema") if structured == "both" else (structured,)
        if free_text_tools not in (None, "legal", "plain", "omitted"):
            raise UsageError(f"--free-text-tools {free_text_tools!r}: use legal, plain or "
                             "omitted")
        options = None if free_text_tools is None else {"free_text_tools": free_text_tools}
        if server is not None and not model:
            raise UsageError("--server needs --model NAME (the name that server serves)")
        names = model or list(local_server.MODELS)
        if record is not None and (len(names) != 1 or games != 1):
            raise UsageError("--record takes one --model and --games 1 (one cassette per game)")
        seeds = list(range(1, games + 1))
        (out / "transcripts").mkdir(parents=True, exist_ok=True)
        if record is not None:
            record.mkdir(parents=True, exist_ok=True)

        def progress(msg: str) -> None:
            typer.echo(msg, err=True)

        def run(url: str) -> list[Row]:
            return prove(names, url.rstrip("/"), chosen, seeds, out / "transcripts",
                         not no_baselines, progress, record, modes, options)

        if server is not None:
            from stille_post.cli.llm_seats import preflight
            from stille_post.providers.models import active_models

            preflight([f"openai-compatible:{names[0]}@{server}"], active_models())
            rows = run(server)
        else:
            files = local_server.model_files(names, out / "models")
            with local_server.serve(files, port=port, python=python, workdir=out) as url:
                progress(f"serving {', '.join(files)} on {url}")
                rows = run(url)
        data = [r.to_json() for r in rows]
        if as_json:
            typer.echo(json.dumps({"seeds": seeds, "modes": list(modes), "rows": data},
                                  indent=1))
        else:
            print_table(data)
