"""The game kit: what every game is built from, so that adding a game is one folder.

- `config`: `GameConfig`, the base of every game's options;
- `definition`: the declarative `GameDefinition` (options, roles, player range, bots,
  metrics, charts, event vocabulary, viewer layout, presets);
- `setup`: from options and seat specs to a prepared engine (`prepare`); the contexts
  it hands a game's `setup` and bots (`SetupContext`, `BotContext`) live in `definition`;
- `engine`: the `Engine` base with its fixed `play()`;
- `table`: seats, players, log, usage and rng, with `ask` and `ask_all`;
- `channels`: concurrent private conversations merged in a fixed order;
- `framing`: conversation rendering, anti-forgery, caps in characters and words;
- `votes`: seat parsing, tallies and tie-chain steps;
- `data`: shipped data through importlib.resources, hashed into the header.

`GenerationConfig` (per-call generation settings and their precedence) lives in
`players.generation`, the layer that applies it; it is re-exported here for games.
"""

from stille_post.core.outcome import GameOutcome, OutcomeSummary
from stille_post.games.kit.asking import Answer, Pending
from stille_post.games.kit.channels import Channel, run_channels
from stille_post.games.kit.config import GameConfig
from stille_post.games.kit.definition import (
    BotContext,
    EventKind,
    GameDefinition,
    PlayerRange,
    Preset,
    Role,
    SetupContext,
)
from stille_post.games.kit.engine import Engine
from stille_post.games.kit.setup import PreparedGame, prepare
from stille_post.games.kit.table import GameVoid, Table
from stille_post.players.generation import GenerationConfig

__all__ = [
    "Answer", "BotContext", "Channel", "Engine", "EventKind", "GameConfig", "GameDefinition",
    "GameOutcome", "GameVoid", "GenerationConfig", "OutcomeSummary", "Pending", "PlayerRange",
    "PreparedGame", "Preset", "Role", "SetupContext", "Table", "prepare", "run_channels",
]
