"""Our games as Inspect tasks (`inspect eval stille_post/<game>`), one per registered
game, made generically from the game kit (docs/inspect.md).

The top layer: it reads the game registry and plays games through `session.play_game`,
and nothing in the package imports it. inspect_ai (the `inspect` extra) is imported only
by `task.py` and `_registry.py`; `seating.py`, `scoring.py`, `record.py` and
`results.py` are plain Python.
"""
