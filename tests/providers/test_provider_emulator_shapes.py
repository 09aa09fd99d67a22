"""The emulators are wire-faithful: every JSON field path of an emulated response occurs
in the real recordings of that API (../shared/real-api-cassettes), and the essential
fields of the real responses are all emulated. Compared on the recorded cassettes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.emulators import scenarios as S

REAL = S.ROOT.parent / "shared" / "real-api-cassettes"
# Fields real responses have that the emulated models never produce: extended thinking
# and Gemini 2.0's log-probabilities.
NOT_EMULATED = {"content[].signature", "content[].thinking", "candidates[].avgLogprobs"}
# A documented field that none of the reference recordings happens to show.
DOCUMENTED_ONLY = {"usageMetadata.cachedContentTokenCount"}
DATA_KEYS = ("args", "input", "arguments")  # below these the keys are the model's data


def key_paths(obj: Any, prefix: str = "") -> set[str]:
    out: set[str] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            path = f"{prefix}.{k}" if prefix else k
            out.add(path)
            if k not in DATA_KEYS:
                out |= key_paths(v, path)
    elif isinstance(obj, list):
        for v in obj:
            out |= key_paths(v, prefix + "[]")
    return out


def response_bodies(path: Path) -> list[dict[str, Any]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [json.loads(i["response"]["body"]["string"]) for i in data["interactions"]
            if i["response"]["status"]["code"] == 200]


@pytest.mark.parametrize("api", ["openai", "anthropic", "google"])
def test_emulated_responses_have_the_real_shapes(api: str) -> None:
    if not REAL.exists():
        pytest.skip(f"{REAL} is absent")
    real: set[str] = set()
    for path in sorted((REAL / api).glob("*.yaml")):
        for body in response_bodies(path):
            real |= key_paths(body)
    emulated: set[str] = set()
    for name in ("text_turn", "tool_call_turn", "identity_guess", "game_4seat"):
        path = S.cassette_path(api, name)
        if not path.exists():
            pytest.skip(f"{path} is not recorded")
        for body in response_bodies(path):
            emulated |= key_paths(body)
    assert emulated - real - DOCUMENTED_ONLY == set(), "fields the real API never sends"
    assert real - emulated - NOT_EMULATED == set(), "real fields the emulator lacks"


@pytest.mark.parametrize("api", ["openai", "anthropic", "google"])
def test_emulated_requests_use_the_real_paths_and_method(api: str) -> None:
    real_uris = {yaml.safe_load(p.read_text())["interactions"][0]["request"]["uri"]
                 .split("/models/")[0] for p in (REAL / api).glob("*.yaml")} \
        if REAL.exists() else set()
    data = yaml.safe_load(S.cassette_path(api, "game_4seat").read_text(encoding="utf-8"))
    for i in data["interactions"]:
        assert i["request"]["method"] == "POST"
        if real_uris:
            assert i["request"]["uri"].split("/models/")[0] in real_uris
