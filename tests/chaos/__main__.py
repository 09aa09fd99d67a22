"""`python -m tests.chaos`: see tests/chaos/run.py."""

import sys

from tests.chaos.run import main

sys.exit(main())
