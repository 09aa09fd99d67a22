"""The published Elimination Game logs (lechmazur/elimination_game, JSONL) as our
transcripts: `stille-post import elimination logs PATH... --out FOLDER`.

- `lines`: player ids, and one game's lines sorted into rounds and phases;
- `events`: those rounds as this game's events, in the order the engine emits them;
- `convert`: one game's transcript (header, events, result) and the `LOGS` format that
  the generic importer (stille_post/importers/logs.py) drives.
"""
