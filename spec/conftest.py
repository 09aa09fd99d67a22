"""The rulebook collector: every registered game's `spec/*.yaml` scenarios as pytest
items (see spec/test_rulebook.py). The runner and the checks live in the kit
(`stille_post/games/kit/rulebook.py`, `kit/scenarios.py`), so that a game folder added
to `stille_post/games/` brings its rulebook with it and nothing here changes."""
