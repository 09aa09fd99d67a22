"""The CLI's LLM seats live one layer down, in `players/llm_seats.py`, so that the Python
API (`stille_post.play`) builds them the same way without importing the CLI.

This module *is* that one (the same module object), so `stille_post.cli.llm_seats` keeps
working for every importer, and a test that patches a name here patches it there.
"""

import sys
from typing import TYPE_CHECKING

from stille_post.players import llm_seats

if TYPE_CHECKING:  # what a type checker sees here is that module's names
    from stille_post.players.llm_seats import *  # noqa: F403

sys.modules[__name__] = llm_seats
