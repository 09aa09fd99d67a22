"""The CLI's LLM seats live one layer down, in `players/llm_seats.py`, so that the Python
API (`stille_post.play`) builds them the same way without importing the CLI.

This module *is* that one (the same module object), so `stille_post.cli.llm_seats` keeps
working for every importer, and a test that patches a name here patches it there.
"""

import sys

from stille_post.players import llm_seats

sys.modules[__name__] = llm_seats
