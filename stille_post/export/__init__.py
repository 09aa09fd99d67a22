"""Games as data: every decision, game and event of a results folder as a table
(`stille-post export`, docs/data.md).

- `run.py` drives one export: the transcripts in (`sources.py`), one table out
  (`writer.py`: Parquet through pyarrow, or JSON Lines), with a manifest that lets a
  re-export add only new games;
- `replay.py` re-plays each game from its header and recorded answers to recover the
  request of every decision through the game's own PromptBook, and checks the re-play
  against the transcript; `records.py` reads the recorded answers;
- `rows.py` builds the rows; `schema.py` declares the tables (pyarrow); `chat.py` turns
  a row back into our `ChatRequest`; `card.py` writes a dataset card.

A generic layer: it reads the registry's game definitions and never names a game.
"""

from stille_post.export.chat import phase_of, reply_of, request_of
from stille_post.export.rows import EXPORT_VERSION, TABLES
from stille_post.export.run import ExportRequest, ExportResult, run_export

__all__ = ["EXPORT_VERSION", "TABLES", "ExportRequest", "ExportResult", "phase_of",
           "reply_of", "request_of", "run_export"]
