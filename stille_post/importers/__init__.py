"""Importers: games played elsewhere, written as our transcripts and results folders.

The generic part lives here: `reader` groups JSONL log lines into games, `logs` writes a
resumable results folder. What a format's lines mean is the game's own hook
(`GameDefinition.importers`, a kit `LogFormat`): the published Elimination Game logs are
`stille_post/games/elimination/importer/`, run as
`stille-post import elimination logs PATH... --out FOLDER`.

An imported transcript's header carries `imported_from` (the source format, file and
original game id), so every reader can tell it from a game played here.
"""
