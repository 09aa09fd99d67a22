"""Self-test of the generic scenario collector (spec/conftest.py).

It runs pytest on a throwaway spec/ tree holding a copy of the real conftest, a trivial
runner and deliberately broken scenario files, and checks that each failure is reported
clearly and names its file, and that a bad file does not stop the good ones.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"

RUNNER = '''
def run(scenario):
    events = [
        {"seq": 1, "type": "game_start", "round": 0, "turn": 0, "actor": None,
         "visibility": "public", "data": {"n": 2}},
        {"seq": 2, "type": "hint", "round": 1, "turn": 1, "actor": None,
         "visibility": [1], "data": {"kind": "tier", "value": "flagship/large"}},
    ]
    return events, {"status": "completed", "placements": {1: 1, 2: 2}}
'''

FILES = {
    "good.yaml": """
name: good
rule: "demo"
then:
  events: [{type: game_start}, {type: hint, visibility: [1], data: {kind: tier}}]
  result: {placements: {1: 1}}
  count: {hint: 1}
""",
    "unknown_key.yaml": """
name: typo
rule: "demo"
thne: {}
then: {count: {hint: 1}}
""",
    "no_then.yaml": """
scenarios:
  - {name: has-no-then, rule: "demo", given: {}}
""",
    "wrong_order.yaml": """
name: wrong-order
rule: "demo"
then:
  events: [{type: hint}, {type: game_start}]
  result: {placements: {2: 1}}
""",
}


def test_collector_reports_bad_files_and_diffs(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    (spec / "demo").mkdir(parents=True)
    shutil.copy(CONFTEST, spec / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (spec / "demo" / "runner.py").write_text(RUNNER, encoding="utf-8")
    for name, text in FILES.items():
        (spec / "demo" / name).write_text(text, encoding="utf-8")

    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "spec", "-p", "no:cacheprovider", "-rA"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    out = proc.stdout + proc.stderr

    assert "1 passed" in out and "3 failed" in out, out
    assert "PASSED spec/demo/good.yaml::good[good]" in out, out
    # malformed files: the message names the file and says what is wrong
    assert "spec/demo/unknown_key.yaml :: unknown_key[typo]: malformed scenario: " \
           "unknown top-level key(s) ['thne']" in out, out
    assert "spec/demo/no_then.yaml :: no_then[has-no-then]: malformed scenario: " \
           "missing required key(s) ['then']" in out, out
    # a real mismatch: the expected list with the missing entry marked, then the events
    assert "✗ NOT FOUND after seq 2" in out, out
    assert "search for [1] started after the last event" in out, out
    assert "placements.2: expected 1, got 2" in out, out
