"""A `script:FILE.yaml` seat: scripted replies from a file, through the LLM path."""

from __future__ import annotations

from pathlib import Path

from stille_post.core.errors import ScenarioError
from stille_post.players.base import Player, PromptBook
from stille_post.players.specs import SeatSpec


def script_player(spec: SeatSpec, prompts: PromptBook) -> Player:
    """A `script:FILE.yaml` seat: the real LLM path (prompts, parsing, re-asks) fed with
    replies from a file, so a bug report can be replayed from the command line. The file
    is a YAML list of entries as `providers/scripted.py` documents them."""
    import yaml  # only script seats need it: keeps the CLI's start-up lean

    from stille_post.core import yamltext
    from stille_post.players.llm import LLMPlayer
    from stille_post.providers.scripted import ScriptedProvider

    assert spec.script is not None
    path = Path(spec.script)
    try:
        entries = yamltext.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"script file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"cannot read script file {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path}: not valid YAML ({exc.__class__.__name__})") from None
    if isinstance(entries, dict) and isinstance(entries.get("replies"), list):
        entries = entries["replies"]
    if not isinstance(entries, list):
        raise ScenarioError(f"{path}: a script is a YAML list of replies")
    return LLMPlayer(ScriptedProvider(entries, model=f"script:{path.name}"), prompts,
                     name=spec.raw)


