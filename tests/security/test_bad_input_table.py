"""The bad-input table of issue 27: the new surface (import, `--config`, `models.toml`,
`script:` seats, `--set`, seat URLs with credentials, the options of all four games).

Each case runs the CLI in this process (`cli._run`, exactly what `main` runs after the
logging guard), one at a time, bounded by `BOUND_S` seconds (SIGALRM, tests/chaos/
surface.py `bounded`: a hang fails the case instead of the suite). For every case:
- no traceback and no "unexpected" error (a crash the CLI did not name);
- the exit code it must have: 2 for bad input, 0 for an import whose bad lines are named,
  counted skips (the import goes on: issue 27 H2);
- exactly one line on stderr for an error, and that line names the problem (`says`);
- no secret of the case on stdout or stderr, no terminal escape on stderr, and no
  `.part` file left behind.
The older table (tests/cli/test_bad_inputs.py) covers the first-round surface through the
console script; this one stays in-process so 170 cases cost a few seconds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from stille_post.cli import _run
from stille_post.providers.secrets import KEY_ENV_VARS
from tests.chaos.surface import bounded
from tests.security.bombs import alias_bomb, text_bomb

BOUND_S = 20  # per case; the slowest case takes well under a second
SECRET = "pw-Qm7Xc2Lr9Tz"  # a password or key a case puts in a URL: it must never show
BOTS4 = "detective,random,gambler,cautious"
LOG = Path(__file__).resolve().parents[2] / "fixtures" / "elimination_logs" / \
    "game_1754984898827689.jsonl"
GID = "1754984898827689"


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]  # "{d}" is the case's own folder
    code: int = 2
    says: str = ""  # a fragment the error line must hold (case-insensitive)
    files: dict[str, str | bytes] = field(default_factory=dict)
    one_line: bool = True  # an error: exactly one stderr line (an import summary: a few)


CASES: list[Case] = []


def case(name: str, *argv: str, code: int = 2, says: str = "",
         files: dict[str, str | bytes] | None = None, one_line: bool | None = None) -> None:
    CASES.append(Case(name, argv, code, says, files or {},
                      code != 0 if one_line is None else one_line))


# --- import elimination logs: the command line -----------------------------------------

IMP = ("import", "elimination", "logs")
case("import: no path", *IMP, "--out", "{d}/o", says="paths")
case("import: no --out", *IMP, "{d}", says="--out")
case("import: a missing path", *IMP, "{d}/nope.jsonl", "--out", "{d}/o", says="no such file")
case("import: a folder without logs", *IMP, "{d}", "--out", "{d}/o", says="no .jsonl")
case("import: --out is a file", *IMP, "{d}/g.jsonl", "--out", "{d}/g.jsonl", says="is a file",
     files={"g.jsonl": LOG.read_text(encoding="utf-8")})
case("import: --out holds a played tournament", *IMP, "{d}/g.jsonl", "--out", "{d}/t",
     says="tournament", files={"g.jsonl": LOG.read_text(encoding="utf-8"),
                               "t/tournament.json": json.dumps(
                                   {"game": "stille-post", "games": 1, "seed": 1})})
case("import: --out holds garbage tournament.json", *IMP, "{d}/g.jsonl", "--out", "{d}/t",
     says="tournament.json", files={"g.jsonl": LOG.read_text(encoding="utf-8"),
                                    "t/tournament.json": "{not json"})
case("import: an unknown format", "import", "elimination", "csv", "{d}", "--out", "{d}/o",
     says="csv")
case("import: an unknown game", "import", "nosuchgame", "logs", "{d}", "--out", "{d}/o",
     says="nosuchgame")
case("import: an unknown option", *IMP, "{d}", "--out", "{d}/o", "--bogus", says="--bogus")

# --- import: hostile lines are named, counted skips (exit 0, the import goes on) ---------

_GOOD = LOG.read_text(encoding="utf-8").splitlines()


def _log_with(line: str | bytes, *, replace_first: bool = False) -> bytes:
    lines = [x.encode() for x in _GOOD]
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    lines = [raw, *lines[1:]] if replace_first else [lines[0], raw, *lines[1:]]
    return b"\n".join(lines) + b"\n"


_HOSTILE_LINES: dict[str, str | bytes] = {
    "a lone surrogate escape": json.dumps({"game_id": GID, "type": "conversation",
                                           "message": "half an emoji"})[:-1]
    + ', "x": "\\ud83d"}',
    "a lone low surrogate in a key": f'{{"game_id": "{GID}", "type": "vote", "\\udc00": 1}}',
    "bytes that are not UTF-8": b'{"game_id": "' + GID.encode() + b'", "m": "\xff\xfe"}',
    "a NUL byte": f'{{"game_id": "{GID}", "type": "conversation", "message": "a\u0000b"}}',
    "not JSON": "}}garbage{{",
    "a JSON list": "[1, 2, 3]",
    "a JSON string": '"just text"',
    "null": "null",
    "a game id that is a dict": '{"game_id": {"a": 1}, "type": "vote"}',
    "a game id that is a list": '{"game_id": [1], "type": "vote"}',
    "a game id that is true": '{"game_id": true, "type": "vote"}',
    "an empty game id": '{"game_id": "", "type": "vote"}',
    "no type": f'{{"game_id": "{GID}"}}',
    "a type that is a number": f'{{"game_id": "{GID}", "type": 5}}',
    "JSON nested 100000 deep": f'{{"game_id": "{GID}", "type": "vote", "x": '
    + "[" * 100000 + "]" * 100000 + "}",
    "a number too big for a float": f'{{"game_id": "{GID}", "type": "vote", "round": 1e999}}',
    "an integer of 5000 digits": f'{{"game_id": "{GID}", "type": "vote", "round": '
    + "9" * 5000 + "}",
    "NaN": f'{{"game_id": "{GID}", "type": "vote", "round": NaN}}',
    "a vote for a player who is not there": f'{{"game_id": "{GID}", "type": "vote", "round": 1, '
    f'"voter_id": "Nobody_Game{GID}_x", "target_id": "Ghost"}}',
    "an elimination of nobody": f'{{"game_id": "{GID}", "type": "elimination", "round": 1, '
    '"eliminated_player": 7}',
    "a round that is a string": f'{{"game_id": "{GID}", "type": "conversation", "round": "one", '
    '"player_id": "x", "message": "m"}',
    "a message that is a dict": f'{{"game_id": "{GID}", "type": "conversation", "round": 1, '
    f'"subround": 0, "player_id": "Player1_Game{GID}_x", "message": {{"a": 1}}}}',
    "a byte-order mark": b"\xef\xbb\xbf" + _GOOD[1].encode(),
    "a line cut off": _GOOD[1][:40],
    "a terminal escape in the game id": '{"game_id": "\\u001b]0;pwned\\u0007\\u001b[2J", '
    '"type": "vote"}',
    "a key-like text in a message": f'{{"game_id": "{GID}", "type": "conversation", "round": 1, '
    f'"subround": 0, "player_id": "Player1_Game{GID}_x", "message": "sk-abc123DEF456ghi789"}}',
    "a 2 MB message": '{{"game_id": "{}", "type": "conversation", "round": 1, "subround": 0, '
    '"player_id": "Player1_Game{}_x", "message": "{}"}}'.format(GID, GID, "x" * 2_000_000),
}
for what, line in _HOSTILE_LINES.items():
    case(f"import: {what}", *IMP, "{d}/g.jsonl", "--out", "{d}/o", code=0,
         files={"g.jsonl": _log_with(line)})
case("import: a game id with path characters", *IMP, "{d}/g.jsonl", "--out", "{d}/o", code=0,
     files={"g.jsonl": LOG.read_text(encoding="utf-8").replace(GID, "../../etc/passwd")})
# A file with no game at all is not a log: one line naming it, exit 2 (issue 36).
case("import: an empty file", *IMP, "{d}/g.jsonl", "--out", "{d}/o", says="(empty)",
     files={"g.jsonl": b""})
case("import: only blank lines", *IMP, "{d}/g.jsonl", "--out", "{d}/o", says="(empty)",
     files={"g.jsonl": b"\n\n   \n"})
case("import: the same file twice", *IMP, "{d}/g.jsonl", "{d}/g.jsonl", "--out", "{d}/o",
     code=0, files={"g.jsonl": LOG.read_text(encoding="utf-8")})
case("import: a log with no final results", *IMP, "{d}/g.jsonl", "--out", "{d}/o", code=0,
     files={"g.jsonl": "\n".join(x for x in _GOOD if "final_results" not in x) + "\n"})

# --- tournament --config FILE.toml ----------------------------------------------------

T = ("tournament", "--config", "{d}/t.toml")
_BASE = 'game = "stille-post"\ngames = 2\nseed = 1\nout = "out"\n'


def toml_case(name: str, text: str | bytes, says: str = "", *extra: str) -> None:
    case(f"--config: {name}", *T, *extra, says=says, files={"t.toml": text})


case("--config: missing", "tournament", "--config", "{d}/none.toml", says="none.toml")
case("--config: a folder", "tournament", "--config", "{d}", says="")
toml_case("empty", "", "game")
toml_case("not TOML", "this is [ not toml", "t.toml")
toml_case("not UTF-8", b'game = "caf\xe9"\n', "UTF-8")
toml_case("a NUL byte", 'game = "stille-post"\x00\n', "t.toml")
toml_case("a duplicate key", _BASE + "games = 3\n", "t.toml")
toml_case("an unknown key", _BASE + "colour = 'red'\n", "colour")
toml_case("an unknown game", 'game = "nosuchgame"\ngames = 2\n', "nosuchgame")
toml_case("game is a number", "game = 5\ngames = 2\n", "game")
toml_case("games is text", 'game = "stille-post"\ngames = "many"\n', "games")
toml_case("games is 0", 'game = "stille-post"\ngames = 0\n', "games")
toml_case("games is negative", 'game = "stille-post"\ngames = -3\n', "games")
toml_case("games is huge", 'game = "stille-post"\ngames = 9223372036854775807\n', "games")
toml_case("games is a float", 'game = "stille-post"\ngames = 2.5\n', "games")
toml_case("games is a bool", 'game = "stille-post"\ngames = true\n', "games")
toml_case("seed is text", _BASE.replace("seed = 1", 'seed = "x"'), "seed")
toml_case("seed is a table", _BASE.replace("seed = 1", "seed = {a = 1}"), "seed")
toml_case("players is a string of one bot", _BASE + 'players = "random"\n', "players")
toml_case("players are numbers", _BASE + "players = [1, 2, 3, 4]\n", "players")
toml_case("players is empty", _BASE + "players = []\n", "players")
toml_case("an unknown bot", _BASE + 'players = ["nosuchbot", "random", "random", "random"]\n',
          "nosuchbot")
toml_case("players and pool", _BASE + 'players = ["random"]\npool = ["random"]\n', "pool")
toml_case("seating unknown", _BASE + 'pool = ["random", "gambler"]\nseating = "chaos"\n',
          "seating")
toml_case("seats is 0", _BASE + 'pool = ["random", "gambler"]\nseats = 0\n', "seats")
toml_case("seats is 10000", _BASE + 'pool = ["random", "gambler"]\nseats = 10000\n', "seats")
toml_case("shard is text", _BASE + 'shard = "first"\n', "shard")
toml_case("shard 3/2", _BASE + 'shard = "3/2"\n', "shard")
toml_case("concurrency is 0", _BASE + "concurrency = 0\n", "concurrency")
toml_case("concurrency is text", _BASE + 'concurrency = "lots"\n', "concurrency")
toml_case("workers is -1", _BASE + "workers = -1\n", "workers")
toml_case("rate_limits is a number", _BASE + "rate_limits = 5\n", "rate_limits")
toml_case("a rate limit of text", _BASE + '[rate_limits]\nopenai = "fast"\n', "openai")
toml_case("a negative rate limit", _BASE + "[rate_limits]\nopenai = -5\n", "openai")
toml_case("models is a number", _BASE + "models = 5\n", "models")
toml_case("models names a missing file", _BASE + 'models = "none.toml"\n', "none.toml")
toml_case("out is a number", 'game = "stille-post"\ngames = 2\nout = 5\n', "out")
toml_case("options is a list", _BASE + "options = [1]\n", "options")
toml_case("an unknown option", _BASE + "[options]\nno_such_option = 1\n", "no_such_option")
toml_case("an option of the wrong type", _BASE + '[options]\nmax_rounds = "ten"\n',
          "max-rounds")
toml_case("an option out of range", _BASE + "[options]\nmax_rounds = -4\n", "max-rounds")
toml_case("roles is a list", _BASE + "roles = [1]\n", "roles")
toml_case("an unknown role", 'game = "chameleon"\ngames = 2\n[roles]\nwizard = "random"\n',
          "wizard")
toml_case("a preset that does not exist", _BASE + 'preset = "nosuch"\n', "nosuch")
toml_case("an array of tables", _BASE + "[[players]]\nname = 'x'\n", "players")
toml_case("tables nested 2000 deep", _BASE + "x = " + "[" * 2000 + "]" * 2000 + "\n", "t.toml")
toml_case("a 5000-digit integer", _BASE.replace("games = 2", "games = " + "9" * 5000), "t.toml")
case("--config: game differs from the command line, named", "tournament", "chameleon",
     "--config", "{d}/t.toml", says="stille-post", files={"t.toml": _BASE})
toml_case("a seat URL with a password (no --online)",
          _BASE + f'players = ["openai-compatible:m@http://u:{SECRET}@127.0.0.1:9/v1", '
          '"random", "gambler", "cautious"]\n', "online")

# --- models.toml (--models) -----------------------------------------------------------

M = ("play", "--seed", "1", "--quiet", "--models", "{d}/m.toml", "--players")
ALIAS_SEATS = "model:mine,random,gambler,cautious"


def models_case(name: str, text: str | bytes, says: str = "") -> None:
    case(f"models.toml: {name}", *M, ALIAS_SEATS, says=says, files={"m.toml": text})


case("models.toml: missing", *M, BOTS4, "--models", "{d}/none.toml", says="none.toml")
models_case("not TOML", "[models.mine\n", "m.toml")
models_case("not UTF-8", b"[models.mine]\nmodel = '\xff'\n", "UTF-8")
models_case("models is a list", "models = [1]\n", "models")
models_case("an alias that is a number", "[models]\nmine = 5\n", "mine")
models_case("no provider", '[models.mine]\nmodel = "m"\n', "provider")
models_case("an unknown provider", '[models.mine]\nprovider = "acme"\nmodel = "m"\n', "acme")
models_case("no model", '[models.mine]\nprovider = "openai"\n', "model")
models_case("model is a number", '[models.mine]\nprovider = "openai"\nmodel = 5\n', "model")
models_case("temperature is text",
            '[models.mine]\nprovider = "openai"\nmodel = "m"\ntemperature = "hot"\n',
            "temperature")
models_case("temperature is negative",
            '[models.mine]\nprovider = "openai"\nmodel = "m"\ntemperature = -1.0\n',
            "temperature")
models_case("max_output_tokens is 0",
            '[models.mine]\nprovider = "openai"\nmodel = "m"\nmax_output_tokens = 0\n',
            "max_output_tokens")
models_case("a negative price",
            '[models.mine]\nprovider = "openai"\nmodel = "m"\nprice = {input = -1.0, '
            'output = 1.0}\n', "price")
models_case("a price that is text",
            '[models.mine]\nprovider = "openai"\nmodel = "m"\nprice = "cheap"\n', "price")
models_case("extra is a list",
            '[models.mine]\nprovider = "openai"\nmodel = "m"\nextra = [1]\n', "extra")
models_case("an unknown key",
            '[models.mine]\nprovider = "openai"\nmodel = "m"\ncolour = "red"\n', "colour")
models_case("base_url is not a URL",
            '[models.mine]\nprovider = "openai-compatible"\nmodel = "m"\nbase_url = "nope"\n',
            "base_url")
models_case("base_url with a password (no --online)",
            '[models.mine]\nprovider = "openai-compatible"\nmodel = "m"\n'
            f'base_url = "http://u:{SECRET}@127.0.0.1:9/v1"\n', "online")
models_case("an alias that is not defined", '[models.other]\nprovider = "openai"\n'
            'model = "m"\n', "mine")
models_case("reasoning_effort unknown",
            '[models.mine]\nprovider = "openai"\nmodel = "m"\nreasoning_effort = "max"\n',
            "reasoning_effort")
case("models.toml: in a tournament, not TOML", "tournament", "stille-post", "--games", "2",
     "--players", BOTS4, "--models", "{d}/m.toml", "--out", "{d}/o", says="m.toml",
     files={"m.toml": "[[["})
case("models.toml: a folder", *M, BOTS4, "--models", "{d}", says="")

# --- script: seats ----------------------------------------------------------------------

S = ("play", "--seed", "1", "--quiet", "--players")


def script_case(name: str, text: str | bytes, says: str = "", code: int = 2) -> None:
    case(f"script: {name}", *S, "script:{d}/s.yaml,random,gambler,cautious", code=code,
         says=says, files={"s.yaml": text})


case("script: missing", *S, "script:{d}/none.yaml,random,gambler,cautious", says="none.yaml")
case("script: a folder", *S, "script:{d},random,gambler,cautious")
case("script: no file name", *S, "script:,random,gambler,cautious", says="script")
script_case("not YAML", "replies: [unclosed\n", "s.yaml")
script_case("not UTF-8", b"- '\xff\xfe'\n", "UTF-8")
script_case("an alias bomb", alias_bomb(), "alias")
script_case("a text bomb", text_bomb(), "alias")
script_case("a file over the size cap", "- " + "x" * 3_000_000 + "\n", "s.yaml")
script_case("a number", "5\n", "s.yaml")
script_case("a list of numbers", "- 1\n- 2\n", "s.yaml")
script_case("a reply with an unknown key", "- {colour: red}\n", "colour")
script_case("a tool without a name", "- {tool: {arguments: {}}}\n", "name")
# malformed arguments are a scripted scenario (the corrective re-ask): a game, exit 0
script_case("tool arguments that are a list", "- {tool: {name: vote, arguments: [1]}}\n",
            code=0)
script_case("a python tag", "- !!python/object/apply:os.system ['echo pwned']\n", "s.yaml")
script_case("a custom tag", "- !secret x\n", "s.yaml")
script_case("lists nested 5000 deep", "- " + "[" * 5000 + "]" * 5000 + "\n", "s.yaml")
script_case("a NUL byte", "- 'a\x00b'\n", "s.yaml")
script_case("a duplicate key (YAML: the last wins)", "- {text: a, text: b}\n", code=0)
script_case("a mapping at the top without replies", "colour: red\n", "s.yaml")

# --- --set KEY=VALUE, and the options of all four games ----------------------------------

for game, key in (("stille-post", "max_rounds"), ("chameleon", "words"),
                  ("connections", "guessers"), ("elimination", "public_words")):
    flag = key.replace("_", "-")
    P = ("play", game, "--seed", "1", "--quiet")
    case(f"--set {game}: no =", *P, "--set", key, says="=")
    case(f"--set {game}: no key", *P, "--set", "=3", says="--set")
    case(f"--set {game}: unknown key", *P, "--set", "no_such_key=1", says="no_such_key")
    case(f"--set {game}: text for a number", *P, "--set", f"{key}=lots", says=flag)
    case(f"--set {game}: a negative number", *P, "--set", f"{key}=-5", says=flag)
    case(f"--set {game}: a huge number", *P, "--set", f"{key}=" + "9" * 40, says=flag)
    case(f"--set {game}: broken JSON", *P, "--set", f"{key}=[1,", says=flag)
    case(f"--set {game}: a JSON object", *P, "--set", f'{key}={{"a": 1}}', says=flag)
    case(f"--set {game}: --num-players 1", *P, "--num-players", "1", says="")
    case(f"--set {game}: --num-players 500", *P, "--num-players", "500", says="")
    case(f"--set {game}: an unknown preset", *P, "--preset", "nosuch", says="nosuch")
    case(f"--set {game}: a tournament with text for a number", "tournament", game,
         "--games", "2", "--out", "{d}/o", "--set", f"{key}=lots", says=flag)
case("--set: a float timeout of nan", "play", "--seed", "1", "--quiet", "--set",
     "decision_timeout_s=nan", says="decision-timeout-s")
case("--set: a float timeout of inf", "play", "--seed", "1", "--quiet", "--set",
     "decision_timeout_s=-inf", says="decision-timeout-s")
case("--set: chameleon cards is a missing file", "play", "chameleon", "--seed", "1", "--quiet",
     "--cards", "{d}/none.toml", says="none.toml")
case("--set: connections dictionary is a folder", "play", "connections", "--seed", "1",
     "--quiet", "--dictionary", "{d}", says="")
# any whole number is a seed: a game, exit 0
case("--set: the seed is 2**70", "play", "--seed", str(2**70), "--quiet", code=0)
case("--set: the seed is negative", "play", "--seed", "-1", "--quiet", code=0)

# --- seats with URLs, credentials among them ----------------------------------------------

U = ("play", "--seed", "1", "--quiet", "--players")
_REST = ",random,gambler,cautious"
for name, spec in {
    "a password, no --online": f"openai-compatible:m@http://u:{SECRET}@127.0.0.1:9/v1",
    "an api_key parameter, no --online": f"openai-compatible:m@http://127.0.0.1:9/v1"
                                         f"?api_key={SECRET}",
    "a key parameter, no --online": f"openai-compatible:m@http://127.0.0.1:9/v1?key={SECRET}",
}.items():
    case(f"seat URL: {name}", *U, spec + _REST, says="online")
    case(f"seat URL: {name}, in a tournament", "tournament", "stille-post", "--games", "2",
         "--out", "{d}/o", "--players", spec + _REST, says="online")
for name, spec in {
    "a port out of range": "openai-compatible:m@http://127.0.0.1:99999/v1",
    "a password and a bad port": f"openai-compatible:m@http://u:{SECRET}@127.0.0.1:99999/v1",
    "an unclosed IPv6 host": "openai-compatible:m@http://[::1/v1",
    "an ftp URL": "openai-compatible:m@ftp://127.0.0.1/v1",
    "a file URL": "openai-compatible:m@file:///etc/passwd",
    "an empty URL": "openai-compatible:m@",
    "no model": f"openai-compatible:@http://u:{SECRET}@127.0.0.1:9/v1",
    "a space in the URL": "openai-compatible:m@http://127.0.0.1:9/v 1",
    "a control character": "openai-compatible:m@http://127.0.0.1:9/\x1b[2Jv1",
    "an unknown provider with a password": f"acme:m@http://u:{SECRET}@127.0.0.1:9/v1",
}.items():
    case(f"seat URL: {name}", *U, spec + _REST, "--online", says="")
case("seat URL: a password in --role", "play", "chameleon", "--seed", "1", "--quiet",
     "--role", f"chameleon=openai-compatible:m@http://u:{SECRET}@127.0.0.1:9/v1",
     says="online")
case("seat URL: a password, resume of another tournament", "tournament", "stille-post",
     "--games", "2", "--out", "{d}/t", "--resume", "--online", "--players",
     f"openai-compatible:m@http://u:{SECRET}@127.0.0.1:9/v1" + _REST, says="tournament",
     files={"t/tournament.json": json.dumps({"game": "stille-post", "games": 9, "seed": 3})})

# --- report / view / merge of hostile folders (the new surface's outputs) -----------------

case("report: an index row naming a folder outside", "report", "{d}/t", says="tournament.json",
     files={"t/tournament.json": '{"game": "stille-post", "games": "x", "seed": 1}'})
case("report: tournament.json is a list", "report", "{d}/t", says="tournament.json",
     files={"t/tournament.json": "[]"})
case("report: tournament.json names an unknown game", "report", "{d}/t",
     says="tournament.json",
     files={"t/tournament.json": '{"game": "nosuchgame", "games": 1, "seed": 1}'})
# a header alone is a transcript the viewer shows (its escapes as text): exit 0
case("view: a transcript of one header with escapes", "view", "{d}/x.jsonl", code=0,
     files={"x.jsonl": '{"kind": "header", "game": "\\u001b[2Jnope"}\n'})
case("view: a transcript nested 100000 deep", "view", "{d}/x.jsonl", says="x.jsonl",
     files={"x.jsonl": "[" * 100000 + "]" * 100000 + "\n"})


# --- the runner ---------------------------------------------------------------------------

@pytest.fixture(scope="module", autouse=True)
def built_once() -> Iterator[None]:
    """typer rebuilds the whole command tree on every call of the app (~30 ms, most of a
    case's cost); a user runs one command per process, the table runs 200. So the table
    builds it once and `_run` calls that same command, with the same arguments."""
    import typer.main

    import stille_post.cli as cli

    command = typer.main.get_command(cli.app)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli, "app", lambda **kwargs: command(**kwargs))
        yield


def _write(folder: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def test_the_table_is_big_and_its_names_unique() -> None:
    assert len(CASES) >= 150
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_bad_input(c: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                   capsys: pytest.CaptureFixture[str]) -> None:
    for var in (*KEY_ENV_VARS, "STILLE_POST_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, c.files)
    argv = [a.replace("{d}", str(tmp_path)) for a in c.argv]
    capsys.readouterr()
    with bounded(BOUND_S):  # a hang fails this case (Hang), not the suite
        code = _run(argv, False)
    out, err = capsys.readouterr()
    lines = [x for x in err.splitlines() if x.strip()]
    shown = f"argv={argv!r:.300}\nexit={code}\nstderr={err[-1500:]!r}"
    assert "Traceback" not in err + out and "unexpected" not in err, shown
    assert code == c.code, shown
    if c.one_line:
        assert len(lines) == 1, shown
    else:
        assert len(lines) <= 12, shown
    assert c.says.lower() in err.lower(), shown
    assert SECRET not in out + err, shown
    assert "\x1b" not in err and "\x07" not in err, shown
    assert not [p for p in tmp_path.rglob("*.part")], shown
    if c.code == 0 and c.argv[:1] == ("import",):
        # The good game of the file is imported whatever the bad line did to its own game.
        assert (tmp_path / "o" / "tournament.json").is_file(), shown


def test_the_importer_names_each_hostile_line_as_a_skip(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One file of two games: the one with a lone surrogate is skipped and named, the
    other imported (H2: one bad line never stops the import)."""
    bad = _log_with(_HOSTILE_LINES["a lone surrogate escape"])
    other = LOG.read_text(encoding="utf-8").replace(GID, "1754984898800000").encode()
    (tmp_path / "g.jsonl").write_bytes(bad + other)
    capsys.readouterr()
    code = _run(["import", "elimination", "logs", str(tmp_path / "g.jsonl"), "--out",
                 str(tmp_path / "o"), "--json"], False)
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["imported"] == 1, summary
    assert "lone surrogate" in json.dumps(summary)
    assert [p.name for p in (tmp_path / "o" / "games").iterdir()] == \
        ["eg-1754984898800000.jsonl"]
