"""Importers: games played elsewhere, written as our transcripts and results folders.

- `elimination_logs`: the published Elimination Game logs (lechmazur/elimination_game,
  JSONL) -> `stille-post import elimination-logs PATH... --out FOLDER`.

An imported transcript's header carries `imported_from` (the source format, file and
original game id), so every reader can tell it from a game played here.
"""
