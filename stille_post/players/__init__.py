"""Players: one interface (`Player.decide`) that the engines cannot see past."""

from stille_post.players.base import Action, Decision, Player, PromptBook
from stille_post.players.llm import LLMPlayer

__all__ = ["Action", "Decision", "LLMPlayer", "Player", "PromptBook"]
