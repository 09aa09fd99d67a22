"""A `script:FILE.yaml` seat: scripted replies from a file, through the LLM path."""

from __future__ import annotations

from pathlib import Path

from stille_post.core.errors import ScenarioError
from stille_post.players.base import Player, PromptBook
from stille_post.players.specs import SeatSpec

# A script is a bug report's replies, not a corpus: 1 MB is far beyond any real one, and
# the expanded size bounds what aliases can make of it (issue 27, M5).
MAX_SCRIPT_BYTES = 1 << 20
MAX_SCRIPT_EXPANDED = 4 << 20


def script_player(spec: SeatSpec, prompts: PromptBook) -> Player:
    """A `script:FILE.yaml` seat: the real LLM path (prompts, parsing, re-asks) fed with
    replies from a file, so a bug report can be replayed from the command line. The file
    is a YAML list of entries as `providers/scripted.py` documents them."""
    import yaml  # only script seats need it: keeps the CLI's start-up lean

    from stille_post.core import yamltext
    from stille_post.players.llm import LLMPlayer
    from stille_post.providers.scripted import ScriptedProvider, completion_from_script

    assert spec.script is not None
    path = Path(spec.script)
    try:
        with path.open("rb") as fh:  # read one byte past the limit, never the whole file
            raw = fh.read(MAX_SCRIPT_BYTES + 1)
        entries = yamltext.load_bounded(raw.decode("utf-8"), max_bytes=MAX_SCRIPT_BYTES,
                                        max_expanded=MAX_SCRIPT_EXPANDED)
    except FileNotFoundError:
        raise ScenarioError(f"script file not found: {path}") from None
    except IsADirectoryError:
        raise ScenarioError(f"script file {path} is a folder") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"cannot read script file {path}: {exc}") from None
    except yamltext.TooBigError as exc:
        raise ScenarioError(f"{path}: script refused: {exc}") from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise ScenarioError(f"{path}: not valid YAML ({exc.__class__.__name__})") from None
    if isinstance(entries, dict) and isinstance(entries.get("replies"), list):
        entries = entries["replies"]
    if not isinstance(entries, list):
        raise ScenarioError(f"{path}: a script is a YAML list of replies")
    for n, entry in enumerate(entries, 1):  # refused now, not as an aborted game later
        try:
            completion_from_script(entry, model="check")
        except (ScenarioError, TypeError, ValueError) as exc:
            raise ScenarioError(f"{path}: reply {n}: {exc}"[:300]) from None
        except RecursionError:
            raise ScenarioError(f"{path}: reply {n} is nested too deep") from None
    return LLMPlayer(ScriptedProvider(entries, model=f"script:{path.name}"), prompts,
                     name=spec.raw)


