"""The module Inspect's entry point names (pyproject.toml):

    [project.entry-points.inspect_ai]
    <package> = "<package>.inspect_tasks._registry"      (see pyproject.toml)

Inspect imports it when a name under `stille_post/` is looked up
(`inspect_ai._util.entrypoints.ensure_entry_points`), and importing it registers one
task per game of our registry: built-in games and plugin games alike
(`<package>/<game>`, `-` in a game's name written `_`). Each task function is also a
module attribute under its task name, so `from <this module> import <task name>` works
in Python.
"""

from __future__ import annotations

from typing import Any

from stille_post.games import all_games
from stille_post.inspect_tasks.task import game_task, task_name

TASKS: dict[str, Any] = {}
for _definition in all_games().values():
    TASKS[task_name(_definition.name)] = globals()[task_name(_definition.name)] = \
        game_task(_definition)
