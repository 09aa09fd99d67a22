"""tests/inspect_tasks needs the `inspect` extra (the test extra includes it)."""

import pytest

pytest.importorskip("inspect_ai")
