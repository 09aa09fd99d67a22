"""The dataset card (`--hf-card`): a README.md for publishing the export on a hub, with
the YAML header the Hugging Face hub reads (the part files as the default config), the
table's schema, and each tournament's settings as its folder recorded them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from stille_post import __version__
from stille_post.export.rows import EXPORT_VERSION, Table

_PACKAGE = __name__.partition(".")[0]
SETTINGS_FILE = "tournament.json"  # a results folder's settings (tournament/config.py)

_ABOUT = {
    "decisions": "one row per decision of every seat: the request the seat was sent "
                 "(rendered by the game's own prompts, for LLM seats and bots alike), "
                 "its reply, each re-ask with its error kind, tokens, and the seat's "
                 "final placement and reward",
    "games": "one row per game: settings, seats, outcome, details, usage",
    "events": "one row per event of every game, with its audience",
}


def card(what: Table, fmt: str, reward: str, folders: Sequence[Path], games: int,
         rows: int) -> str:
    """The card of an export of `what` in `fmt` from `folders`: `games` games in `rows`
    rows."""
    lines = [
        "---",
        f"pretty_name: {_PACKAGE} {what}",
        "tags:",
        "- games",
        "- llm",
        "- multi-agent",
        "configs:",
        "- config_name: default",
        f"  data_files: \"data/part-*.{fmt}\"",
        "---",
        "",
        f"# Games as data: {what}",
        "",
        f"{_ABOUT[what].capitalize()}. Exported by {_PACKAGE} {__version__} "
        f"(`stille-post export --what {what} --reward {reward}`), export "
        f"version {EXPORT_VERSION}: {games:,} games, {rows:,} rows.",
        "",
        "```python",
        "import datasets",
        f"ds = datasets.load_dataset(\"{fmt if fmt == 'parquet' else 'json'}\", "
        "data_dir=\"THIS_FOLDER\")",
        "```",
        "",
        "Open-shaped values (a game's config and details, an event's data, a tool call's "
        "arguments, a tool's parameters) are JSON text; everything else is typed. The "
        f"columns are documented in {_PACKAGE}'s docs/data.md.",
        "",
        "## Schema",
        "",
        *_schema(what),
        "",
        "## Settings",
        "",
        *_settings(folders),
    ]
    return "\n".join(lines) + "\n"


def _schema(what: Table) -> list[str]:
    try:
        from stille_post.export.schema import schema
    except ImportError:  # JSON Lines without pyarrow: the docs have the columns
        return ["See docs/data.md (pyarrow, which prints the schema here, is not installed)."]
    out = ["| column | type |", "|---|---|"]
    for f in schema(what):
        out.append(f"| `{f.name}` | `{f.type}` |")
    return out


def _settings(folders: Sequence[Path]) -> list[str]:
    out: list[str] = []
    for folder in folders:
        path = Path(folder) / SETTINGS_FILE
        if not path.is_file():
            continue
        try:
            settings = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        out += [f"### {Path(folder).resolve().name}", "", "```json",
                json.dumps(settings, indent=2, ensure_ascii=False), "```", ""]
    return out or ["No tournament settings were found (games played one by one or imported)."]
