"""Word embeddings for the semantic bots, loaded offline from the `wordllama` wheel.

wordllama 0.4.x ships its 256-dimension token embeddings (`weights/
l2_supercat_256.safetensors`, 32,000 x 256, fp16) and its tokenizer
(`tokenizers/l2_supercat_tokenizer_config.json`) inside the wheel. Its own
`WordLlama.load()` looks for the tokenizer under `tokenizer/` (not `tokenizers/`) and
then downloads it from a model hub; and importing `wordllama.inference` calls
`logging.basicConfig`. So this module reads the two shipped files itself, with
`tokenizers` and `safetensors` (wordllama's own dependencies), and pools the same way
wordllama does (the mean of the token vectors). Nothing is fetched, ever: a missing
file is an error naming the package.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
DIM = 256


class Embeddings:
    """Unit-length vectors for words and clue texts, cached per word."""

    def __init__(self, matrix: np.ndarray, tokenizer: Any) -> None:
        self.matrix = matrix
        self.tokenizer = tokenizer
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self._cache]
        if missing:
            encs = self.tokenizer.encode_batch(missing, add_special_tokens=False)
            for text, enc in zip(missing, encs, strict=True):
                ids = [i for i in enc.ids if 0 <= i < self.matrix.shape[0]]
                v = self.matrix[ids].mean(axis=0) if ids else np.zeros(DIM, np.float32)
                norm = float(np.linalg.norm(v))
                self._cache[text] = (v / norm if norm > 0 else v).astype(np.float32)
        if not texts:
            return np.zeros((0, self.matrix.shape[1]), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def vector(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


@lru_cache(maxsize=1)
def load() -> Embeddings:
    from safetensors import safe_open
    from tokenizers import Tokenizer

    root = resources.files("wordllama")
    weights, tok = root.joinpath(WEIGHTS), root.joinpath(TOKENIZER)
    if not weights.is_file() or not tok.is_file():
        raise FileNotFoundError("the wordllama wheel lacks its shipped weights or tokenizer "
                                f"({WEIGHTS}, {TOKENIZER}); reinstall wordllama==0.4.0.post1")
    with resources.as_file(weights) as wpath, safe_open(str(wpath), framework="np") as f:
        matrix = np.ascontiguousarray(f.get_tensor("embedding.weight").astype(np.float32))
    with resources.as_file(tok) as tpath:
        tokenizer = Tokenizer.from_file(str(tpath))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return Embeddings(matrix, tokenizer)
